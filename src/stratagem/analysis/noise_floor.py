"""The noise floor: how far apart two identical cells come out, for a comparison to beat.

A difference between two cells means something only if it is larger than what two runs of one
cell show. The file's `replicates:` plays a null copy of every cell (`experiments.replicates`:
the same settings, seeds and repetitions under new sampling seeds); this module compares each
cell with its copy exactly as a comparison compares two cells, and sums the copies' differences
up into one number per metric that a table prints under its comparisons.

**A cell and its copy.** The episodes of a cell and of its k-th copy that share a seed and a
repetition form a pair, d_i = copy_i - cell_i, over seat 0's per-episode metric (cooperation,
score or invalid rate, as the plan reads them: `analysis.plan_power.metric_value`). Δ_c, the
cell's replicate difference, is their mean with the cluster-robust t interval of
`analysis.comparisons.compare_paired`, the repetitions of one seed a cluster (with one
repetition, the paired t).

**The floor.** Over the C replicate differences Δ_1..Δ_C of a metric (the cells' copies, or
those a table shows), with

    s_0 = √( (1/C) · Σ_c Δ_c² )

the noise floor is

    floor = t_{(1+level)/2, C} · s_0        (level 0.95: t_{0.975, C})

the half-width of the 95% prediction interval of the difference between two identical cells:
a cell and its copy are identical by construction, so E[Δ_c] = 0 is known, not estimated, and
s_0² (the mean square around that known mean) has C degrees of freedom; if the Δ_c are
independent N(0, σ²), a new one satisfies Δ_new / s_0 ~ t_C, the definition of Student's t
(Student 1908; Fisher 1925, "Applications of Student's distribution", Metron 5:90-104). So
identical cells differ by less than the floor 95% of the time, and a comparison whose
difference does not exceed it is one that two identical cells produce. With several copies of
a cell, each copy's difference enters s_0 and C counts the cells (their differences share the
cell's episodes, so they are not independent: the cells are the degrees of freedom).

What it catches that each comparison's own interval does not: whatever two runs of one setting
do not share and the interval's model leaves out (a provider's model changing between the
runs, a cache, a clustering the pairs do not state). If the intervals are right, about 5% of
the replicate intervals exclude 0 (`NoiseFloor.excluding_zero` counts them). It is a summary
over cells whose spread differs (games, opponents, numbers of pairs): a comparison that pools
several cells into its pairs has a smaller spread under the null than the floor of single
cells, so for it the floor is conservative.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from scipy import stats

from stratagem.analysis.cells import CellKey, cell_key, move_tally, seat_totals
from stratagem.analysis.comparisons import Comparison, compare_paired
from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.plan_power import metric_value
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.tallies import EpisodeTally
from stratagem.errors import StratagemError
from stratagem.experiments.compare_entry import METRICS
from stratagem.experiments.replicates import replicate_of, unreplicated

LEVEL = 0.95
PAIRED_BY = "seed and repetition"
CLUSTER_BY = "seed"

NAMES = {"cooperation": "cooperation rate", "score": "score", "invalid": "invalid-move rate"}
"""Each metric as a sentence names it."""

Where = Callable[[CellKey], bool]
"""Which cells count (by the cell's own key, without the replicate); None: all of them."""


@dataclass(frozen=True)
class ReplicateDifference:
    """One cell against one of its copies: copy minus cell over their paired episodes."""

    cell: CellKey
    """The cell's own key (`analysis.cells.cell_key`); the copy's agent adds `[replicate k]`."""
    replicate: int
    comparison: Comparison


@dataclass(frozen=True)
class NoiseFloor:
    """The noise floor of one metric over an experiment's replicate differences."""

    metric: str
    differences: tuple[ReplicateDifference, ...]
    level: float
    cells: int
    """C: the cells with a copy, the degrees of freedom of `rms`."""
    rms: float
    """s_0 = √((1/C') Σ Δ²) over the C' differences (C' = C with one copy per cell)."""
    floor: float
    """t_{(1+level)/2, C} · s_0: identical cells differ by less with probability `level`."""

    @property
    def mean_abs(self) -> float:
        """The mean |Δ| over the replicate differences."""
        return sum(abs(d.comparison.estimate) for d in self.differences) / len(self.differences)

    @property
    def largest(self) -> float:
        return max(abs(d.comparison.estimate) for d in self.differences)

    @property
    def excluding_zero(self) -> int:
        """Replicate differences whose interval excludes 0 (about 5% if the intervals are right)."""
        return sum(d.comparison.significant for d in self.differences)

    def beaten_by(self, difference: float) -> bool:
        """True when a comparison's difference is larger, in size, than the floor."""
        return abs(difference) > self.floor

    def text(self, digits: int = 2) -> str:
        """'noise floor (12 replicate cells): ±0.04', for beside a number."""
        cells = f"{self.cells} replicate cell{'s' * (self.cells != 1)}"
        return f"noise floor ({cells}): ±{self.floor:.{digits}f}"

    def note(self, digits: int = 2) -> str:
        """The sentence for under a comparison table."""
        return (
            f"Noise floor of the {NAMES.get(self.metric, self.metric)}: "
            f"±{self.floor:.{digits}f}, the difference two identical cells stay within "
            f"{self.level:.0%} of the time (from {self.cells} cell{'s' * (self.cells != 1)} "
            "played again under new sampling seeds; docs/statistics.md): a difference inside "
            "it is one that identical cells show."
        )


def has_replicates(source: ReportData | Iterable[EpisodeData]) -> bool:
    """Whether any episode is a cell's copy (the report's section applies)."""
    if isinstance(source, ReportData):
        return bool(source.replicates) or has_replicates(source.episodes)
    return any(replicate_of(e.spec) for e in source)


def without_copies(data: ReportData) -> ReportData:
    """The report's data with the replicate copies moved out of `episodes` (into `replicates`):
    what the study sections read, so that a copy never enters a study's table, while
    `noise_floor` of it still finds them. The same object where there is no copy."""
    copies = [e for e in data.episodes if replicate_of(e.spec)]
    if not copies:
        return data
    own = [e for e in data.episodes if not replicate_of(e.spec)]
    return dataclasses.replace(data, episodes=own, replicates=[*data.replicates, *copies])


def tally_of(e: EpisodeData) -> EpisodeTally:
    """An episode as `analysis.tallies` counts it for seat 0, from its loaded records."""
    totals = tuple(seat_totals(e))
    cooperative, valid, invalid = move_tally(e, 0)
    return EpisodeTally(
        e.record.id, e.record.seed, e.spec.get("repetition"), cell_key(e, 0),
        tuple(s.name for s in e.seats), totals, cooperative, valid, invalid,
        replicate=replicate_of(e.spec),
    )  # fmt: skip


def tallies_of(source: ReportData | Iterable[EpisodeData | EpisodeTally]) -> list[EpisodeTally]:
    """The episodes with seats of a report, of loaded episodes, or tallies as given."""
    episodes = [*source.episodes, *source.replicates] if isinstance(source, ReportData) else source
    return [e if isinstance(e, EpisodeTally) else tally_of(e) for e in episodes if _seated(e)]


def _seated(e: EpisodeData | EpisodeTally) -> bool:
    return bool(e.lineup) if isinstance(e, EpisodeTally) else bool(e.seats)


def replicate_differences(
    tallies: Iterable[EpisodeTally],
    metric: str,
    *,
    values: Mapping[str, float] | None = None,
    where: Where | None = None,
    level: float = LEVEL,
) -> list[ReplicateDifference]:
    """Each cell against each of its copies (module docstring), in the cells' order of
    appearance; a cell and copy without a pair with the metric defined are left out. `values`:
    a study's own per-episode metric by episode id (then `metric` only names it), instead of
    one of `METRICS`."""
    if values is None and metric not in METRICS:
        raise StratagemError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    sides: dict[tuple[CellKey, int], dict[tuple[str, str], float]] = defaultdict(dict)
    for t in tallies:
        value = metric_value(t, metric) if values is None else values.get(t.id)
        if value is None or math.isnan(value):
            continue
        cell = _own_key(t.key, t.replicate)
        if where is not None and not where(cell):
            continue
        sides[(cell, t.replicate)][(str(t.seed), str(t.repetition))] = value
    out = []
    for (cell, k), copy in sides.items():
        own = sides.get((cell, 0))
        if k == 0 or own is None or not any(key in own for key in copy):
            continue
        clusters: dict[tuple[str, str], Hashable] = {key: key[0] for key in copy}
        comparison = compare_paired(
            own, copy, paired_by=PAIRED_BY, clusters=clusters, cluster_by=CLUSTER_BY, level=level
        )
        out.append(ReplicateDifference(cell, k, comparison))
    return out


def own_cell(e: EpisodeData) -> CellKey:
    """The cell an episode belongs to, a copy's being the cell it copies: what a study uses to
    pick the copies of its own cells."""
    return _own_key(cell_key(e, 0), replicate_of(e.spec))


def _own_key(key: CellKey, replicate: int) -> CellKey:
    model, agent, game, opponent, rounds = key
    return model, unreplicated(agent, replicate), game, opponent, rounds


def floor_of(
    differences: Sequence[ReplicateDifference], metric: str, level: float = LEVEL
) -> NoiseFloor | None:
    """The floor over replicate differences (module docstring); None without any."""
    if not differences:
        return None
    cells = len({d.cell for d in differences})
    rms = math.sqrt(sum(d.comparison.estimate**2 for d in differences) / len(differences))
    t = float(stats.t.ppf((1 + level) / 2, cells))
    return NoiseFloor(metric, tuple(differences), level, cells, rms, t * rms)


def noise_floor(
    source: ReportData | Iterable[EpisodeData | EpisodeTally],
    metric: str,
    *,
    values: Mapping[str, float] | None = None,
    where: Where | None = None,
    level: float = LEVEL,
) -> NoiseFloor | None:
    """The noise floor of `metric` (cooperation, score or invalid: seat 0's, per episode) over
    the replicate cells of a report's episodes (or of loaded episodes, or of
    `analysis.tallies`' tallies), restricted to the cells `where` accepts (by the cell's own
    key: model, agent, game, opponent, rounds); None when no copy of such a cell was played.
    A study's own metric: its per-episode `values` by episode id, `metric` its name."""
    if not isinstance(source, ReportData):
        source = list(source)
    elif not has_replicates(source):
        return None
    tallies = tallies_of(source)
    if not any(t.replicate for t in tallies):
        return None
    differences = replicate_differences(tallies, metric, values=values, where=where, level=level)
    return floor_of(differences, metric, level)


__all__ = [
    "NoiseFloor",
    "ReplicateDifference",
    "floor_of",
    "has_replicates",
    "noise_floor",
    "own_cell",
    "replicate_differences",
    "tallies_of",
    "without_copies",
]
