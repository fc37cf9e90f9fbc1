"""The §3.2 repairs of one V report (seed-002 §3.2 [A], §12.4), shared by the ToM agent, which
repairs what the model wrote before storing it, and the ToM study, which applies the same
repairs to every stored report, so one imported from another tool with a score of 7.5 is read
as the agent would have read it instead of failing the whole analysis.

§3.2 [A] decides three repairs: an out-of-range score is clipped to 0..10, an item of the domain
the report leaves out scores 0, and an item outside the domain (in nobody's hand) is dropped.
The spec leaves two readings open (§12.4: "integer vs. real scores"): how a fractional score
becomes whole (`Rounding`), and whether a number written as a string ("7") is read. Every
repair is returned as a note, so the caller logs and counts it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any, Literal

from stratagem.agents.tom.texts import bare
from stratagem.games.spaces import IllegalAction
from stratagem.games.tradecraft.actions import item_name

SCORE_MIN, SCORE_MAX = 0, 10
Rounding = Literal["half_even", "half_up", "down"]
"""How a fractional score becomes whole: to the nearest, ties to even (Python's `round`, so
6.5 -> 6 and 7.5 -> 8), to the nearest, ties up (6.5 -> 7), or down (7.9 -> 7)."""
ROUNDINGS: tuple[Rounding, ...] = ("half_even", "half_up", "down")
_DECIMAL = {"half_even": ROUND_HALF_EVEN, "half_up": ROUND_HALF_UP, "down": ROUND_FLOOR}


@dataclass(frozen=True)
class ScoreReading:
    """The open readings of §12.4, defaults as the agent has always read them."""

    rounding: Rounding = "half_even"
    strings: bool = True
    """Whether a number written as a string ("7") is read as that number (else unreadable)."""


AGENT_READING = ScoreReading()


def repair_score(value: Any, reading: ScoreReading = AGENT_READING) -> tuple[int, str | None]:
    """A score as a whole number 0..10, and the repair made (None when none was needed).
    Unreadable (not a number, not finite, a string when strings are not read) scores 0."""
    if isinstance(value, str) and reading.strings:
        try:
            value = float(value.strip())
        except ValueError:
            return SCORE_MIN, f"unreadable score {value!r} set to 0"
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return SCORE_MIN, f"unreadable score {value!r} set to 0"
    note = None
    if value != int(value):
        note = f"score {value} rounded"
        score = int(Decimal(repr(value)).to_integral_value(_DECIMAL[reading.rounding]))
    else:
        score = int(value)
    if not SCORE_MIN <= score <= SCORE_MAX:
        clipped = min(max(score, SCORE_MIN), SCORE_MAX)
        return clipped, f"score {value} clipped to {clipped}"
    return score, note


def repair_values(
    raw: Mapping[Any, Any],
    domain: Sequence[str] | None,
    key: str,
    reading: ScoreReading = AGENT_READING,
) -> tuple[dict[str, int], list[str]]:
    """One report (item -> score as written) as whole scores over `domain` (full item names;
    None when it is not known: then no item is dropped or filled), and the repairs made, each
    a note naming the order `key` ("V1") and the item."""
    notes: list[str] = []
    given: dict[str, Any] = {}
    for name, value in raw.items():
        try:
            item = item_name(name)
        except IllegalAction:
            notes.append(f"{key}: dropped a key that is not an item name")
            continue
        if domain is None or item in domain:
            given[item] = value
        else:
            notes.append(f"{key}: dropped {bare(item)} (in nobody's hand)")
    scores: dict[str, int] = {}
    for item in given if domain is None else domain:
        if item not in given:
            scores[item] = SCORE_MIN
            notes.append(f"{key}: {bare(item)} missing, set to 0")
            continue
        scores[item], note = repair_score(given[item], reading)
        if note:
            notes.append(f"{key}[{bare(item)}]: {note}")
    return scores, notes
