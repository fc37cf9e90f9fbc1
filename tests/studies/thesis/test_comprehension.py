"""Scoring of seed-001's comprehension questions (§7): parsers, ground truths, rates."""

from __future__ import annotations

import pytest

from stratagem.studies.thesis.comprehension import (
    COMPREHENSION_COLUMNS,
    QUESTIONS,
    ComprehensionOptions,
    GameFacts,
    comprehension_scores,
    extract_answer,
    judge,
    parse_action,
    parse_bounds,
    parse_number,
    rates,
    truth_q1,
    truth_q2,
    truth_q3,
    truth_q4,
)

# Prisoner's Dilemma in points (seed-001 §4.1): T15 R10 P5 S0, i.e. 0/5/10/15 years.
DILEMMA = (10.0, 0.0, 15.0, 5.0)


def game(agent: str, opponent: str) -> GameFacts:
    """A Dilemma game from the spec's C/D notation, scored for the agent."""
    points = {("C", "C"): 10.0, ("C", "D"): 0.0, ("D", "C"): 15.0, ("D", "D"): 5.0}
    label = {"C": "cooperate", "D": "defect"}
    return GameFacts(
        opponent_actions=tuple(label[o] for o in opponent),
        round_payoffs=tuple(points[(a, o)] for a, o in zip(agent, opponent, strict=True)),
        stage_payoffs=DILEMMA,
    )


# -- parsers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "payload"),
    [
        ("{'ANSWER': 'Defect'}", "Defect"),
        ('{"ANSWER": "Cooperate"}', "Cooperate"),
        ("Let me think... {'answer': 'ANSWER:3'}", "3"),
        ("ANSWER: MAXIMUM:15, MINIMUM:0", "MAXIMUM:15, MINIMUM:0"),
        ("{'ANSWER': 'ANSWER: MAXIMUM:15, MINIMUM:0'}", "MAXIMUM:15, MINIMUM:0"),
        ("{'ANSWER': 15}", "15"),
        ("**{'ANSWER': 'my partner's move: defect'}**", "my partner's move: defect"),
        ("first {'ANSWER': '2'} then {'ANSWER': '3'}", "3"),
        ("Defect", "Defect"),
        ("", None),
        (None, None),
    ],
)
def test_extract_answer(text: str | None, payload: str | None) -> None:
    assert extract_answer(text) == payload


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("{'ANSWER': 'Defect'}", "defect"),
        ("{'ANSWER': 'COOPERATE'}", "cooperate"),
        ("ANSWER: my partner will keep cooperating", "cooperate"),
        ("{'ANSWER': 'defection'}", "defect"),
        ("{'ANSWER': 'cooperate or defect'}", None),  # names both: not an answer
        ("{'ANSWER': 'I cannot know'}", None),
        (None, None),
    ],
)
def test_parse_action(text: str | None, action: str | None) -> None:
    assert parse_action(text) == action


def test_parse_action_uses_the_games_labels() -> None:
    assert parse_action("ANSWER: hare", ("stag", "hare")) == "hare"
    assert parse_action("ANSWER: defect", ("stag", "hare")) is None
    assert parse_action("{'ANSWER': 'Always B'}", ("A", "B")) == "B"


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("{'ANSWER': '3'}", 3.0, 3.0),
        ("ANSWER:25 years", 25.0, 25.0),
        ("{'ANSWER': '3 out of 10'}", 3.0, 10.0),
        ("{'ANSWER': 'five'}", None, None),
        (None, None, None),
    ],
)
def test_parse_number(text: str | None, first: float | None, last: float | None) -> None:
    assert parse_number(text) == first
    assert parse_number(text, "last") == last


