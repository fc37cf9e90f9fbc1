"""seed-003's paired counterfactual analysis (ours, not the paper's): each variant against its
default game, cell by cell.

The paper compares its variant tables with the default ones by eye. Here a variant cell and its
default cell share model, prompt and opponent, and their runs pair by seed and repetition, so
for each per-game metric of `PAIRED_METRICS` the difference variant − default gets
`analysis.comparisons.compare_paired`'s paired t: its 95% interval and p-value. The runs of one
seed share its chance moves; when a cell holds several seeds and one of them several runs, the
pairs are clustered by seed (the cluster-robust t, `analysis.pair_clusters`), otherwise each run
is its own cluster (the paired t, as seed-003's five repetitions of one seed give). Each metric's
comparisons over a family form one table, and one family of tests: their p-values are
Holm-adjusted together (`analysis.multiple`). The percentile bootstrap of the pairs, the interval
this analysis printed before, stays available (`PairedCell.bootstrap`).

Persistence (`analysis.paired`) says how much of the default game's behaviour survives in the
variant.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from stratagem.analysis import paired
from stratagem.analysis.comparisons import Comparison, compare_paired
from stratagem.analysis.multiple import adjust_comparisons
from stratagem.analysis.pair_clusters import shared_clusters
from stratagem.studies.counterfactual.tables import COLUMN_ORDER, ROW_ORDER, StudyGame, rank

PAIRED_METRICS: tuple[str, ...] = ("points", "cooperation", "m")
"""The per-game metrics compared (`metrics.game_metrics` keys); cooperation only where it is
defined (2-action games)."""

DECIMALS: Mapping[str, int] = {"points": 1, "cooperation": 2, "m": 1}
"""As the study's tables print each metric."""

ALPHA = 0.05
"""A difference is marked when its corrected p-value is below this."""

PAIRED_BY = "seed and repetition"
CLUSTER_BY = "seed"

Runs = dict[str, float]
"""Run -> the metric's value in that run."""


@dataclass(frozen=True)
class PairedCell:
    """One variant against its default game in one model, prompt and opponent."""

    model: str
    prompt: str
    opponent: str
    variant_game: str
    variant: str
    differences: Mapping[str, Comparison]
    """Metric -> variant minus default over the paired runs (paired or cluster-robust t),
    Holm-adjusted across its table; a metric without a pair is absent."""
    persistence: paired.Persistence
    values: Mapping[str, tuple[Runs, Runs]] = field(repr=False, compare=False)
    """Metric -> (default, variant) values by run, kept for the bootstrap."""
    counts: tuple[paired.FloatArray, paired.FloatArray] = field(repr=False, compare=False)
    """Default and variant context counts, kept for the interval (computed when asked)."""
    n_boot: int = 1000
    seed: int = 0

    @property
    def points(self) -> Comparison | None:
        """Variant minus default total points."""
        return self.differences.get("points")

    def bootstrap(self, metric: str) -> Comparison | None:
        """The paired percentile bootstrap of a metric's difference (no p-value): the interval
        this analysis showed before the t; None without a pair."""
        if metric not in self.differences:
            return None
        default, variant = self.values[metric]
        return compare_paired(
            default, variant, paired_by=PAIRED_BY, method="bootstrap", n_boot=self.n_boot,
            seed=self.seed,
        )  # fmt: skip

    @functools.cached_property
    def persistence_ci(self) -> tuple[float | None, float | None]:
        """Bootstrap interval of the persistence score; computed on demand, since the report
        shows only the score (1,500 cells of seed-003's games would spend a second on it)."""
        d, v = self.counts
        return paired.interval_of_counts(d, v, n_boot=self.n_boot, seed=self.seed)


