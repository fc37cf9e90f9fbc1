"""The comparisons an experiment is for, named in its file: `analysis: {compare: [...]}`.

A grid's cells are its combinations of model, agent, game, opponent and rounds; each cell is
played once per seed and repetition. A comparison names one axis and two of its values:

    analysis:
      compare:
        - {axis: game, a: pd, b: pd-alt}                  # B - A: pd-alt minus pd
        - {axis: agent, a: zs, b: cot, metric: score, per: [model]}

compares, for every two cells that differ only in that axis (A's value against B's), the
metric's value of B minus A over the episodes the two cells share a seed and repetition with
(the pairs). `per` names the axes a comparison is kept apart by (default: every other axis, so
one comparison per pair of cells); the axes not named are pooled into the pairs (with `per:
[model]`, the agents, opponents and rounds of a model are paired too). `sd` states the standard
deviation of the paired differences the plan assumes before any pilot episode is stored.

`compare` is the one key of `analysis:` that is not a study's name; without it, the plan
compares what the grid's study compares (each counterfactual variant with its default game).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from stratagem.experiments.strict import Strict

COMPARE = "compare"
"""The key of `analysis:` that names comparisons (every other key names a study)."""

Axis = Literal["model", "agent", "game", "opponent", "rounds"]
AXES: tuple[Axis, ...] = ("model", "agent", "game", "opponent", "rounds")
"""A cell's axes, in the order tables show them (`analysis.cells.CellKey`)."""

Metric = Literal["cooperation", "score", "invalid"]
METRICS: dict[str, str] = {
    "cooperation": "seat 0's cooperation rate (share of its valid moves that were the game's "
    "first action)",
    "score": "seat 0's total payoff",
    "invalid": "seat 0's invalid-move rate",
}
"""Each per-episode metric a comparison can plan for, as the plan describes it."""


class CompareEntry(Strict):
    """One comparison: B minus A along one axis, in cells alike in the axes of `per`, paired
    by seed and repetition (docs/statistics.md)."""

    axis: Axis
    """The axis the two cells differ in."""
    a: str | int
    """The value of `axis` in cell A (a game, an agent entry's name, a model entry's id...)."""
    b: str | int
    """The value of `axis` in cell B: the difference is B minus A."""
    metric: Metric = "cooperation"
    """The per-episode value compared: seat 0's cooperation rate, total payoff (score) or
    invalid-move rate."""
    per: list[Axis] | None = None
    """The axes that keep comparisons apart (default: every axis but `axis`)."""
    sd: float | None = Field(None, gt=0)
    """The standard deviation of the paired differences to assume without pilot episodes."""

    @model_validator(mode="after")
    def _two_values(self) -> CompareEntry:
        if str(self.a) == str(self.b):
            raise ValueError(f"b: a and b are both {self.a!r}: a comparison needs two values")
        if self.per is not None and self.axis in self.per:
            raise ValueError(
                f"per: cannot keep comparisons apart by {self.axis!r}, the axis compared"
            )
        return self

    def kept(self) -> tuple[Axis, ...]:
        """The axes that keep comparisons apart, in table order."""
        per = AXES if self.per is None else self.per
        return tuple(x for x in AXES if x in per and x != self.axis)

    def pooled(self) -> tuple[Axis, ...]:
        """The axes pooled into the pairs (neither compared nor kept apart)."""
        return tuple(x for x in AXES if x != self.axis and x not in self.kept())

    def title(self) -> str:
        """'game pd vs pd-alt' (B minus A)."""
        return f"{self.axis} {self.a} vs {self.b}"


def analysis_section(value: Any, first_error: Callable[[ValidationError], str]) -> Any:
    """An experiment file's `analysis:` with its `compare` entries validated: `compare` is a
    list of comparisons, every other key a study's options. Errors name the entry's own fields
    (`analysis.compare.0.axis`, `first_error` saying what is wrong), not the two forms a value
    of `analysis:` can take."""
    if not isinstance(value, dict):
        return value
    out: dict[Any, Any] = {}
    for key, options in value.items():
        if key != COMPARE:
            if not isinstance(options, dict):
                raise ValueError(f"{key}: a study's options (option: value), got {options!r}")
            out[key] = options
            continue
        if not isinstance(options, list):
            raise ValueError(f"{COMPARE}: a list of comparisons ({{axis: game, a: pd, b: pd-alt}}; "
                             f"docs/statistics.md), got {options!r}")  # fmt: skip
        entries = []
        for i, entry in enumerate(options):
            try:
                entries.append(CompareEntry.model_validate(entry))
            except ValidationError as exc:
                raise ValueError(f"{COMPARE}.{i}.{first_error(exc)}") from None
        out[key] = entries
    return out
