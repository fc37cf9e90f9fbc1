"""Parsers on the specs' edge cases, the invalid-output policy, and seed-003's merge rule."""

from __future__ import annotations

import pytest

from stratagem.agents import (
    ChoiceParser,
    Decision,
    InvalidPolicy,
    JsonDecisionParser,
    MoveTagParser,
    ParseError,
    merge_messages,
)
from stratagem.agents.parsing import quoted_alternatives
from stratagem.errors import StratagemError
from stratagem.llm.types import Message

RPS = ("rock", "paper", "scissors")
PD = ("cooperation", "defection")
THESIS = ("Cooperate", "Defect")

# seed-003 §3.4 step 3, the verbatim error message for the PD labels.
PD_ERROR = (
    "You may structure your response however you like, but it should contain a move message. "
    "Move messages begin with the tag [move] not containing other tags, which is followed by "
    "your optional explanation in parentheses, and end with a valid move: 'cooperation' or "
    "'defection'. DO NOT INCLUDE THE [move] TAG IN YOUR REASONING, ONLY IN YOUR ACTUAL MOVE "
    "MESSAGE. Nested parentheses or markdown formatting are not allowed.\n"
    "Format: [move] (Optional explanation here) Your move here"
)


# -- [move] tags (seed-003 §3.4) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[move] rock", "rock"),
        ("[move] (they played paper twice) scissors", "scissors"),
        ("I reason first.\n[move] (explanation) paper\nThanks!", "paper"),
        ("[move] rockets", "rock"),  # not word-bounded
        ("[move] Paper", "paper"),  # matched on the lower-cased reply
        ("  [move] scissors  \n", "scissors"),
        ("[move] (I considered paper) rock", "rock"),  # the label after the explanation
        ("[move] rock paper", "rock"),  # the first match wins
    ],
)
def test_move_tag_accepts(text: str, expected: str) -> None:
    assert MoveTagParser().parse(text, RPS) == expected


@pytest.mark.parametrize(
    "text",
    [
        "[move] rock [move] paper",  # two tags
        "[hint] [move] rock",  # a [hint] tag
        "[move] (a (nested) note) rock",  # nested parentheses
        "[x] done\n[move] rock",  # markdown checkbox is a tag too
        "[MOVE] rock",  # the tag check is on the reply as written
        "[move]rock",  # the space is required
        "[move] (note)rock",
        "[move] (note) lizard",
        "rock",
        "",
        "[ERROR] No response generated.",
    ],
)
def test_move_tag_rejects(text: str) -> None:
    with pytest.raises(ParseError):
        MoveTagParser().parse(text, RPS)


def test_move_tag_error_is_verbatim_for_two_and_three_labels() -> None:
    with pytest.raises(ParseError) as pd:
        MoveTagParser().parse("cooperation", PD)
    assert str(pd.value) == PD_ERROR
    with pytest.raises(ParseError) as rps:
        MoveTagParser().parse("[move] lizard", RPS)
    assert "end with a valid move: 'rock', 'paper', or 'scissors'. DO NOT" in str(rps.value)


def test_move_tag_returns_the_label_as_given() -> None:
    assert MoveTagParser().parse("[move] defect", THESIS) == "Defect"


def test_quoted_alternatives() -> None:
    assert quoted_alternatives(["a"]) == "'a'"
    assert quoted_alternatives(["a", "b"]) == "'a' or 'b'"
    assert quoted_alternatives(["a", "b", "c", "d"]) == "'a', 'b', 'c', or 'd'"


# -- the thesis' pseudo-JSON (seed-001 §6.1) -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{'DECISION': 'cooperate'}", "Cooperate"),  # single quotes, lower case (debate log)
        ('{"DECISION": "Defect"}', "Defect"),
        ("{'decision': 'DEFECT'}", "Defect"),
        ("After thinking:\n```json\n{'DECISION': 'Cooperate'}\n```", "Cooperate"),
        ("{'DECISION': Cooperate}", "Cooperate"),  # unquoted value
        ("{'DECISION': 'Defect.'}", "Defect"),
        ("Draft {'DECISION': 'Cooperate'} ... final {'DECISION': 'Defect'}", "Defect"),
        ("{'REASON': 'tit for tat', 'DECISION': 'cooperate'}", "Cooperate"),
        ("DECISION: defect", "Defect"),
    ],
)
def test_json_accepts(text: str, expected: str) -> None:
    assert JsonDecisionParser().parse(text, THESIS) == expected