@pytest.mark.parametrize(
    ("text", "bounds"),
    [
        ("ANSWER: MAXIMUM:15, MINIMUM:0", (15.0, 0.0)),
        ("{'ANSWER': 'MINIMUM: 0, MAXIMUM: 15'}", (15.0, 0.0)),
        ("{'ANSWER': 'max 15 years, min 0 years'}", (15.0, 0.0)),
        ("{'ANSWER': 'the maximum number of years is 10 and the minimum is 5'}", (10.0, 5.0)),
        ("{'ANSWER': 'MAXIMUM:15'}", (15.0, None)),
        ("{'ANSWER': '15, 0'}", (15.0, 0.0)),  # bare numbers, in the asked order
        ("{'ANSWER': 'no idea'}", (None, None)),
    ],
)
def test_parse_bounds(text: str, bounds: tuple[float | None, float | None]) -> None:
    assert parse_bounds(text) == bounds


def test_bare_q3_numbers_can_be_refused() -> None:
    assert parse_bounds("{'ANSWER': '15, 0'}", "nonrelevant") == (None, None)


def test_questions_are_the_spec_texts() -> None:
    # seed-001 §7, verbatim.
    assert QUESTIONS["Q1"].startswith("What is going to be your partner's next move?")
    assert "ANSWER: MAXIMUM:<MAX>, MINIMUM:<MIN>" in QUESTIONS["Q3"]


# -- ground truths ------------------------------------------------------------------------------


def test_ground_truths() -> None:
    opp = ("cooperate", "defect", "defect")
    assert truth_q1(opp, 1) == "defect"  # after round 1: the opponent's round-2 move
    assert truth_q1(opp, 3) is None  # after the last round there is no next move
    assert truth_q2(4) == 4
    assert truth_q2(4, "t-1") == 3
    assert truth_q3(DILEMMA) == (15.0, 0.0)  # §4.1: 15 / 0 years in every game
    # Agent C, C, D against C, D, D: 10, 0, 5 points = 5, 15, 10 years.
    points = (10.0, 0.0, 5.0)
    assert [truth_q4(points, t, 15.0) for t in (1, 2, 3)] == [5.0, 20.0, 30.0]
    assert truth_q4(points, 2, 15.0, "points") == 10.0
    assert truth_q4((10.0, None), 2, 15.0) is None


# -- judging and rates --------------------------------------------------------------------------


def test_q3_is_judged_relevant_once_and_scored_twice() -> None:
    facts = game("CC", "CC")
    assert judge("Q3", (15.0, 5.0), facts, 1) == ("correct", "incorrect")
    assert judge("Q3", (15.0, None), facts, 1) == ("nonrelevant", "nonrelevant")
    either = ComprehensionOptions(q3_relevance="either")
    assert judge("Q3", (15.0, None), facts, 1, either) == ("correct", "incorrect")


def test_rates_divide_by_the_number_of_rounds() -> None:
    assert rates(["correct", "incorrect", "nonrelevant"], 4) == (0.25, 0.5)  # 1 missing answer
    assert rates([], 0) == (0.0, 0.0)


def perfect_answers(agent: str, opponent: str) -> dict[tuple[str, int], str | None]:
    """What an agent that understands everything answers after each round."""
    facts = game(agent, opponent)
    answers: dict[tuple[str, int], str | None] = {}
    for t in range(1, len(agent) + 1):
        nxt = truth_q1(facts.opponent_actions, t) or "cooperate"  # a guess after the last round
        answers[("Q1", t)] = f"{{'ANSWER': '{nxt.capitalize()}'}}"
        answers[("Q2", t)] = f"{{'ANSWER': '{t}'}}"
        answers[("Q3", t)] = "{'ANSWER': 'ANSWER: MAXIMUM:15, MINIMUM:0'}"
        total = truth_q4(facts.round_payoffs, t, 15.0)
        answers[("Q4", t)] = f"{{'ANSWER': '{total:g}'}}"
    return answers


