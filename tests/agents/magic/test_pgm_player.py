"""The PGM-aware agent (`pgm`, seed-004 §7) in Chameleon, played through the episode loop on a
scripted model (logic only): its analyses, its belief M and what M decides (the clue target, the
vote), the requests it sends, what it stores; its calls per decision and its options."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from support.pgm_play import (
    Replier,
    asked,
    asked_text,
    beliefs_of,
    calls,
    matrices,
    play,
    scripted_model,
    seat,
    votes_of,
)

from stratagem.agents.base import Belief, Decision
from stratagem.agents.magic import texts
from stratagem.agents.magic.analysis_parse import parse_chameleon_analysis
from stratagem.agents.magic.belief import chameleon_vote, init_chameleon, update
from stratagem.agents.magic.pgm_player import PgmOptions, calls_per_decision
from stratagem.agents.registry import get_architecture
from stratagem.errors import StratagemError
from stratagem.games.catalog import get_game
from stratagem.llm.types import Request


@pytest.fixture
def model() -> Iterator[list[Replier]]:
    yield from scripted_model()


# -- Chameleon (setting 0: the chameleon is Player 3) ----------------------------------------------

VIEW = {
    0: "As Player 1,\nI think:\nPlayer 2 is more suspicious, because its clue is vague.\n"
    "Player 3 is no change, because it has not spoken.\n"
    "I think now Player 2 thinks:\nPlayer 1 is less suspicious, because x\n"
    "Player 3 is no change, because y",
    1: "As Player 2,\nI think:\nPlayer 1 is more suspicious, because x\n"
    "Player 3 is more suspicious, because y",
    2: "I think now Player 1 thinks:\nPlayer 2 is more suspicious, because x\n"
    "I think now Player 2 thinks:\nPlayer 1 is more suspicious, because y",
}


def chameleon(view: Callable[[int, int], str] = lambda s, n: VIEW[s]) -> Replier:
    """Analyses by `view(seat, clues so far)`, plain clues, text votes for Player 3 (or 1)."""

    def reply(request: Request) -> str:
        question, me = asked(request), seat(request)
        if (
            "evaluate who is more suspicious" in question
            or "deduce the secret code based" in question
        ):
            clues = sum(m.content.count("It is a fruit") for m in request.messages)
            return view(me, clues)
        if question.startswith("Now you speak") and "Now vote" in request.messages[-1].content:
            return "I vote for Player 1." if me == 2 else "I vote for Player 3."
        if "guess the code" in request.messages[-1].content:
            return 'I guess the code is "Apple"'
        return f"It is a fruit, says seat {me}."

    return reply


def test_the_chameleon_vote_is_the_belief_argmax_not_a_contradicting_text(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = chameleon()
    store, episode = play(tmp_path, "chameleon/0", ["pgm", "pgm", "magic"])
    votes = votes_of(store, episode)
    # Seat 0 said "Player 3" but its belief points at Player 2 (its view F made it so).
    m = init_chameleon(0, False)
    for _ in range(3):
        m = update(m, parse_chameleon_analysis(VIEW[0], 0).matrix)
    assert chameleon_vote(m, 0, False, allowed=[1, 2]) == 1
    assert votes[0] == 1
    # The text vote was still asked (and answered "Player 3"): one call for the vote.
    vote_calls = [c for c in calls(store, episode, "decision") if c.player == 0][1:]
    assert [c.text for c in vote_calls] == ["I vote for Player 3."]
    notes = {e.player: e.data for e in store.events(episode, "pgm-vote")}
    assert notes[0] == {"belief": 1, "text": 2, "row": pytest.approx(m[0].tolist())}
    assert set(notes) == {0, 1}
    assert votes[2] == 0  # the magic seat plays its text


def test_without_the_text_vote_the_belief_vote_costs_no_call(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = chameleon()
    store, episode = play(tmp_path, "chameleon/0", ["pgm", "magic", "magic"], {"text_vote": False})
    assert [c.request["purpose"] for c in calls(store, episode) if c.player == 0] == [
        "decision", "pgm-analysis", "pgm-analysis", "pgm-analysis",
    ]  # fmt: skip
    assert votes_of(store, episode)[0] == 1
    (note,) = store.events(episode, "pgm-vote")
    assert (note.data["belief"], note.data["text"]) == (1, None)


def test_vote_by_belief_off_plays_the_text_vote(tmp_path: Path, model: list[Replier]) -> None:
    model[0] = chameleon()
    store, episode = play(
        tmp_path, "chameleon/0", ["pgm", "magic", "magic"], {"vote_by_belief": False}
    )
    assert votes_of(store, episode)[0] == 2


def test_m_follows_belief_update_on_each_parsed_factor_and_is_stored_per_analysis(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = chameleon()
    store, episode = play(tmp_path, "chameleon/0", ["pgm", "magic", "pgm"], {"factor_scale": 0.3})
    for me, spy in ((0, False), (2, True)):
        answers = [a for a in store.answers(episode) if a.player == me]
        assert [a.question_id for a in answers] == [
            f"pgm-analysis@after_clue:{k}" for k in range(3)
        ]
        factors = matrices(beliefs_of(store, episode, me, "factor"))
        beliefs = matrices(beliefs_of(store, episode, me, "belief"))
        m = init_chameleon(me, spy)
        for answer in answers:
            f = parse_chameleon_analysis(answer.answer or "", me).matrix
            assert json.loads(answer.parsed["value"]) == f.tolist()
            np.testing.assert_array_equal(factors[answer.question_id], f)
            m = update(m, f, 0.3)
            np.testing.assert_allclose(beliefs[answer.question_id], m)
        rows = [b for b in store.beliefs(episode) if b.player == me]
        assert len(rows) == 3 * 6  # per analysis: F and M, a row each per perspective
        assert {(b.order, b.about_player) for b in rows if b.content["perspective"] == me} == {
            (1, None)
        }
        assert {(b.order, b.about_player) for b in rows if b.content["perspective"] != me} == {
            (2, p) for p in range(3) if p != me
        }


def test_an_unparsable_analysis_is_recorded_invalid_and_leaves_m_unchanged(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = chameleon(lambda s, n: "I am not sure what to say." if n == 2 else VIEW[s])
    store, episode = play(tmp_path, "chameleon/0", ["pgm", "magic", "magic"])
    answers = {a.question_id: a for a in store.answers(episode) if a.player == 0}
    bad = answers["pgm-analysis@after_clue:1"]
    assert bad.parsed == {"value": None, "relevant": False}
    # Asked, re-asked once (max_reasks 1), then given up: no factor, M as before.
    assert len(calls(store, episode, "pgm-analysis:reask")) == 1
    factors = matrices(beliefs_of(store, episode, 0, "factor"))
    assert "pgm-analysis@after_clue:1" not in factors
    beliefs = matrices(beliefs_of(store, episode, 0, "belief"))
    np.testing.assert_array_equal(
        beliefs["pgm-analysis@after_clue:1"], beliefs["pgm-analysis@after_clue:0"]
    )
    invalid = [b for b in beliefs_of(store, episode, 0, "belief") if not b.content["valid"]]
    assert {b.content["analysis"] for b in invalid} == {"pgm-analysis@after_clue:1"}


def test_the_clue_prompt_names_the_belief_target_and_carries_only_the_latest_analysis(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = chameleon(lambda s, n: VIEW[s] + f"\n(analysis {n})")
    store, episode = play(tmp_path, "chameleon/0", ["magic", "magic", "pgm"])
    clue = next(c for c in calls(store, episode, "decision") if c.player == 2)
    messages = clue.request["messages"]
    # The chameleon targets whom its belief says suspects it least (the initial tie: seat 0).
    assert "defraud trust from the Player 1" in messages[-1]["content"]
    assert texts.text("chameleon_clue_demo_chameleon") in messages[0]["content"]
    injected = [m["content"] for m in messages if m["role"] == "assistant"]
    assert injected == [VIEW[2] + "\n(analysis 2)"]  # after 2 clues: the second analysis only
    view = next(c for c in calls(store, episode, "pgm-analysis") if c.player == 2)
    assert texts.text("chameleon_view_demo_chameleon") in view.request["messages"][0]["content"]
    vote = [c for c in calls(store, episode, "decision") if c.player == 2][1]
    assert not [m for m in vote.request["messages"] if "(analysis" in m["content"]]


@pytest.mark.parametrize(("ties", "target"), [("code", "Player 3"), ("lowest", "Player 2")])
def test_the_first_clue_target_follows_the_tie_rule(
    tmp_path: Path, model: list[Replier], ties: str, target: str
) -> None:
    """A non-chameleon's column starts [0, 1/3, 1/3]: the code's argsort picks the higher seat."""
    model[0] = chameleon()
    store, episode = play(tmp_path, "chameleon/0", ["pgm", "magic", "magic"], {"ties": ties})
    clue = next(c for c in calls(store, episode, "decision") if c.player == 0)
    assert asked_text(clue).endswith(
        texts.render("chameleon_clue_non_chameleon", player="Player 1", target_player=target)
    )


@pytest.mark.parametrize(("options", "vote"), [({}, 0), ({"code_compat": True}, 2)])
def test_a_tied_belief_row_votes_the_first_seat_in_the_paper_and_the_last_in_the_code(
    tmp_path: Path, model: list[Replier], options: dict[str, bool], vote: int
) -> None:
    """Issue 24 item 2: Player 2's view raises Players 1 and 3 alike, so its own row stays tied
    between them. seed-004 §7.2's argmax takes the first (Player 1); the code's `argsort()[-1]`,
    played with `code_compat`, the last (Player 3)."""
    model[0] = chameleon()
    store, episode = play(tmp_path, "chameleon/0", ["magic", "pgm", "magic"], options)
    (note,) = store.events(episode, "pgm-vote")
    row = note.data["row"]
    assert row[0] == row[2] > row[1]
    assert note.data["belief"] == vote and votes_of(store, episode)[1] == vote
    assert PgmOptions(**options).tie_rule == ("code" if options else "lowest")
    assert PgmOptions(ties="code").tie_rule == "code"
    assert PgmOptions(code_compat=True, ties="lowest").tie_rule == "lowest"


SELF_SUSPECT = (
    "As Player 1,\nI think:\nPlayer 1 is more suspicious, because x\n"
    "Player 2 is less suspicious, because y\nPlayer 3 is less suspicious, because z"
)


@pytest.mark.parametrize(("self_votes", "vote"), [("count", 0), ("refuse", 1)])
def test_a_non_chameleon_pgm_seat_may_vote_for_itself_where_the_game_counts_it(
    tmp_path: Path, model: list[Replier], self_votes: str, vote: int
) -> None:
    """Issue 24 item 10, seed-004 §7.2: only the chameleon skips itself. Player 1 (not the
    chameleon) suspects itself in each of its 3 analyses, so its own row peaks on itself: it
    votes for itself where the game counts self-votes, and for the best other seat (a tie, the
    first: Player 2) where the game refuses them."""
    model[0] = chameleon(lambda s, n: SELF_SUSPECT if s == 0 else VIEW[s])
    store, episode = play(
        tmp_path,
        "chameleon/0",
        ["pgm", "magic", "magic"],
        game_options={"chameleon": {"self_votes": self_votes}},
    )
    m = init_chameleon(0, False)
    for _ in range(3):
        m = update(m, parse_chameleon_analysis(SELF_SUSPECT, 0).matrix)
    assert int(np.argmax(m[0])) == 0
    (note,) = store.events(episode, "pgm-vote")
    assert note.data["row"] == pytest.approx(m[0].tolist())
    assert note.data["belief"] == vote and votes_of(store, episode)[0] == vote


def test_the_matrix_analysis_becomes_the_belief(tmp_path: Path, model: list[Replier]) -> None:
    matrix = "[[0.1, 0.6, 0.3], [0.5, 0.2, 0.3], [2, 1, 1]]"
    model[0] = chameleon(lambda s, n: "not a matrix" if n == 1 else f"My view: {matrix}")
    store, episode = play(
        tmp_path, "chameleon/0", ["pgm", "magic", "magic"], {"analysis": "matrix"}
    )
    view = calls(store, episode, "pgm-analysis")[0]
    assert "3x3 matrix" in asked_text(view)
    beliefs = matrices(beliefs_of(store, episode, 0, "belief"))
    expected = np.array([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3], [0.5, 0.25, 0.25]])
    np.testing.assert_allclose(beliefs["pgm-analysis@after_clue:2"], expected)
    assert not beliefs_of(store, episode, 0, "factor")
    assert votes_of(store, episode)[0] == 1


# -- calls per decision, options, registration ---------------------------------------------------


def test_calls_per_decision_are_what_a_seat_spends_at_most(
    tmp_path: Path, model: list[Replier]
) -> None:
    architecture = get_architecture("pgm")
    first, npd3 = get_game("chameleon/0"), get_game("npd3/0")
    assert architecture.calls(SimpleNamespace(options={}), first) == 5.5
    assert architecture.calls(SimpleNamespace(options={"probes": False}), first) == 2.5
    assert architecture.calls(SimpleNamespace(options={}), npd3) == 1.8
    assert calls_per_decision(PgmOptions()) == 5.5
    assert calls_per_decision(PgmOptions(probes=False)) == pytest.approx(11 / 3)
    assert calls_per_decision(PgmOptions(probes=False, text_vote=False)) == pytest.approx(11 / 3)
    assert calls_per_decision(PgmOptions(text_vote=False)) == 5.0
    model[0] = chameleon()
    store, episode = play(tmp_path, "chameleon/0", ["pgm", "magic", "magic"], {"probes": True})
    spent = [
        c
        for c in calls(store, episode)
        if c.player == 0 and not c.request["purpose"].endswith("reask")
    ]
    assert len(spent) / 2 == 5.5  # 2 decisions: 3 analyses, clue, text vote, 6 probes


def test_the_options_are_checked_and_the_games_known() -> None:
    architecture = get_architecture("pgm")
    architecture.check_options({"analysis": "matrix", "ties": "lowest", "code_quirks": True})
    with pytest.raises(StratagemError, match=r"options\.analysis"):
        architecture.check_options({"analysis": "probability"})
    with pytest.raises(StratagemError, match=r"options\.factor_scale"):
        architecture.check_options({"factor_scale": -1})


def test_beliefs_travel_on_decisions_and_answers() -> None:
    belief = Belief(2, {"kind": "belief", "row": [0.5, 0.5, 0.0]}, about_player=1)
    decision = Decision("x", beliefs=(belief,))
    assert list(decision.to_json()["beliefs"]) == [
        {"order": 2, "content": {"kind": "belief", "row": [0.5, 0.5, 0.0]},
         "about_player": 1, "score": None}
    ]  # fmt: skip
