"""Votes and decisions (seed-004 §2, §3.4, §3.5): the strict default and the code's readings."""

from __future__ import annotations

import asyncio

import pytest

from stratagem.agents.magic.vote_parse import (
    ContributionParser,
    CooperateDefectParser,
    VoteParser,
    contribution_code,
    contribution_pgm_code,
    cost_sharing_vote_code,
    cost_sharing_vote_pgm_code,
    prisoner_decision_code,
    social_vote_code,
    strict_contribution,
    strict_cooperate_defect,
    strict_vote,
)
from stratagem.agents.parsing import ParseError, decide_with_reasks
from stratagem.games.magic.undercover import UndercoverGame, UndercoverState
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message, Request, Response, Usage

OTHERS_OF_2 = ("Player 1", "Player 3")
ADVERSARIAL = "I vote for Player 3 because Player 1 gave a very specific clue."


def test_social_vote_code_takes_the_first_name_in_seat_order() -> None:
    assert social_vote_code(ADVERSARIAL) == "Player 1"
    assert social_vote_code("my vote: PLAYER3") == "Player 3"
    assert social_vote_code("vote player_2") == "Player 2"
    assert social_vote_code("nobody") is None


def test_strict_vote_takes_the_name_after_i_vote_for() -> None:
    assert strict_vote(ADVERSARIAL, OTHERS_OF_2) == "Player 3"
    assert strict_vote("i vote for player3.", OTHERS_OF_2) == "Player 3"
    assert strict_vote("I vote for Player 1. Again: I vote for Player 1.", OTHERS_OF_2) == (
        "Player 1"
    )
    assert strict_vote("I vote for Player 3's proposal", ("Player 1", "Player 2", "Player 3")) == (
        "Player 3"
    )


@pytest.mark.parametrize(
    ("reply", "hint"),
    [
        ("Player 3 is the chameleon.", 'use the template "I vote for Player xx."'),
        ("I vote for Player 2.", "you cannot vote for Player 2"),
        ("I vote for Player 1. No, I vote for Player 3.", "you voted for Player 1 and Player 3"),
        ("I vote for Player 7.", "you cannot vote for Player 7"),
        ("", 'use the template "I vote for Player xx."'),
    ],
)
def test_strict_vote_refuses_with_a_hint(reply: str, hint: str) -> None:
    with pytest.raises(ParseError, match=hint):
        strict_vote(reply, OTHERS_OF_2)


def test_cost_sharing_code_readings() -> None:
    assert cost_sharing_vote_code("I vote for Player 2's proposal") == "Player 2"
    assert cost_sharing_vote_code("i vote for Player 2") is None  # case-sensitive
    assert cost_sharing_vote_pgm_code("As Player 3, I agree with Player 1") == "Player 3"


def test_prisoners_dilemma_readings() -> None:
    assert prisoner_decision_code("I will not cooperate.") == "cooperate"
    assert prisoner_decision_code("zzz") == "defect"
    assert prisoner_decision_code("COOPERATE", ("C", "D")) == "C"
    labels = ("cooperate", "defect")
    assert strict_cooperate_defect("Defect.", labels) == "defect"
    assert strict_cooperate_defect("I choose to COOPERATE", labels) == "cooperate"
    with pytest.raises(ParseError, match="named both"):
        strict_cooperate_defect("I could cooperate, but I defect.", labels)
    with pytest.raises(ParseError, match="named neither"):
        strict_cooperate_defect("zzz", labels)


def test_public_good_readings() -> None:
    assert contribution_code("As Player 2, I contribute 10.") == 2  # the code's first integer
    assert contribution_code("nothing") is None
    assert contribution_pgm_code("I contribute 15 points") == 15
    assert contribution_pgm_code("I will give 15") == 0
    assert strict_contribution("As Player 2, I contribute 10.", 0, 100) == 10
    assert strict_contribution("i contribute 5. I contribute 5", 0, 100) == 5
    for reply, hint in [
        ("I will give 15", "your reply gave no amount"),
        ("I contribute 5, no, I contribute 6", "2 different amounts"),
        ("I contribute 120", "you cannot contribute 120"),
    ]:
        with pytest.raises(ParseError, match=hint):
            strict_contribution(reply, 0, 100)