def test_a_perfect_agent_cannot_get_q1_right_in_the_last_round() -> None:
    # seed-001 §7 [CHECKED]: CR1 <= (N-1)/N; the denominator stays N.
    scores = comprehension_scores(perfect_answers("CDCD", "CCDD"), game("CDCD", "CCDD"))
    assert list(scores) == list(COMPREHENSION_COLUMNS)
    assert scores["CR1"] == 0.75
    assert scores["MR1"] == 0.0
    for column in ("CR2", "CR3M", "CR3m", "CR4"):
        assert scores[column] == 1.0
    for column in ("MR2", "MR3M", "MR3m", "MR4"):
        assert scores[column] == 0.0


def test_a_mixed_game() -> None:
    facts = game("CCDD", "CDDD")  # 10, 0, 5, 5 points = 5, 20, 30, 40 years
    answers: dict[tuple[str, int], str | None] = {
        ("Q1", 1): "{'ANSWER': 'Defect'}",  # right
        ("Q1", 2): "{'ANSWER': 'Cooperate'}",  # wrong
        ("Q1", 3): "I refuse",  # non-relevant
        ("Q1", 4): "{'ANSWER': 'Defect'}",  # last round: never right, still relevant
        ("Q2", 1): "{'ANSWER': '1'}",
        ("Q2", 2): "{'ANSWER': '1'}",  # wrong
        ("Q2", 3): "{'ANSWER': '3'}",  # Q2 round 4 missing: non-relevant
        ("Q3", 1): "ANSWER: MAXIMUM:15, MINIMUM:0",
        ("Q3", 2): "ANSWER: MAXIMUM:15, MINIMUM:5",
        ("Q3", 3): "ANSWER: MAXIMUM:15",  # one number: non-relevant for both
        ("Q3", 4): "{'ANSWER': 'years'}",
        ("Q4", 1): "{'ANSWER': '5'}",
        ("Q4", 2): "{'ANSWER': '20'}",
        ("Q4", 3): "{'ANSWER': '25'}",  # wrong
        ("Q4", 4): "{'ANSWER': '40 years'}",
    }
    assert comprehension_scores(answers, facts) == {
        "CR1": 0.25, "CR2": 0.5, "CR3M": 0.5, "CR3m": 0.25, "CR4": 0.75,
        "MR1": 0.25, "MR2": 0.25, "MR3M": 0.5, "MR3m": 0.5, "MR4": 0.0,
    }  # fmt: skip


def test_options_change_the_ground_truth() -> None:
    facts = game("CC", "CC")
    answers: dict[tuple[str, int], str | None] = {
        ("Q2", 1): "{'ANSWER': '0'}",
        ("Q2", 2): "{'ANSWER': '1'}",
        ("Q4", 1): "{'ANSWER': '10'}",
        ("Q4", 2): "{'ANSWER': '20'}",
    }
    assert comprehension_scores(answers, facts)["CR2"] == 0.0
    assert comprehension_scores(answers, facts)["CR4"] == 0.0  # 5 and 10 years
    options = ComprehensionOptions(q2_expects="t-1", q4_units="points")
    scored = comprehension_scores(answers, facts, options)
    assert scored["CR2"] == 1.0
    assert scored["CR4"] == 1.0


def test_parsed_values_stand_in_for_missing_texts() -> None:
    facts = game("CC", "CC")
    parsed = {
        ("Q1", 1): "cooperate",
        ("Q2", 1): 1,
        ("Q2", 2): 2,
        ("Q3", 1): {"MAXIMUM": 15, "MINIMUM": 0},
        ("Q3", 2): [15, 0],
        ("Q4", 1): 5,
    }
    scores = comprehension_scores({}, facts, parsed=parsed)
    assert scores["CR1"] == 0.5
    assert scores["CR2"] == 1.0
    assert scores["CR3M"] == scores["CR3m"] == 1.0
    assert scores["CR4"] == 0.5
    assert scores["MR4"] == 0.5


def test_unknown_question() -> None:
    with pytest.raises(ValueError, match="unknown question 'Q5'"):
        judge("Q5", None, game("C", "C"), 1)
