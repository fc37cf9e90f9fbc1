"""Scoring of seed-001's four comprehension questions (§7), asked after every round of a game.

Each round's answer to a question is judged relevant-correct, relevant-incorrect or non-relevant
("does not answer the question"), and per game

    Correct = N_relevant_correct / N_rounds        Misunderstanding = N_non_relevant / N_rounds

(§7). The denominator is always the game's number of rounds: a missing answer counts as
non-relevant, and Q1 at the last round (there is no next move to predict) can never be correct
[CHECKED in §7: CR1 + MR1 <= (N-1)/N in all 252 games]. Q3 is judged relevant once and scored
twice, for the maximum (CR3M) and the minimum (CR3m) [CHECKED: MR3M == MR3m in every row].

The thesis does not say how answers were judged (AMBIG-7). Here a judgement is automatic: an answer
is relevant when the parser extracts the expected type (an action, a number, the two Q3 numbers),
and correct when that value equals the ground truth. Every other choice is an explicit option of
`ComprehensionOptions`, with the spec's defaults.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Judgement = Literal["correct", "incorrect", "nonrelevant"]
"""relevant-correct, relevant-incorrect, non-relevant (seed-001 §7)."""

QUESTION_IDS: tuple[str, ...] = ("Q1", "Q2", "Q3", "Q4")

COMPREHENSION_COLUMNS: tuple[str, ...] = (
    "CR1", "CR2", "CR3M", "CR3m", "CR4", "MR1", "MR2", "MR3M", "MR3m", "MR4",
)  # fmt: skip
"""Column names of seed-001 §8.2, in the order of Appendix A."""

# seed-001 §7: the questions and their format lines, verbatim (experimental material).
QUESTIONS: dict[str, str] = {
    "Q1": "What is going to be your partner's next move?\n(Express the answer as ANSWER:<ANSWER>)",
    "Q2": (
        "How many rounds have you gone through so far?\n(Express the answer as ANSWER:<N_ROUNDS>)"
    ),
    "Q3": (
        "Which are the maximum and minimum number of years you may get from this round?\n"
        "(Express the answer as ANSWER: MAXIMUM:<MAX>, MINIMUM:<MIN>)"
    ),
    "Q4": (
        "How many years of sentence have you received so far?\n"
        "(Express the answer as ANSWER:<TOTAL_YEARS>)"
    ),
}


@dataclass(frozen=True)
class ComprehensionOptions:
    """The AMBIG-7 choices, named; the defaults are the spec's readings."""

    q2_expects: Literal["t", "t-1"] = "t"
    """Rounds gone through when asked after round t: t (§7, "after each round") or t-1."""
    q4_units: Literal["years", "points"] = "years"
    """Q4's total: years in prison (§4.1: years = max payoff - payoff), or payoff points."""
    q3_relevance: Literal["both", "either"] = "both"
    """A Q3 answer is relevant when it gives both numbers (the asked format) or at least one."""
    q3_unlabelled: Literal["order", "nonrelevant"] = "order"
    """Two bare numbers in a Q3 answer: read as MAXIMUM, MINIMUM (the asked order), or rejected."""
    numbers: Literal["first", "last"] = "first"
    """Which number a Q2/Q4 answer means when it holds several ("3 of 10 rounds")."""


DEFAULT_OPTIONS = ComprehensionOptions()

# -- answer parsers ---------------------------------------------------------------------------

