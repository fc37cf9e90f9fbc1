"""seed-001's result Tables 3.1-3.8 (§12) for any grid, from the per-game dataset (§8.2).

The tables are means of the dataset's columns per architecture and model, shaped as the thesis
prints them, so the thesis' own Appendix A reproduces them (tests/studies/thesis).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import mean
from typing import Any

from stratagem.studies.thesis.behaviour import BEHAVIOUR_METRICS

# -- tables (§12) -----------------------------------------------------------------------------

Cell = str | float | None


@dataclass(frozen=True)
class Table:
    """A result table as the thesis prints it: a header and rows whose first cell is the label."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    number: str | None = None
    """The thesis' table number ("3.1") when the table is one of its own."""
    note: str = ""

    def value(self, row: str, column: str) -> Cell:
        """The cell at a row label and a column name."""
        j = self.columns.index(column)
        for r in self.rows:
            if r[0] == row:
                return r[j]
        raise KeyError(f"{self.title}: no row '{row}'")

    def to_markdown(self, decimals: int = 2) -> str:
        """A plain-text rendering; numbers rounded to `decimals` (the thesis prints 2)."""

        def show(c: Cell) -> str:
            return "" if c is None else f"{c:.{decimals}f}" if isinstance(c, float) else str(c)

        lines = [f"**{self.title}**", ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + "---|" * len(self.columns))
        lines += ["| " + " | ".join(show(c) for c in r) + " |" for r in self.rows]
        if self.note:
            lines += ["", self.note]
        return "\n".join(lines)


ARCH_TITLES: dict[str, str] = {
    "Plain_LLM": "Plain LLM agent",
    "Tool": "Tool-based agent",
    "Assistant": "Debate-based agent",
}
THESIS_TABLE_KEYS: dict[str, str] = {
    "3.1": "comprehension/Plain_LLM",
    "3.2": "behaviour/Plain_LLM",
    "3.3": "comprehension/Tool",
    "3.4": "behaviour/Tool",
    "3.5": "sfem/Tool",
    "3.6": "comprehension/Assistant",
    "3.7": "behaviour/Assistant",
    "3.8": "sfem/Assistant",
}
"""The thesis' table numbers and the keys of `thesis_tables`."""
_NUMBERS = {v: k for k, v in THESIS_TABLE_KEYS.items()}

QUESTION_HEADERS: tuple[str, ...] = ("Q1", "Q2", "Q3-max", "Q3-min", "Q4")
BY_MODEL_COLUMNS: tuple[str, ...] = (
    "CR1", "CR2", "CR3M", "CR3m", "CR4", "MR1", "MR2", "MR3", "MR4",
)  # fmt: skip
"""§12.4's per-model comprehension table; MR3 is MR3M (= MR3m: one relevance judgement)."""

StrategyFit = tuple[str, float]
"""(strategy name, match percentage), as Tables 3.5 / 3.8 print an SFEM result."""


def _mean(rows: Iterable[Mapping[str, Any]], column: str) -> float | None:
    values = [float(r[column]) for r in rows if r.get(column) is not None]
    return mean(values) if values else None


def _distinct(rows: Iterable[Mapping[str, Any]], column: str) -> list[Any]:
    return list(dict.fromkeys(r[column] for r in rows))


def group_means(
    rows: Sequence[Mapping[str, Any]],
    metric: str,
    by: Sequence[str],
    where: Mapping[str, Any] | None = None,
) -> dict[tuple[Any, ...], float]:
    """Mean of a metric per group (the values behind the thesis' grouped bar plots, §10.1)."""
    chosen = [r for r in rows if all(r.get(k) == v for k, v in (where or {}).items())]
    out: dict[tuple[Any, ...], float] = {}
    for key in dict.fromkeys(tuple(r[c] for c in by) for r in chosen):
        value = _mean((r for r in chosen if tuple(r[c] for c in by) == key), metric)
        if value is not None:
            out[key] = value
    return out


def unconditional_match(
    rows: Sequence[Mapping[str, Any]], arch: str, model: str, game: str = "Dilemma"
) -> dict[str, float] | None:
    """Pooled match rates of Always Cooperate / Always Defect over a group's games.

    These two need no round sequences: AD matches every defection, so its pooled match is
    sum((1 - CR) * NR) / sum(NR) [CHECKED in §10.2 against Tables 3.5 / 3.8].
    """
    chosen = [
        r
        for r in rows
        if r["Arch"] == arch
        and r["Model"] == model
        and r["Game"] == game
        and r.get("CR") is not None
    ]
    total = sum(int(r["NR"]) for r in chosen)
    if not total:
        return None
    cooperate = sum(float(r["CR"]) * int(r["NR"]) for r in chosen) / total
    return {"Always Cooperate": cooperate, "Always Defect": 1.0 - cooperate}


