"""The plan's comparisons: for each compared pair of cells, the smallest difference its episodes
can detect (`stratagem run --dry-run`, `stratagem plan`), and with `--episodes-for DELTA` how
many episodes per cell a difference of DELTA needs; `analysis.plan_text` prints them.

The comparisons and their pairs come from the grid (`experiments.comparisons`). The plan runs
the power of the test the analysis will run on those very pairs:

- **each pair its own cluster** (one seed, or one pair per seed: `analysis.pair_clusters`): the
  paired t over the n pairs (`analysis.power`, n = the pairs of a cell pair), with σ_d the
  standard deviation of the paired differences b_i - a_i;
- **pairs clustered by seed** (several seeds, one holding several pairs): the cluster-robust t
  over the G seeds, whose power is the paired t's with n = G and σ = σ_c, the standard
  deviation of a seed's mean difference, σ_c² = σ_d² (1 + (m_w - 1) ρ) / m̄ with the grid's
  cluster sizes and the intra-cluster correlation ρ (`analysis.cluster_spread`: the design
  effect, Donner & Klar 2000). The episodes a difference needs are then seeds: G seeds of the
  grid's pairs per seed.

σ_d is, in this order of preference:

1. **pilot**: the sample standard deviation of the differences of the pairs already stored as
   finished (this experiment's episodes of those very cells), when there are at least 2 and
   they are not all equal; clustered, the pilot's between- and within-seed components
   (`cluster_spread.components`) where it has 2 seeds and one with several pairs, which for
   a pilot of whole seeds is the variance of its seeds' mean differences;
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

ρ, where the pairs are clustered and no pilot of the cell pair measures it, is the comparison's
pilot ICC pooled over its cell pairs (`cluster_spread.pooled`), else `DEFAULT_ICC` (or `plan
--icc`): 1, each seed's pairs counting as one, the most clustering can cost. With ρ = 1 and the
default σ_d the bound still holds: a seed's mean lies in [lo, hi] too.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stratagem.analysis.cluster_spread import Spread, assumed, check_icc, components, pooled
from stratagem.analysis.pair_clusters import shared_clusters
from stratagem.analysis.power import ALPHA, POWER, Detectable, Needed, episodes_for
from stratagem.analysis.power import minimum_detectable as mde_of
from stratagem.analysis.tallies import EpisodeTally, episode_tallies
from stratagem.experiments.comparisons import (
    CellPair,
    PairKey,
    PlannedComparison,
    metric_range,
    planned_comparisons,
)
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.store import ResultStore

PILOT, POOLED, STATED, DEFAULT, NONE = "pilot", "pooled pilot", "stated", "default", "none"
CLUSTER_BY = "seed"
DEFAULT_ICC = 1.0
"""ρ where no pilot measures it: each seed's pairs count as one pair (module docstring)."""


@dataclass(frozen=True)
class CellPlan:
    """One compared pair of cells: its pairs in the grid, its MDE, and what σ came from."""

    cells: CellPair
    n: int
    sd: float | None
    """σ of the test's units: a pair's difference, or a seed's mean difference (clustered)."""
    source: str
    """PILOT, POOLED, STATED, DEFAULT or NONE."""
    why: str
    """The source in words: "from pilot: 12 pairs"."""
    detectable: Detectable | None
    needed: Needed | None = None
    """Pairs per cell a difference needs; seeds per cell where the pairs are clustered."""
    pilot_pairs: int = 0
    """Pairs of this cell pair already stored as finished, with the metric defined."""
    limit: float | None = None
    """The largest difference the metric allows (hi - lo), where it is bounded."""
    clusters: tuple[int, ...] = ()
    """The pairs of each seed where a seed holds several (the test runs over seeds); () when
    each pair is its own cluster."""
    icc: str = ""
    """ρ in words where clustered: "ICC 0.21", "ICC 1 assumed"."""

    def pairs_needed(self) -> int | None:
        """Pairs per cell a difference needs: the seeds it needs times the grid's pairs per
        seed, where clustered."""
        if self.needed is None or self.needed.n is None:
            return None
        if not self.clusters:
            return self.needed.n
        return math.ceil(self.needed.n * self.n / len(self.clusters) - 1e-9)


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
    icc: float = DEFAULT_ICC,
) -> list[ComparisonPlan]:
    """Every comparison of the grid with each cell pair's MDE (and the pairs a difference
    `delta` needs), σ chosen as the module docstring says; `icc` the ρ assumed where no pilot
    measures it."""
    check_icc(icc)
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
        plan = _plan(comparison, values[metric], by_id, alpha, power, delta, icc)
        out.append(dataclasses.replace(plan, replicates=config.replicates))
    return out