# {'ANSWER': '...'} in single or double quotes (§6.1: the thesis' "JSON" is not strict JSON), or
# an unquoted value up to the closing brace.
_DICT_VALUE = re.compile(
    r"""['"]?answer['"]?\s*:\s*(?:'(.*?)'|"(.*?)"|([^'"{}\n][^{}\n]*?))\s*\}""",
    re.IGNORECASE,
)
_LINE_VALUE = re.compile(r"answer\s*:\s*(.+)", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_MAX = re.compile(r"\bmax(?:imum)?\b\W{0,3}(?:\w+\W{1,3}){0,5}?(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_MIN = re.compile(r"\bmin(?:imum)?\b\W{0,3}(?:\w+\W{1,3}){0,5}?(-?\d+(?:\.\d+)?)", re.IGNORECASE)


def extract_answer(text: str | None) -> str | None:
    """The payload of an answer: the value of the last {'ANSWER': ...}, else what follows the last
    "ANSWER:", else the whole text; a nested "ANSWER:" prefix (the format line) is dropped."""
    if text is None:
        return None
    found = list(_DICT_VALUE.finditer(text))
    if found:
        m = found[-1]
        payload = next(g for g in m.groups() if g is not None)
    else:
        lines = [m.group(1) for m in _LINE_VALUE.finditer(text)]
        payload = lines[-1] if lines else text
    payload = payload.strip().strip("*`").strip()
    while (prefix := re.match(r"answer\s*:\s*", payload, re.IGNORECASE)) is not None:
        payload = payload[prefix.end() :].strip()
    return payload or None


def _label_pattern(label: str) -> re.Pattern[str]:
    # "cooperate" also matches cooperation/cooperating, "defect" defection/defects: the stem is the
    # label without its last letter, followed by word characters. Short labels ("C", "A") must
    # match as whole words, or "Always" would name "A".
    if len(label) <= 3:
        return re.compile(rf"\b{re.escape(label)}\b", re.IGNORECASE)
    return re.compile(rf"\b{re.escape(label[:-1])}\w*", re.IGNORECASE)


def parse_action(text: str | None, labels: Sequence[str] = ("cooperate", "defect")) -> str | None:
    """Q1: the one action label the answer names; None if it names none or several."""
    payload = extract_answer(text)
    if payload is None:
        return None
    named = [label for label in labels if _label_pattern(label).search(payload)]
    return named[0] if len(named) == 1 else None


def _as_number(token: str) -> float:
    return float(token)


def parse_number(text: str | None, which: Literal["first", "last"] = "first") -> float | None:
    """Q2 / Q4: the number in the answer ("3", "15 years", "ANSWER:3"); None if there is none."""
    payload = extract_answer(text)
    if payload is None:
        return None
    tokens = _NUMBER.findall(payload)
    if not tokens:
        return None
    return _as_number(tokens[0] if which == "first" else tokens[-1])


def parse_bounds(
    text: str | None, unlabelled: Literal["order", "nonrelevant"] = "order"
) -> tuple[float | None, float | None]:
    """Q3: (MAXIMUM, MINIMUM) from "MAXIMUM:15, MINIMUM:0" and the like; None where absent."""
    payload = extract_answer(text)
    if payload is None:
        return None, None
    hi, lo = _MAX.search(payload), _MIN.search(payload)
    if hi is not None or lo is not None:
        return (
            None if hi is None else _as_number(hi.group(1)),
            None if lo is None else _as_number(lo.group(1)),
        )
    tokens = _NUMBER.findall(payload)
    if unlabelled == "order" and len(tokens) == 2:
        return _as_number(tokens[0]), _as_number(tokens[1])
    return None, None


def parsed_value(question_id: str, parsed: Any) -> Any:
    """A stored `parsed` answer in the shape the judges take, when no text was stored."""
    if question_id == "Q1":
        return parsed if isinstance(parsed, str) else None
    if question_id in ("Q2", "Q4"):
        ok = isinstance(parsed, int | float) and not isinstance(parsed, bool)
        return float(parsed) if ok else None
    if question_id == "Q3":
        if isinstance(parsed, Mapping):
            by = {str(k).lower(): v for k, v in parsed.items()}
            hi, lo = by.get("maximum", by.get("max")), by.get("minimum", by.get("min"))
        elif isinstance(parsed, list | tuple) and len(parsed) == 2:
            hi, lo = parsed
        else:
            return (None, None)
        return tuple(
            float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
            for v in (hi, lo)
        )
    return None


# -- ground truth -----------------------------------------------------------------------------


def years(payoff: float, max_payoff: float) -> float:
    """Years in prison for a payoff: max(T, R, P, S) - payoff (seed-001 §4.1)."""
    return max_payoff - payoff


def truth_q1(opponent_actions: Sequence[str | None], t: int) -> str | None:
    """The opponent's move in round t+1 (t from 1); None after the last round (§7)."""
    return opponent_actions[t] if 0 <= t < len(opponent_actions) else None


def truth_q2(t: int, expects: Literal["t", "t-1"] = "t") -> int:
    """Rounds gone through when asked after round t (AMBIG-7: t by default)."""
    return t if expects == "t" else t - 1


def truth_q3(agent_payoffs: Sequence[float]) -> tuple[float, float]:
    """(max, min) years one round can give: with years = max - payoff, (max - min, 0) (§4.1)."""
    return max(agent_payoffs) - min(agent_payoffs), 0.0


def truth_q4(
    round_payoffs: Sequence[float | None],
    t: int,
    max_payoff: float,
    units: Literal["years", "points"] = "years",
) -> float | None:
    """The agent's total through round t, in years (default) or points; None if a round's payoff
    is unknown."""
    done = round_payoffs[:t]
    if len(done) < t or any(p is None for p in done):
        return None
    points = [float(p) for p in done if p is not None]
    return sum(years(p, max_payoff) for p in points) if units == "years" else sum(points)


# -- judging and scoring ----------------------------------------------------------------------


@dataclass(frozen=True)
class GameFacts:
    """What the ground truths of one game need, from the agent's point of view."""

    opponent_actions: tuple[str | None, ...]
    """The opponent's move per round (round 1 first)."""
    round_payoffs: tuple[float | None, ...]
    """The agent's payoff per round, in points."""
    stage_payoffs: tuple[float, ...]
    """Every payoff the agent can get in one round (T, R, P, S for the PD family)."""
    labels: tuple[str, ...] = ("cooperate", "defect")
    """The opponent's action labels, for parsing Q1."""

    @property
    def n_rounds(self) -> int:
        return len(self.opponent_actions)

    @property
    def max_payoff(self) -> float:
        return max(self.stage_payoffs)


def _same(value: float | None, truth: float | None) -> bool:
    return value is not None and truth is not None and abs(value - truth) < 1e-9


def _judge(relevant: bool, correct: bool) -> Judgement:
    if not relevant:
        return "nonrelevant"
    return "correct" if correct else "incorrect"


def judge(
    question_id: str,
    value: Any,
    facts: GameFacts,
    t: int,
    options: ComprehensionOptions = DEFAULT_OPTIONS,
) -> tuple[Judgement, ...]:
    """Judge one parsed answer (see `parse_answer`) given after round t (from 1).

    One judgement for Q1, Q2 and Q4; two for Q3 (maximum, minimum), which share relevance.
    """
    if question_id == "Q1":
        truth = truth_q1(facts.opponent_actions, t)
        return (_judge(value is not None, value is not None and value == truth),)
    if question_id == "Q2":
        return (_judge(value is not None, _same(value, truth_q2(t, options.q2_expects))),)
    if question_id == "Q4":
        total = truth_q4(facts.round_payoffs, t, facts.max_payoff, options.q4_units)
        return (_judge(value is not None, _same(value, total)),)
    if question_id == "Q3":
        hi, lo = value if isinstance(value, tuple) else (None, None)
        given = [v is not None for v in (hi, lo)]
        relevant = all(given) if options.q3_relevance == "both" else any(given)
        true_hi, true_lo = truth_q3(facts.stage_payoffs)
        return (_judge(relevant, _same(hi, true_hi)), _judge(relevant, _same(lo, true_lo)))
    raise ValueError(f"unknown question '{question_id}': expected one of {QUESTION_IDS}")


def parse_answer(
    question_id: str,
    text: str | None,
    facts: GameFacts,
    options: ComprehensionOptions = DEFAULT_OPTIONS,
) -> Any:
    """The value `judge` takes, parsed from an answer's text."""
    if question_id == "Q1":
        return parse_action(text, facts.labels)
    if question_id in ("Q2", "Q4"):
        return parse_number(text, options.numbers)
    if question_id == "Q3":
        return parse_bounds(text, options.q3_unlabelled)
    raise ValueError(f"unknown question '{question_id}': expected one of {QUESTION_IDS}")


def rates(judgements: Sequence[Judgement], n_rounds: int) -> tuple[float, float]:
    """(Correct, Misunderstanding) of one question in one game (§7); the denominator is N_rounds,
    and rounds without a judgement count as non-relevant."""
    if n_rounds <= 0:
        return 0.0, 0.0
    correct = sum(1 for j in judgements if j == "correct")
    relevant = sum(1 for j in judgements if j != "nonrelevant")
    nonrelevant = n_rounds - relevant
    return correct / n_rounds, nonrelevant / n_rounds


def comprehension_scores(
    answers: Mapping[tuple[str, int], str | None],
    facts: GameFacts,
    options: ComprehensionOptions = DEFAULT_OPTIONS,
    parsed: Mapping[tuple[str, int], Any] | None = None,
) -> dict[str, float]:
    """CR1..CR4 and MR1..MR4 of one game (§7, §8.2 column names).

    `answers` maps (question id, round t from 1) to the answer text. Where a text is missing,
    `parsed` may give an already parsed value (see `parsed_value`). Rounds outside 1..N_rounds are
    ignored.
    """
    n = facts.n_rounds
    out: dict[str, float] = {}
    for qid in QUESTION_IDS:
        per_round: list[tuple[Judgement, ...]] = []
        for t in range(1, n + 1):
            key = (qid, t)
            text = answers.get(key)
            if text is not None:
                value = parse_answer(qid, text, facts, options)
            elif parsed is not None and key in parsed:
                value = parsed_value(qid, parsed[key])
            else:
                continue  # no answer: non-relevant, through the denominator
            per_round.append(judge(qid, value, facts, t, options))
        k = qid[1]
        if qid == "Q3":
            out["CR3M"], out["MR3M"] = rates([j[0] for j in per_round], n)
            out["CR3m"], out["MR3m"] = rates([j[1] for j in per_round], n)
        else:
            out[f"CR{k}"], out[f"MR{k}"] = rates([j[0] for j in per_round], n)
    return {c: out[c] for c in COMPREHENSION_COLUMNS}
