"""The metric probes of seed-004 §6.1: schedule, texts, and the answer parsers (§6.3, §6.5)."""

from __future__ import annotations

import pytest

from stratagem.agents.magic.probes import (
    parse_belief_answer,
    parse_self_identification,
    probe_text,
    probes_due,
)


def test_chameleon_schedule() -> None:
    # consistency before each of the 3 clues, belief after each
    schedule = [
        (moment, i, probes_due("chameleon", moment, i))
        for i in range(3)
        for moment in ("before_clue", "after_clue")
    ]
    assert [kinds for _, _, kinds in schedule] == [("consistency",), ("belief",)] * 3


def test_undercover_schedule() -> None:
    # after each full round (2 rounds of 3 clues): consistency, then belief
    after = [probes_due("undercover", "after_clue", i) for i in range(6)]
    assert after == [(), (), ("consistency", "belief"), (), (), ("consistency", "belief")]
    assert all(probes_due("undercover", "before_clue", i) == () for i in range(6))
    with pytest.raises(ValueError):
        probes_due("undercover", "after_clue", -1)


def test_chameleon_probe_texts() -> None:
    consistency = probe_text("chameleon", "consistency", 0)
    assert consistency.startswith("Tell me which Player you are and what is your role")
    non = probe_text("chameleon", "belief", 1, role="non-chameleon")
    assert non.startswith("Player 2, based on the all the given clues, evaluate who is more ")
    assert "\nAs Player 2,\nI think:\nPlayer xx is ..., because ...\n" in non
    cham = probe_text("chameleon", "belief", 1, role="chameleon")
    assert cham.startswith("Player 2, deduce the secret code from all other players' clues")
    with pytest.raises(ValueError):
        probe_text("chameleon", "belief", 1)


def test_undercover_probe_texts() -> None:
    assert probe_text("undercover", "consistency", 2) == (
        "Please answer the following questions.\nTell me which Player you are and whether you "
        "are the undercover according to all the above clues. If you cannot decide please answer "
        'with not sure. Please answer with the template "I am Player xx, my role is '
        'undercover/non-undercover/not sure, because..."'
    )
    belief = probe_text("undercover", "belief", 1)
    assert belief == (
        "Please answer the following questions.\n"
        "1. Guess who is more possible to be the undercover from your own perspective. (hint: use "
        "the format, I think Player xx is undercover, because...)\n"
        "2. Now try to guess now who Player 1 thinks is the undercover. (hint: use the fomat, I "
        "think Player 1 thinks Player xx is undercover, because...)\n"
        "3. Now try to guess now who Player 3 thinks is the undercover. (hint: use the fomat, I "
        "think Player 3 thinks Player xx is undercover, because...)\n"
    )


def test_self_identification() -> None:
    answer = parse_self_identification("I am Player 2, my role is the non-chameleon.")
    assert (answer.player, answer.role, answer.seat()) == ("Player 2", "non-chameleon", 1)
    assert answer.correct(1, "non-chameleon")
    assert not answer.correct(0, "non-chameleon") and not answer.correct(1, "chameleon")
    unsure = parse_self_identification("I am Player 3, my role is not sure, because...")
    assert unsure.role == "not sure" and not unsure.correct(2, "undercover")
    undercover = parse_self_identification("I am Player 1, my role is undercover, because my...")
    assert undercover.correct(0, "undercover")


def test_self_identification_follows_the_codes_patterns() -> None:
    # Case-sensitive, as the metric's code: no parse, so never correct.
    lower = parse_self_identification("i am player 2, my role is chameleon")
    assert lower.player is None and lower.seat() is None and not lower.correct(1, "chameleon")
    # The role runs to the first character outside [ \w|-]: a trailing clause spoils it.
    long = parse_self_identification("I am Player 1, my role is a chameleon because I know")
    assert long.role == "chameleon because i know" and not long.correct(0, "chameleon")
    assert parse_self_identification("no template at all").role is None


def test_belief_answers_dispatch() -> None:
    cham = parse_belief_answer("chameleon", "Player 2 is more suspicious", respondent=0)
    assert cham.factor[0] == (0, 1, 0)
    under = parse_belief_answer("undercover", "1. I think Player 2 is undercover", respondent=0)
    assert under.factor[0] == (0, 1, 0)
    quirk = parse_belief_answer("undercover", "I think Player 2 is not it", 0, code_compat=True)
    assert quirk.factor[0] == (0, 1, 0)