def test_json_errors_are_precise() -> None:
    parser = JsonDecisionParser()
    with pytest.raises(ParseError, match="it is empty"):
        parser.parse("", THESIS)
    with pytest.raises(ParseError, match=r"no \{'DECISION': \.\.\.\} object"):
        parser.parse("I cooperate", THESIS)
    with pytest.raises(ParseError, match=r"'DECISION' is 'maybe'.*'Cooperate' or 'Defect'"):
        parser.parse("{'DECISION': 'maybe'}", THESIS)
    with pytest.raises(ParseError, match="must be a text"):
        parser.parse('{"DECISION": 1}', THESIS)


def test_json_key_is_configurable() -> None:
    assert JsonDecisionParser(key="ANSWER").parse("{'ANSWER': 'defect'}", THESIS) == "Defect"


# -- constrained replies ---------------------------------------------------------------------------


def test_choice_parser() -> None:
    assert ChoiceParser().parse(" defect\n", THESIS) == "Defect"
    with pytest.raises(ParseError, match="got an empty reply"):
        ChoiceParser().parse("   ", THESIS)
    with pytest.raises(ParseError, match="exactly one of 'Cooperate' or 'Defect'"):
        ChoiceParser().parse("I defect", THESIS)


# -- the invalid-output policy ---------------------------------------------------------------------


def test_invalid_policy_forfeit_and_default() -> None:
    invalid = Decision(action=None, valid=False, attempts=6, error="bad")
    labels = ("cooperate", "defect")
    forfeit = InvalidPolicy.parse("forfeit").apply(invalid, labels)
    assert (forfeit.action, forfeit.valid) == (None, False)
    assert forfeit.extra["invalid_policy"] == "forfeit"
    default = InvalidPolicy.parse("default:Defect").apply(invalid, labels)
    assert (default.action, default.valid) == ("defect", False)
    assert default.extra["invalid_policy"] == "default:Defect"
    valid = Decision(action="cooperate", valid=True, attempts=1)
    assert InvalidPolicy.parse("default:defect").apply(valid, labels) is valid


def test_invalid_policy_errors() -> None:
    with pytest.raises(StratagemError, match="'forfeit' or 'default:<action label>'"):
        InvalidPolicy.parse("random")
    with pytest.raises(StratagemError, match="not an action of this game"):
        InvalidPolicy.parse("default:stag").apply(
            Decision(action=None, valid=False), ("cooperate", "defect")
        )
    assert str(InvalidPolicy.parse(InvalidPolicy("hare"))) == "default:hare"


# -- seed-003 §3.3's merge rule --------------------------------------------------------------------


def test_merge_rule_reproduces_the_spec_example() -> None:
    turns = [
        Message("system", "rules"),
        Message("user", "[hint] Let's play this game. You are playing against a fresh player. "
                "Please make your move.\n"),
        Message("assistant", "[move] paper\n"),
        Message("user", "[hint] Move made. Waiting for the game to end.\n"),
        Message("user", "[hint] You lost the round. You made the move: paper. Your opponent made "
                "the move: scissors.\nYou scored -1 points.\n"),
        Message("user", "[hint] Let's play another round. Please make your move.\n"),
    ]  # fmt: skip
    merged = merge_messages(turns)
    assert [m.role for m in merged] == ["system", "user", "assistant", "user"]
    assert merged[2].content == "[move] paper\n"  # a lone message keeps its tag
    # seed-003 §3.3, verbatim.
    assert merged[3].content == (
        "[hint] Move made. Waiting for the game to end.\n\nYou lost the round. You made the move: "
        "paper. Your opponent made the move: scissors.\nYou scored -1 points.\n\nLet's play "
        "another round. Please make your move.\n"
    )


def test_merge_strips_only_one_leading_tag_and_keeps_other_text() -> None:
    merged = merge_messages(
        [Message("user", "a"), Message("user", "[move] b [hint] c"), Message("user", "no tag")]
    )
    assert merged == [Message("user", "a\nb [hint] c\nno tag")]
    assert merge_messages([]) == []
