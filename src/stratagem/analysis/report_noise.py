"""The report's noise-floor section: each cell against its null copy, and the floor they give.

Where the experiment played replicate cells (the file's `replicates:`), the section shows, per
metric of seat 0, the noise floor (`analysis.noise_floor`: the difference two identical cells
stay within 95% of the time), how many replicate intervals exclude 0 (about 5% should, by
chance alone), and each cell's replicate difference with its interval, so that every
comparison elsewhere in the report can be read against it. No section without replicates.
"""

from __future__ import annotations

from scipy import stats

from stratagem.analysis.comparisons import Comparison
from stratagem.analysis.noise_floor import (
    LEVEL,
    PAIRED_BY,
    NoiseFloor,
    ReplicateDifference,
    floor_of,
    has_replicates,
    replicate_differences,
    tallies_of,
)
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import (
    CellView,
    Note,
    Paragraph,
    Section,
    TableView,
    make_table,
)
from stratagem.experiments.compare_entry import METRICS

SECTION_ID = "noise-floor"
TITLE = "Noise floor: replicate cells"

NAMES = {"cooperation": "Cooperation", "score": "Score", "invalid": "Invalid rate"}
"""Each metric's column name, in `compare_entry.METRICS`' order."""
FLOOR_COLUMNS = ("Metric", "Noise floor", "Cells", "Replicates", "RMS", "Mean |Δ|",
                 "Largest |Δ|", "Intervals excluding 0")  # fmt: skip
CELL_COLUMNS = ("Model", "Agent", "Game", "Opponent", "Rounds", "Replicate")


def noise_section(data: ReportData) -> list[Section]:
    """The section, or nothing when no episode is a cell's copy."""
    if not has_replicates(data):
        return []
    tallies = tallies_of(data)
    floors: dict[str, NoiseFloor] = {}
    for metric in METRICS:
        found = floor_of(replicate_differences(tallies, metric), metric)
        if found is not None:
            floors[metric] = found
    section = Section(SECTION_ID, TITLE)
    section.blocks.append(Paragraph(_INTRO))
    if not floors:
        section.blocks.append(
            Note(
                "No cell and its copy share a finished seed and repetition yet (an unfinished "
                "run?), so there is no replicate difference to show."
            )
        )
        return [section]
    section.blocks.append(_floor_table(floors))
    section.blocks.append(_cells_table(floors))
    if all(f.largest == 0 for f in floors.values()):
        section.blocks.append(Note(_IDENTICAL))
    return [section]


_INTRO = (
    "Every cell was played again with the same settings, seeds and repetitions under new "
    "sampling seeds (a replicate: the file's `replicates:`). A cell and its replicate are "
    f"compared as any two cells are, paired by {PAIRED_BY} (replicate minus cell, a "
    "cluster-robust t interval with the repetitions of a seed as a cluster). Over the C "
    "cells, the noise floor t(0.975, C) · √(mean of the squared replicate differences) is "
    "the difference two identical cells stay within 95% of the time: a comparison elsewhere "
    "in this report that does not exceed it is one identical cells produce "
    "(docs/statistics.md)."
)

_IDENTICAL = (
    "Every replicate played exactly as its cell: the models answered the same prompts the same "
    "way whatever the sampling seed (greedy decoding, or temperature 0), so the noise floor is "
    "0 and only the design's own chance moves separate cells."
)


def _floor_table(floors: dict[str, NoiseFloor]) -> TableView:
    rows = [
        (
            NAMES[metric], CellView(f"±{f.floor:.3f}", "num"), f.cells, len(f.differences),
            f.rms, f.mean_abs, f.largest,
            CellView(f"{f.excluding_zero} of {len(f.differences)}",
                     "num warn" if _too_many(f) else "num"),
        )
        for metric, f in floors.items()
    ]  # fmt: skip
    return make_table(
        "Noise floor per metric",
        "The difference between two identical cells, per metric of seat 0: what a comparison "
        "must exceed to be more than noise.",
        FLOOR_COLUMNS,
        rows,
        decimals=3,
        legend=f"{_legend()} Noise floor: t(0.975, C) · RMS, the half-width of the "
        "95% prediction interval of a difference between identical cells; Cells: C, cells "
        "with a replicate; Replicates: replicate differences (one per cell and copy); RMS: "
        "√(mean Δ²); Intervals excluding 0: replicate differences whose 95% interval excludes "
        "0, about 5% by chance alone when the intervals are right (flagged when as many or "
        "more would happen with probability below 5%, by the binomial tail).",
    )


def _too_many(f: NoiseFloor) -> bool:
    """More replicate intervals exclude 0 than chance explains: P(X >= k) < 0.05 for
    X ~ Binomial(n, 1 - level), n the replicate differences and k those excluding 0."""
    k, n = f.excluding_zero, len(f.differences)
    return k > 0 and float(stats.binom.sf(k - 1, n, 1 - f.level)) < 0.05


def _legend() -> str:
    return "; ".join(f"{NAMES[m]}: {text}" for m, text in METRICS.items()) + "."


def _cells_table(floors: dict[str, NoiseFloor]) -> TableView:
    metrics = list(floors)
    rows: dict[tuple[object, ...], dict[str, ReplicateDifference]] = {}
    for metric, f in floors.items():
        for d in f.differences:
            rows.setdefault((*d.cell, d.replicate), {})[metric] = d
    body = []
    for key, found in rows.items():
        pairs = max(d.comparison.n for d in found.values())
        body.append((*key, *(_difference(found.get(m)) for m in metrics), pairs))
    return make_table(
        "Each cell against its replicate",
        f"Replicate minus cell, with its {LEVEL:.0%} interval, per metric of seat 0; "
        "a dash where the metric is undefined (no valid move, or no cooperative action).",
        (*CELL_COLUMNS, *(f"{NAMES[m]} Δ" for m in metrics), "Pairs"),
        body,
        legend="Pairs: the episodes of the cell and of its replicate that share a seed and a "
        "repetition (the most over the metrics).",
    )


def _difference(d: ReplicateDifference | None) -> CellView | None:
    if d is None:
        return None
    return CellView(_short(d.comparison), "num")


def _short(c: Comparison) -> str:
    """'+0.04 [-0.02, 0.10]'."""
    text = f"{c.estimate:+.3f}"
    if c.ci_low is not None and c.ci_high is not None:
        text += f" [{c.ci_low:.3f}, {c.ci_high:.3f}]"
    return text


__all__ = ["noise_section"]