def test_parser_wrappers() -> None:
    assert VoteParser().parse(ADVERSARIAL, OTHERS_OF_2) == "Player 3"
    assert VoteParser(code_compat=True).parse(ADVERSARIAL, OTHERS_OF_2) == "Player 1"
    with pytest.raises(ParseError, match="names Player 2"):  # the code counted self-votes
        VoteParser(code_compat=True).parse("I am Player 2; I vote for Player 3", OTHERS_OF_2)
    with pytest.raises(ParseError, match="names no player"):
        VoteParser(code_compat=True).parse("hmm", OTHERS_OF_2)
    legal = ("Player 1", "Player 2", "Player 3")
    assert VoteParser(True, "cost_sharing").parse("I vote for Player 2's proposal", legal) == (
        "Player 2"
    )
    assert VoteParser(True, "cost_sharing_pgm").parse("Player 3's proposal", legal) == "Player 3"
    labels = ("cooperate", "defect")
    assert CooperateDefectParser(code_compat=True).parse("???", labels) == "defect"
    with pytest.raises(ParseError):
        CooperateDefectParser().parse("???", labels)
    assert ContributionParser(0, 100).parse("I contribute 30") == 30
    assert ContributionParser(0, 100, code_compat=True).parse("maybe 30 or 40") == 30
    assert ContributionParser(0, 100, code_compat=True, pgm_env=True).parse("maybe 30") == 0
    with pytest.raises(ParseError, match="no amount"):
        ContributionParser(0, 100, code_compat=True).parse("nothing")


def test_the_codes_reading_of_a_self_vote_stands_where_the_game_counts_self_votes() -> None:
    """Issue 24 item 1: "Player 1 gave a clear clue, so I vote for Player 3." is a vote for
    Player 1 in the code (seed-004 §2), also when Player 1 wrote it."""
    reply = "Player 1 gave a clear clue, so I vote for Player 3."
    counting = clued_undercover(UndercoverGame(self_votes="count"))
    refusing = clued_undercover(UndercoverGame())
    for voter in range(3):
        labels = counting.legal(voter).labels
        assert VoteParser(code_compat=True).parse(reply, labels) == "Player 1"
        assert VoteParser().parse(reply, labels) == "Player 3"
    with pytest.raises(ParseError, match="names Player 1"):
        VoteParser(code_compat=True).parse(reply, refusing.legal(0).labels)
    assert VoteParser(code_compat=True).parse(reply, refusing.legal(1).labels) == "Player 1"


def clued_undercover(game: UndercoverGame) -> UndercoverState:
    state = game.initial_state()
    while state.phase == "clue":
        state, _ = state.apply({state.to_act()[0]: "a clue"})
    return state


class Scripted:
    model = "fake/scripted"

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies

    async def generate(self, request: Request, context: CallContext) -> list[Response]:
        return [Response(self.replies.pop(0), usage=Usage(1, 1))]


def test_strict_vote_in_the_houses_reask_loop() -> None:
    client = Scripted(["Player 3 is suspicious.", "I vote for Player 2.", "I vote for Player 3."])
    decision = asyncio.run(
        decide_with_reasks(
            client, [Message("user", "vote")], {}, VoteParser(), OTHERS_OF_2, 4, CallContext()
        )
    )
    assert (decision.action, decision.valid, decision.attempts) == ("Player 3", True, 3)
    client = Scripted(["no idea"] * 2)
    decision = asyncio.run(
        decide_with_reasks(
            client, [Message("user", "vote")], {}, VoteParser(), OTHERS_OF_2, 1, CallContext()
        )
    )
    assert (decision.action, decision.valid) == (None, False)
