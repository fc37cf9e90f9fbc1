"""The PGM-aware agent (`pgm`, seed-004 §7.3) in Undercover and the game-theory games, played
through the episode loop on a scripted model (logic only): the two-call Undercover analyses and
the clue prompt its diagnosis picks; the PGM prompts of Cost Sharing, the PD and Public Good."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support.pgm_play import (
    Replier,
    asked,
    asked_text,
    beliefs_of,
    calls,
    decision_requests,
    matrices,
    play,
    scripted_model,
    seat,
)

from stratagem.agents.magic import texts
from stratagem.agents.magic.belief import init_undercover, update
from stratagem.llm.types import Request


@pytest.fixture
def model() -> Iterator[list[Replier]]:
    yield from scripted_model()


# -- Undercover (setting 0: the undercover is Player 1) --------------------------------------------


def undercover(diagnosis: str = "No, I am not the undercover.", suspect: int = 1) -> Replier:
    """Single-history analyses (a diagnosis, then follow-ups naming Player `suspect + 1`)."""

    def reply(request: Request) -> str:
        if len(request.messages) == 1:
            text = request.messages[0].content
            if "what role do you think you are" in text:
                return diagnosis
            return f"I think Player {suspect + 1} is undercover, because x."
        if "Now vote" in request.messages[-1].content:
            return "I vote for Player 2." if seat(request) != 1 else "I vote for Player 1."
        return "My clue is: it makes a sound."

    return reply


def test_an_undercover_analysis_is_two_calls_without_system_prompt_or_history(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = undercover()
    store, episode = play(tmp_path, "undercover/0", ["magic", "magic", "pgm"])
    analyses = [a.question_id for a in store.answers(episode) if a.player == 2]
    assert analyses == [
        f"pgm-analysis@{when}{part}"
        for when in ("before_clue:2", "after_clue:2", "before_clue:5", "after_clue:5")
        for part in ("/diagnosis", "")
    ]
    for call in calls(store, episode, "pgm-analysis"):
        (only,) = call.request["messages"]
        assert only["role"] == "user" and only["content"].startswith("You are playing undercover")
        assert call.request["max_tokens"] == 256
    first, second = calls(store, episode, "pgm-analysis")[:2]
    assert "Round 0\nPlayer 1: My clue is" in first.request["messages"][0]["content"]
    assert "I will try to a more specific clue" in second.request["messages"][0]["content"]


def test_the_undercover_diagnosis_picks_the_clue_prompt(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = undercover(suspect=1)
    store, episode = play(tmp_path, "undercover/0", ["magic", "magic", "pgm"])
    clue = next(c for c in calls(store, episode, "decision") if c.player == 2)
    # The follow-up named Player 2: M's own row now points there, so "no", target Player 2.
    assert asked_text(clue).endswith(
        texts.render("undercover_clue_no", player="Player 3", target_player="Player 2")
    )
    injected = [m["content"] for m in clue.request["messages"] if m["role"] == "assistant"]
    assert injected == ["No, I am not the undercover.\nI think Player 2 is undercover, because x."]
    # The analysis made before the clue is stored with the clue's step: F and M rows.
    before = [b for b in store.beliefs(episode) if b.content["analysis"].endswith("before_clue:2")]
    assert len(before) == 6 and {b.round for b in before} == {1}


def test_the_undercover_text_diagnosis_picks_the_prompt_with_the_code_rule(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = undercover(diagnosis="Yes, I am the undercover.", suspect=0)
    store, episode = play(
        tmp_path, "undercover/0", ["magic", "magic", "pgm"], {"undercover_clue": "text"}
    )
    clue = next(c for c in calls(store, episode, "decision") if c.player == 2)
    assert asked_text(clue).endswith(texts.render("undercover_clue_yes", player="Player 3"))
    followup = calls(store, episode, "pgm-analysis")[1]
    assert "you think you are undercover" in asked_text(followup)


def test_an_unreadable_self_diagnosis_is_taken_as_not_sure_and_stored_as_unread(
    tmp_path: Path, model: list[Replier], caplog: pytest.LogCaptureFixture
) -> None:
    """Stored as an answer without a value (the run's summary counts those), never a log line
    on stderr while the run plays."""
    model[0] = undercover(diagnosis="Hmm, the clues are about sounds.")
    with caplog.at_level("WARNING"):
        store, episode = play(tmp_path, "undercover/0", ["magic", "magic", "pgm"])
    answer = next(a for a in store.answers(episode) if a.question_id.endswith("/diagnosis"))
    assert answer.parsed == {"value": None, "relevant": False}
    assert caplog.text == ""
    followup = calls(store, episode, "pgm-analysis")[1]
    assert "2. You are Player 3" in asked_text(followup)
    assert "I will try to a more specific clue" not in asked_text(followup)  # not "no"
    m = update(init_undercover(), [[0, 0, 0], [0, 0, 0], [0, 1, 0]])
    beliefs = matrices(beliefs_of(store, episode, 2, "belief"))
    np.testing.assert_allclose(beliefs["pgm-analysis@before_clue:2"], m)


def test_the_first_speaker_gets_no_analysis_before_its_clue(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = undercover()
    store, episode = play(tmp_path, "undercover/0", ["pgm", "magic", "magic"])
    whens = {a.question_id.split("@")[1].split("/")[0] for a in store.answers(episode)}
    assert whens == {"after_clue:2", "after_clue:5"}
    first = next(c for c in calls(store, episode, "decision") if c.player == 0)
    assert asked_text(first).endswith(texts.render("undercover_clue_not_sure", player="Player 1"))


# -- the game-theory games -----------------------------------------------------------------------


def dilemma(request: Request) -> str:
    if len(request.messages) > 1 and "analyze" in asked(request):
        return f"In my opinion: As Player {seat(request) + 1}, I think the others will defect."
    return "Defect"


def good(request: Request) -> str:
    if "analyze" in asked(request):
        return "In my opinion: they will reduce."
    return "I contribute 10"


@pytest.mark.parametrize(("game", "replier", "first", "pgm", "analysis"), [
    ("npd3/0", dilemma, 'You must reply with "Cooperate" or "Defect"', "prisoner_pgm_decision",
     "In my opinion: As Player 3, I think the others will defect."),
    ("public-good/0", good, texts.text("public_good_decision_command"),
     "public_good_pgm_decision", "In my opinion: they will reduce."),
])  # fmt: skip
def test_pd_and_pg_decisions_use_the_pgm_decision_prompt_from_round_2(
    tmp_path: Path,
    model: list[Replier],
    game: str,
    replier: Replier,
    first: str,
    pgm: str,
    analysis: str,
) -> None:
    model[0] = replier
    store, episode = play(tmp_path, game, ["pgm", "magic", "pgm"])
    for player in (0, 2):
        requests = decision_requests(store, episode, player)
        assert len(requests) == 5
        assert requests[0].endswith(first)
        assert all(r.endswith(texts.text(pgm)) for r in requests[1:])
        whens = [a.question_id for a in store.answers(episode) if a.player == player]
        assert whens == [f"pgm-analysis@after_round:{r}" for r in range(1, 5)]
    # The latest analysis goes back into the next decision; 256 tokens for every PGM call.
    third = [c for c in calls(store, episode, "decision") if c.player == 2][2]
    own = [m["content"] for m in third.request["messages"] if m["role"] == "assistant"]
    assert own == [analysis]
    assert {c.request["max_tokens"] for c in calls(store, episode) if c.player in (0, 2)} == {256}
    magic = decision_requests(store, episode, 1)
    assert magic[1] == magic[0] and texts.text(pgm) not in magic[1]
    # A PGM decision keeps to the move's template as a magic seat's does (constrain is on).
    pgm_choices = {tuple(c.request["choices"]) for c in calls(store, episode, "decision")
                   if c.player in (0, 2)}  # fmt: skip
    magic_choices = {tuple(c.request["choices"]) for c in calls(store, episode, "decision")
                     if c.player == 1}  # fmt: skip
    assert pgm_choices == magic_choices and all(pgm_choices)


def test_code_quirks_ask_seats_2_and_3_with_the_pgm_decision_prompt_in_round_1(
    tmp_path: Path, model: list[Replier]
) -> None:
    model[0] = dilemma
    store, episode = play(tmp_path, "npd3/0", ["pgm", "pgm", "pgm"], {"code_quirks": True})
    pgm = texts.text("prisoner_pgm_decision")
    assert not decision_requests(store, episode, 0)[0].endswith(pgm)
    assert all(decision_requests(store, episode, p)[0].endswith(pgm) for p in (1, 2))
    system = calls(store, episode, "decision")[1].request["messages"][0]["content"]
    assert "You play as Player 1." in system  # the code's role description, for every seat


def cost_sharing(request: Request) -> str:
    """Proposals that never agree: each seat asks 40% of itself and votes for itself."""
    me = seat(request)
    if "analyze" in asked(request):
        return f"As Player {me + 1}, I think the others will stick to their proposals."
    moderator = request.messages[-1].content.rsplit("[Moderator]: ", 1)[-1]
    if moderator.startswith("Now vote"):
        return f"I vote for Player {me + 1}'s proposal"
    shares = ["30", "30", "30"]
    shares[me] = "40"
    return (
        f"As Player {me + 1}, representing Airline {'ABC'[me]}, I propose the following cost "
        f"distribution:\nAirline A: {shares[0]}%\nAirline B: {shares[1]}%\nAirline C: {shares[2]}%"
    )


@pytest.mark.parametrize("quirks", [False, True])
def test_cost_sharing_analyses_after_failed_rounds_and_asks_the_pgm_decision(
    tmp_path: Path, model: list[Replier], quirks: bool
) -> None:
    model[0] = cost_sharing
    options = {"code_quirks": quirks}
    store, episode = play(tmp_path, "cost-sharing/0", ["pgm", "pgm", "magic"], options)
    pgm = texts.text("airport_fee_pgm_decision")
    negotiate = texts.text("airport_fee_negotiate")
    for player in (0, 1):
        whens = [a.question_id for a in store.answers(episode) if a.player == player]
        assert whens == [f"pgm-analysis@after_round:{r}" for r in range(1, 5)]
        mine = [c for c in calls(store, episode, "decision") if c.player == player]
        proposals, votes = mine[0::2], mine[1::2]
        assert len(proposals) == len(votes) == 5
        assert asked_text(proposals[0]).endswith(negotiate)
        pgm_seat = player == 0 or not quirks
        assert all(asked_text(c).endswith(pgm if pgm_seat else negotiate) for c in proposals[1:])
        analysis = f"As Player {player + 1}, I think the others will stick to their proposals."
        assert all(analysis in str(c.request["messages"]) for c in proposals[1:])
        assert not any(analysis in str(c.request["messages"]) for c in votes)


def test_undercover_calls_per_decision(tmp_path: Path, model: list[Replier]) -> None:
    model[0] = undercover()
    store, episode = play(tmp_path, "undercover/0", ["magic", "magic", "pgm"], {"probes": True})
    spent = [
        c
        for c in calls(store, episode)
        if c.player == 2 and not c.request["purpose"].endswith("reask")
    ]
    assert len(spent) / 3 == 5.0  # 3 decisions: 4 analyses of 2 calls, 2 clues, vote, 4 probes
