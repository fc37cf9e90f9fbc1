"""A report table of comparisons: each compared number beside its difference, interval and
multiplicity-adjusted p-value, with the adjustment stated under the table.

A study names what it compares (the leading label cells of each row) and gives each row a
`Comparison`, or the reason it has none. `comparison_table` adjusts the p-values across the
table (`analysis.multiple`, Holm by default), lays out A, B, B − A with its interval, the raw
and the adjusted p-value, what the comparison rests on (pairs, clusters, or two unpaired
samples) and the test, and puts the adjustment's sentence in the table's note.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stratagem.analysis.comparisons import Comparison, format_p
from stratagem.analysis.multiple import Method, adjust_comparisons
from stratagem.analysis.report_views import CellView, TableView, make_table
from stratagem.analysis.unpaired import WELCH
from stratagem.errors import StratagemError

EMPTY = CellView("–", "num empty")


@dataclass(frozen=True)
class ComparedRow:
    """One row: what is compared, and its comparison (None: `reason` says why not)."""

    labels: tuple[object, ...]
    comparison: Comparison | None
    reason: str = ""


def compared_row(labels: tuple[object, ...], compare: Callable[[], Comparison]) -> ComparedRow:
    """A row of `compare()`'s comparison, or, where it refuses (too few pairs, nothing paired),
    the row that says why."""
    try:
        return ComparedRow(labels, compare())
    except StratagemError as exc:
        return ComparedRow(labels, None, f"not compared: {exc}")


def adjust_rows(
    rows: Sequence[ComparedRow], method: Method = "holm"
) -> tuple[list[ComparedRow], str]:
    """The rows with their p-values adjusted across the table, and the sentence for under it."""
    present = [r.comparison for r in rows if r.comparison is not None]
    adjusted, statement = adjust_comparisons(present, method)
    out: list[ComparedRow] = []
    k = 0
    for r in rows:
        if r.comparison is None:
            out.append(r)
        else:
            out.append(ComparedRow(r.labels, adjusted[k], r.reason))
            k += 1
    return out, statement


def _plural(noun: str, count: int) -> str:
    return noun if count == 1 or noun.endswith("s") else f"{noun}s"


def basis(c: Comparison, unit: str = "episode") -> str:
    """What the comparison rests on: "12 pairs in 4 settings", "5 + 6 episodes, unpaired"."""
    if c.method == WELCH:
        return f"{c.unpaired_a} + {c.unpaired_b} {_plural(unit, 2)}, unpaired"
    text = f"{c.n} {_plural('pair', c.n)}"
    if c.cluster_by is not None and c.clusters != c.n:
        text += f" in {c.clusters} {_plural(c.cluster_by, c.clusters)}"
    left = c.unpaired_a + c.unpaired_b
    if left:
        text += f" ({left} without a partner left out)"
    return text


def _number(value: float | None, scale: float, decimals: int) -> CellView:
    return EMPTY if value is None else CellView(f"{value * scale:.{decimals}f}", "num")


def difference_cell(c: Comparison, scale: float = 1.0, decimals: int = 2) -> CellView:
    """B − A with its interval, scaled: "+0.12 [0.03, 0.21]"."""
    text = f"{c.estimate * scale:+.{decimals}f}"
    if c.ci_low is not None and c.ci_high is not None:
        text += f" [{c.ci_low * scale:.{decimals}f}, {c.ci_high * scale:.{decimals}f}]"
    return CellView(text, "num")


def _p(p: float | None) -> CellView:
    return EMPTY if p is None else CellView(format_p(p, prefix=""), "num")


def comparison_cells(
    c: Comparison, *, scale: float = 1.0, decimals: int = 2, unit: str = "episode"
) -> list[object]:
    """A, B, B − A [interval], p, adjusted p, basis, test."""
    return [
        _number(c.mean_a, scale, decimals),
        _number(c.mean_b, scale, decimals),
        difference_cell(c, scale, decimals),
        _p(c.p),
        _p(c.p_adjusted),
        basis(c, unit),
        c.method,
    ]


def comparison_table(
    title: str,
    caption: str,
    label_columns: Sequence[str],
    rows: Sequence[ComparedRow],
    *,
    scale: float = 1.0,
    decimals: int = 2,
    unit: str = "episode",
    level: float = 0.95,
    method: Method = "holm",
    tag: str = "",
) -> TableView:
    """The table of `rows`, p-values adjusted across it (module docstring). A row without a
    comparison shows its reason in place of the numbers."""
    adjusted, statement = adjust_rows(rows, method)
    name = "Holm" if method == "holm" else "BH"
    columns = [
        *label_columns, "Mean A", "Mean B", f"B − A [{level:.0%} CI]", "p", f"{name} p", "n",
        "Test",
    ]  # fmt: skip
    body: list[list[object]] = []
    for r in adjusted:
        if r.comparison is None:
            body.append([*r.labels, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, r.reason, ""])
        else:
            cells = comparison_cells(r.comparison, scale=scale, decimals=decimals, unit=unit)
            body.append([*r.labels, *cells])
    tested = sum(r.comparison is not None and r.comparison.p is not None for r in adjusted)
    note = statement or ("One p-value in the table: nothing to adjust." if tested == 1 else "")
    return make_table(title, caption, columns, body, note=note, tag=tag, fold=False)
