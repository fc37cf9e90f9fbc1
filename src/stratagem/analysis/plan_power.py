"""The plan's comparisons section: for each compared pair of cells, the smallest difference its
episodes can detect (`stratagem run --dry-run`, `stratagem plan`), and with `--episodes-for
DELTA` how many episodes per cell a difference of DELTA needs.

The comparisons and their pairs come from the grid (`experiments.comparisons`); the arithmetic is
`analysis.power`'s paired t (n = the pairs of a cell pair). The standard deviation σ_d of the
paired differences b_i - a_i is, in this order of preference:

1. **pilot**: the sample standard deviation of the differences of the pairs already stored as
   finished (this experiment's episodes of those very cells), when there are at least 2 and
   they are not all equal;
2. **pooled pilot**: else the pooled standard deviation of the comparison's other cell pairs
   with a pilot, √(Σ_j (k_j - 1) s_j² / Σ_j (k_j - 1)) over cell pairs j with k_j >= 2 pairs
   (the cells of one comparison are alike but for the kept axes, so their spread is the best
   guess for a cell not played yet);
3. **stated**: else the comparison's `sd:` in the file;
4. **default**: else the widest spread of a metric bounded in [lo, hi]: each cell's value has
   variance at most (hi - lo)² / 4 (Popoviciu's inequality, Popoviciu 1935), and taking the two
   cells as uncorrelated (the pairing removing nothing), σ_d = (hi - lo) / √2; 0.71 for a rate.
   It is an upper bound for uncorrelated cells, so the MDE it gives is one the design can
   promise.

The plan takes pairs as independent (one pair per cluster); where several pairs share a seed,
the analysis's cluster-robust interval (`analysis.comparisons`) will be wider than planned.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stratagem.analysis.power import ALPHA, POWER, Detectable, Needed, episodes_for
from stratagem.analysis.power import minimum_detectable as mde_of
from stratagem.analysis.tallies import EpisodeTally, episode_tallies
from stratagem.experiments.compare_entry import METRICS
from stratagem.experiments.comparisons import (
    CellPair,
    PlannedComparison,
    metric_range,
    planned_comparisons,
)
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.store import ResultStore

PILOT, POOLED, STATED, DEFAULT, NONE = "pilot", "pooled pilot", "stated", "default", "none"


@dataclass(frozen=True)
class CellPlan:
    """One compared pair of cells: its pairs in the grid, its MDE, and what σ_d came from."""

    cells: CellPair
    n: int
    sd: float | None
    source: str
    """PILOT, POOLED, STATED, DEFAULT or NONE."""
    why: str
    """The source in words: "pilot: 12 pairs"."""
    detectable: Detectable | None
    needed: Needed | None = None
    pilot_pairs: int = 0
    """Pairs of this cell pair already stored as finished, with the metric defined."""
    limit: float | None = None
    """The largest difference the metric allows (hi - lo), where it is bounded."""


@dataclass(frozen=True)
class ComparisonPlan:
    comparison: PlannedComparison
    cells: list[CellPlan]
    replicates: int = 0
    """The file's `replicates:`: null copies of every cell, the comparison's noise floor."""


def metric_value(tally: EpisodeTally, metric: str) -> float | None:
    """One finished episode's metric for seat 0, as `analysis.cells` computes it (None where
    undefined: no valid move, or no cooperative action)."""
    if metric == "score":
        return float(tally.totals[0]) if tally.totals else None
    if metric == "invalid":
        moves = tally.valid + tally.invalid
        return tally.invalid / moves if moves else 0.0
    if tally.valid and tally.cooperative >= 0:
        return tally.cooperative / tally.valid
    return None


def pilot_tallies(store_file: Path, experiment: str) -> list[EpisodeTally]:
    """The experiment's finished episodes as `analysis.tallies` counts them; none without a
    store (a plan before the first run creates nothing)."""
    if not store_file.is_file():
        return []
    with ResultStore(store_file, read_only=True) as store:
        return episode_tallies(store, experiment)


def plan_comparisons(
    config: ExperimentConfig,
    specs: Sequence[EpisodeSpec],
    store_file: Path | None,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    delta: float | None = None,
) -> list[ComparisonPlan]:
    """Every comparison of the grid with each cell pair's MDE (and the pairs a difference
    `delta` needs), σ_d chosen as the module docstring says."""
    comparisons = planned_comparisons(config, specs)
    if not comparisons:
        return []
    tallies = pilot_tallies(store_file, config.name) if store_file is not None else []
    by_id = {spec.id: spec for spec in specs}
    values: dict[str, dict[str, float]] = {}
    out = []
    for comparison in comparisons:
        metric = comparison.entry.metric
        if metric not in values:
            read = {t.id: metric_value(t, metric) for t in tallies}
            values[metric] = {k: v for k, v in read.items() if v is not None}
        plan = _plan(comparison, values[metric], by_id, alpha, power, delta)
        out.append(dataclasses.replace(plan, replicates=config.replicates))
    return out


def _pilot_differences(cells: CellPair, values: Mapping[str, float]) -> list[float]:
    return [
        values[cells.b[k]] - values[cells.a[k]]
        for k in cells.pairs
        if cells.a[k] in values and cells.b[k] in values
    ]


def _plan(
    comparison: PlannedComparison,
    values: Mapping[str, float],
    specs: Mapping[str, EpisodeSpec],
    alpha: float,
    power: float,
    delta: float | None,
) -> ComparisonPlan:
    entry = comparison.entry
    pilots = [_pilot_differences(cells, values) for cells in comparison.cells]
    usable = [(len(d), statistics.stdev(d)) for d in pilots if len(d) >= 2]
    dof = sum(k - 1 for k, _ in usable)
    pooled = math.sqrt(sum((k - 1) * s * s for k, s in usable) / dof) if dof else 0.0
    spans: dict[tuple[object, ...], tuple[float, float] | None] = {}
    plans = []
    for cells, diffs in zip(comparison.cells, pilots, strict=True):
        span = _span_of(
            [specs[next(iter(side.values()))] for side in (cells.a, cells.b)], entry.metric, spans
        )
        sd, source, why = _sd(diffs, pooled, usable, entry.sd, span)
        n = len(cells.pairs)
        detectable = needed = None
        if sd is not None:
            detectable = mde_of(n, sd, why, alpha=alpha, power=power)
            if delta is not None:
                needed = episodes_for(delta, sd, why, alpha=alpha, power=power)
        limit = None if span is None else span[1] - span[0]
        plans.append(CellPlan(cells, n, sd, source, why, detectable, needed, len(diffs), limit))
    return ComparisonPlan(comparison, plans)


def _span_of(
    specs: Sequence[EpisodeSpec],
    metric: str,
    known: dict[tuple[object, ...], tuple[float, float] | None],
) -> tuple[float, float] | None:
    """The range the metric covers in both cells (their games may differ); None if unknown."""
    spans = []
    for spec in specs:
        game = (spec.game, spec.rounds, spec.game_options, metric)
        if game not in known:
            known[game] = metric_range(spec, metric)
        spans.append(known[game])
    if any(span is None for span in spans):
        return None
    return min(s[0] for s in spans if s), max(s[1] for s in spans if s)


def _sd(
    diffs: list[float],
    pooled: float,
    usable: list[tuple[int, float]],
    stated: float | None,
    span: tuple[float, float] | None,
) -> tuple[float | None, str, str]:
    """σ_d, its source and the source in words (module docstring's order)."""
    if len(diffs) >= 2 and statistics.stdev(diffs) > 0:
        return statistics.stdev(diffs), PILOT, f"from pilot: {len(diffs)} pairs"
    if pooled > 0:
        pairs = sum(k for k, _ in usable)
        return pooled, POOLED, f"from pilot pooled over {len(usable)} cell pairs ({pairs} pairs)"
    if stated is not None:
        return stated, STATED, "stated in the file"
    if span is None:
        return None, NONE, "no pilot and no default for this metric: state `sd:`"
    low, high = span
    why = f"by default: values in [{low:g}, {high:g}] at their widest spread"
    return (high - low) / math.sqrt(2), DEFAULT, why


def plan_lines(
    plans: Sequence[ComparisonPlan],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    delta: float | None = None,
    each: bool = False,
) -> list[str]:
    """The plan's comparisons section: a heading, each metric's meaning, then per comparison
    one line per number of pairs (its cell pairs summarised), or with `each` one line per cell
    pair; no line without comparisons."""
    if not plans:
        return []
    out = [
        f"comparisons: B - A by a paired t at α = {alpha:g} (two-sided) with power {power:.0%}; "
        "MDE = the smallest difference it detects (docs/statistics.md)"
    ]
    metrics = dict.fromkeys(plan.comparison.entry.metric for plan in plans)
    out += [f"  {metric} = {METRICS[metric]}" for metric in metrics]
    if plans[0].replicates:
        out.append(_noise_line(plans[0].replicates))
    for plan in plans:
        entry = plan.comparison.entry
        what = f"{entry.title()} ({entry.metric})"
        if not plan.cells:
            out.append(f"  {what}: no cells of this grid to compare")
            continue
        kept = _and(entry.kept()) or "nothing"
        out.append(f"  {what}: {_n(len(plan.cells), 'cell pair')} alike in {kept}, paired by "
                   f"{_and(plan.comparison.paired_by)}")  # fmt: skip
        if each:
            out += [f"    {c.cells.label()}: {_cell_line(c, delta)}" for c in plan.cells]
            continue
        groups: dict[int, list[CellPlan]] = {}
        for c in plan.cells:
            groups.setdefault(c.n, []).append(c)
        for n, group in sorted(groups.items(), reverse=True):
            out.append(f"    {_n(len(group), 'cell pair')} of {_n(n, 'pair')}: "
                       f"{_group_line(group, delta)}")  # fmt: skip
    return out


def _noise_line(replicates: int) -> str:
    """The line saying what the grid's replicate cells are for (`analysis.noise_floor`)."""
    copies = "a null copy" if replicates == 1 else f"{replicates} null copies"
    return (
        f"  noise floor: every cell also plays {copies} (replicates: {replicates}), so each "
        "comparison will be shown beside the difference between two identical cells"
    )


def _and(words: Sequence[str]) -> str:
    """'model, agent and rounds'."""
    return " and ".join(filter(None, [", ".join(words[:-1]), *words[-1:]]))


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def _beyond(c: CellPlan) -> str:
    """A note when the MDE exceeds every difference the metric allows."""
    mde = c.detectable.mde if c.detectable is not None else None
    if mde is None or c.limit is None or mde <= c.limit:
        return ""
    return f" > {c.limit:g}, the largest possible difference"


def _cell_line(c: CellPlan, delta: float | None) -> str:
    mde = c.detectable.mde if c.detectable is not None else None
    if c.n < 2:
        return f"{_n(c.n, 'pair')}: MDE undefined (at least 2 pairs per cell are needed)"
    if mde is None or c.sd is None:
        return f"{_n(c.n, 'pair')}: MDE unknown ({c.why})"
    why = f"from pilot: {_n(c.pilot_pairs, 'pair')}" if c.source == PILOT else c.why
    text = f"{_n(c.n, 'pair')}: MDE {mde:.2f}{_beyond(c)} (sd {c.sd:.2f} {why})"
    if c.needed is not None and delta is not None:
        text += f"; a difference of {delta:g} needs {_needs(c.needed.n)}"
    return text


def _needs(n: int | None) -> str:
    return "more than 10^9 pairs per cell" if n is None else f"{_n(n, 'pair')} per cell"


def _span(values: Sequence[float]) -> str:
    low, high = min(values), max(values)
    if math.isclose(low, high, rel_tol=1e-9, abs_tol=1e-12):
        return f"{low:.2f}"
    return f"{low:.2f} to {high:.2f}, median {statistics.median(values):.2f}"


def _group_line(group: Sequence[CellPlan], delta: float | None) -> str:
    known = [c for c in group if c.detectable is not None and c.detectable.mde is not None]
    if group[0].n < 2:
        return "MDE undefined (at least 2 pairs per cell are needed)"
    if not known:
        return f"MDE unknown ({group[0].why})"
    mdes = [c.detectable.mde for c in known if c.detectable and c.detectable.mde is not None]
    sds = [c.sd for c in known if c.sd is not None]
    sources = Counter(c.source for c in known)
    if len(sources) == 1:
        source = next(iter(sources))
        why = (
            f"from pilot: {sum(c.pilot_pairs for c in known)} pairs"
            if source == PILOT
            else (known[0].why)
        )
        spread = _span(sds)
        where = f"sd {spread}{',' if ' to ' in spread else ''} {why}"
    else:
        where = f"sd {_span(sds)}; " + ", ".join(
            f"{count} cell pairs' {source}" for source, count in sources.most_common()
        )
    text = f"MDE {_span(mdes)}"
    if all(_beyond(c) for c in known):
        text += _beyond(known[0])
    text += f" ({where})"
    if len(known) < len(group):
        text += (
            f"; {len(group) - len(known)} unknown ({next(c.why for c in group if c not in known)})"
        )
    if delta is not None:
        needs = [c.needed.n for c in known if c.needed is not None]
        most = None if any(n is None for n in needs) else max(n for n in needs if n is not None)
        least = None if most is None else min(n for n in needs if n is not None)
        upto = "up to " if least != most else ""
        text += f"; a difference of {delta:g} needs {upto}{_needs(most)}"
    return text