@dataclass(frozen=True)
class PairedAnalysis:
    """A family's paired cells, and under each metric's table the statement of its correction."""

    cells: tuple[PairedCell, ...]
    statements: Mapping[str, str]
    """Metric -> "p-values Holm-adjusted (family-wise error rate) across N comparisons." ("" for
    a single test)."""

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics with at least one comparison, in `PAIRED_METRICS` order."""
        return tuple(m for m in PAIRED_METRICS if any(m in c.differences for c in self.cells))


def claimed(comparison: Comparison | None) -> bool:
    """Whether a difference is claimed: its corrected p-value (or its p-value, alone in its
    table) is below `ALPHA`."""
    if comparison is None:
        return False
    p = comparison.p_adjusted if comparison.p_adjusted is not None else comparison.p
    return p is not None and p < ALPHA


def _values(
    base: Mapping[str, StudyGame], other: Mapping[str, StudyGame], metric: str
) -> tuple[Runs, Runs]:
    """The runs both sides have a value of `metric` in, default's then variant's."""
    a: Runs = {}
    b: Runs = {}
    for run in sorted(set(base) & set(other)):
        x, y = base[run].metrics.get(metric), other[run].metrics.get(metric)
        if x is not None and y is not None:
            a[run], b[run] = float(x), float(y)
    return a, b


def compare_runs(default: Runs, variant: Runs, seeds: Mapping[str, str]) -> Comparison:
    """Variant minus default over the runs both have, clustered by seed where that clusters
    anything (module docstring)."""
    clusters = shared_clusters([r for r in default if r in variant], seeds)
    return compare_paired(
        default, variant, paired_by=PAIRED_BY, clusters=clusters,
        cluster_by=CLUSTER_BY if clusters is not None else None,
    )  # fmt: skip


def paired_analysis(
    games: Sequence[StudyGame], family: Sequence[str], *, n_boot: int = 1000, seed: int = 0
) -> PairedAnalysis:
    """Default vs each variant, per model, prompt and opponent, each metric's p-values adjusted
    across the family's comparisons of that metric."""
    default = family[0]
    by_cell: dict[tuple[str, str, str, str], dict[str, StudyGame]] = defaultdict(dict)
    for g in games:
        if g.game in family:
            by_cell[(g.model, g.prompt, g.opponent, g.game)][g.run] = g
    cells: list[PairedCell] = []
    keys = sorted({(m, p, o) for m, p, o, _ in by_cell}, key=lambda k: (
        k[0], rank(k[1], ROW_ORDER), rank(k[2], COLUMN_ORDER)))  # fmt: skip
    for model, prompt, opponent in keys:
        base = by_cell.get((model, prompt, opponent, default), {})
        if not base:
            continue
        n_actions = len(next(iter(base.values())).data.labels)
        # Counted once, compared with every variant.
        d_counts = paired.context_counts([g.data.moves for g in base.values()], n_actions)
        for game in family[1:]:
            other = by_cell.get((model, prompt, opponent, game), {})
            if not other:
                continue
            seeds = {run: g.seed for run, g in other.items()}
            values = {m: _values(base, other, m) for m in PAIRED_METRICS}
            values = {m: v for m, v in values.items() if v[0]}
            v_counts = paired.context_counts([g.data.moves for g in other.values()], n_actions)
            cells.append(
                PairedCell(
                    model, prompt, opponent, game, next(iter(other.values())).variant,
                    {m: compare_runs(a, b, seeds) for m, (a, b) in values.items()},
                    paired.persistence_of_counts(d_counts, v_counts), values,
                    (d_counts, v_counts), n_boot, seed,
                )
            )  # fmt: skip
    return _adjusted(cells)


def _adjusted(cells: list[PairedCell]) -> PairedAnalysis:
    """Each metric's comparisons Holm-adjusted together: one table, one family."""
    statements: dict[str, str] = {}
    differences = [dict(c.differences) for c in cells]
    for metric in PAIRED_METRICS:
        where = [i for i, d in enumerate(differences) if metric in d]
        if not where:
            continue
        adjusted, statements[metric] = adjust_comparisons([differences[i][metric] for i in where])
        for i, comparison in zip(where, adjusted, strict=True):
            differences[i][metric] = comparison
    return PairedAnalysis(
        tuple(replace(c, differences=d) for c, d in zip(cells, differences, strict=True)),
        statements,
    )