def _title(number: str | None, what: str, arch: str, plural: bool = False) -> str:
    name = ARCH_TITLES.get(arch, f"{arch} agent")
    text = f"{what} to {name}s" if plural else f"{what}, {name}"
    return f"Table {number}: {text}" if number else text


def thesis_tables(
    rows: Sequence[Mapping[str, Any]],
    *,
    sfem: Mapping[tuple[str, str], StrategyFit] | None = None,
    sfem_game: str = "Dilemma",
) -> dict[str, Table]:
    """Tables shaped like Tables 3.1-3.8 (§12) for every architecture in `rows`, any grid.

    Per architecture: average comprehension scores, average behaviour scores (overall and per
    model), per-model comprehension (§12.4), and, except for the Plain LLM (the thesis applies no
    SFEM to it, §10.3), the SFEM strategy per model. `sfem` maps (Arch, Model) to the strategy
    an SFEM fit assigned and its match percentage; without it the table can only use what the
    aggregates determine, the better of Always Cooperate / Always Defect, and says so. Cells
    without data are omitted: no row, no table.
    Keys are "<kind>/<Arch>"; THESIS_TABLE_KEYS maps the thesis' numbers to them.
    """
    archs = [a for a in ARCH_TITLES if any(r["Arch"] == a for r in rows)]
    archs += [a for a in _distinct(rows, "Arch") if a not in archs]
    tables: dict[str, Table] = {}
    for arch in archs:
        mine = [r for r in rows if r["Arch"] == arch]
        models = _distinct(mine, "Model")

        key = f"comprehension/{arch}"
        correct = [_mean(mine, c) for c in ("CR1", "CR2", "CR3M", "CR3m", "CR4")]
        misread = [_mean(mine, c) for c in ("MR1", "MR2", "MR3M", "MR3m", "MR4")]
        if any(v is not None for v in correct + misread):
            tables[key] = Table(
                _title(_NUMBERS.get(key), "Average comprehension scores", arch),
                ("", *QUESTION_HEADERS),
                (("Avg. Correct Rate", *correct), ("Avg. Misunderstand Rate", *misread)),
                _NUMBERS.get(key),
            )
            by_model = []
            for model in models:
                group = [r for r in mine if r["Model"] == model]
                cells = [_mean(group, "MR3M" if c == "MR3" else c) for c in BY_MODEL_COLUMNS]
                if any(v is not None for v in cells):
                    by_model.append((model, *cells))
            tables[f"comprehension-by-model/{arch}"] = Table(
                _title(None, "Comprehension scores per model", arch),
                ("", *BY_MODEL_COLUMNS),
                tuple(by_model),
            )

        key = f"behaviour/{arch}"
        avg = [_mean(mine, c) for c in BEHAVIOUR_METRICS]
        if any(v is not None for v in avg):
            body: list[tuple[Cell, ...]] = [("Avg", *avg)]
            for model in models:
                group = [r for r in mine if r["Model"] == model]
                body.append((model, *(_mean(group, c) for c in BEHAVIOUR_METRICS)))
            tables[key] = Table(
                _title(_NUMBERS.get(key), "Average behaviour scores", arch),
                ("", *BEHAVIOUR_METRICS),
                tuple(body),
                _NUMBERS.get(key),
            )

        if arch == "Plain_LLM":
            continue
        key = f"sfem/{arch}"
        fits: list[tuple[Cell, ...]] = []
        fallback = False
        for model in models:
            if sfem is not None and (arch, model) in sfem:
                strategy, match = sfem[(arch, model)]
                fits.append((model, strategy, float(match)))
                continue
            rates = unconditional_match(rows, arch, model, sfem_game)
            if rates is not None:
                # Ties go to Always Defect, listed last.
                best = max(rates, key=lambda s: (rates[s], s == "Always Defect"))
                fits.append((model, best, rates[best]))
                fallback = True
        if fits:
            note = (
                "Rows without an SFEM fit show the better of Always Cooperate / Always Defect, "
                f"the only strategies whose match the per-game aggregates determine ({sfem_game} "
                "games, pooled over rounds)."
                if fallback
                else ""
            )
            tables[key] = Table(
                _title(_NUMBERS.get(key), "SFEM strategies assigned", arch, plural=True),
                ("", "Assigned Strategy", "Match Percentage"),
                tuple(fits),
                _NUMBERS.get(key),
                note,
            )
    return tables