def _pilot_differences(cells: CellPair, values: Mapping[str, float]) -> dict[PairKey, float]:
    return {
        k: values[cells.b[k]] - values[cells.a[k]]
        for k in cells.pairs
        if cells.a[k] in values and cells.b[k] in values
    }


def _grouped(diffs: Mapping[PairKey, float], seed_at: int) -> list[list[float]]:
    """The pilot differences of each seed."""
    groups: dict[Hashable, list[float]] = defaultdict(list)
    for key, d in diffs.items():
        groups[key[seed_at]].append(d)
    return list(groups.values())


def _plan(
    comparison: PlannedComparison,
    values: Mapping[str, float],
    specs: Mapping[str, EpisodeSpec],
    alpha: float,
    power: float,
    delta: float | None,
    icc: float,
) -> ComparisonPlan:
    entry = comparison.entry
    seed_at = len(entry.pooled())  # a pair's key: the pooled axes' values, then its seed
    pilots = [_pilot_differences(cells, values) for cells in comparison.cells]
    usable = [(len(d), statistics.stdev(d.values())) for d in pilots if len(d) >= 2]
    dof = sum(k - 1 for k, _ in usable)
    pooled_sd = math.sqrt(sum((k - 1) * s * s for k, s in usable) / dof) if dof else 0.0
    own = [components(_grouped(d, seed_at)) for d in pilots]
    shared = pooled([s for s in own if s is not None])
    spans: dict[tuple[object, ...], tuple[float, float] | None] = {}
    plans = []
    for cells, diffs, spread in zip(comparison.cells, pilots, own, strict=True):
        span = _span_of(
            [specs[next(iter(side.values()))] for side in (cells.a, cells.b)], entry.metric, spans
        )
        sd, source, why = _sd(list(diffs.values()), pooled_sd, usable, entry.sd, span)
        grid = shared_clusters(cells.pairs, {k: k[seed_at] for k in cells.pairs})
        sizes = () if grid is None else tuple(Counter(grid.values()).values())
        rho = ""
        if sd is not None and sizes:
            measured = spread if source == PILOT else None
            sd, rho = _cluster_sd(sd, sizes, measured, shared, icc)
            if measured is not None:
                why += f" in {measured.df_between + 1} {CLUSTER_BY}s"
        n = len(cells.pairs)
        units = len(sizes) or n
        detectable = needed = None
        if sd is not None:
            detectable = mde_of(units, sd, why, alpha=alpha, power=power)
            if delta is not None:
                needed = episodes_for(delta, sd, why, alpha=alpha, power=power)
        limit = None if span is None else span[1] - span[0]
        plans.append(
            CellPlan(cells, n, sd, source, why, detectable, needed, len(diffs), limit, sizes, rho)
        )
    return ComparisonPlan(comparison, plans)


def _cluster_sd(
    sd: float, sizes: Sequence[int], own: Spread | None, shared: Spread | None, icc: float
) -> tuple[float, str]:
    """σ_c of a seed's mean difference and ρ in words: the cell pair's own pilot components,
    else σ_d split by the comparison's pooled pilot ICC, else by the assumed one."""
    if own is not None:
        return own.cluster_sd(sizes), f"ICC {own.icc:.2f}"
    if shared is not None:
        return assumed(sd, shared.icc).cluster_sd(sizes), f"ICC {shared.icc:.2f} pooled from pilot"
    return assumed(sd, icc).cluster_sd(sizes), f"ICC {icc:g} assumed"


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
