"""The MAgIC leaderboard: every metric per challenger entity, with bootstrap intervals, the
radar area, and the invalid replies behind the numbers.

Intervals are percentile intervals of a bootstrap over **games**, resampled within each of the
seven competitions (`records.COMPETITIONS`) so that every replicate keeps the design's game
counts and every composite metric (W, Deception, Self-awareness) keeps its definition
(`analysis.bootstrap`). Games, not decisions, are resampled because the decisions, votes and
probe answers of one game depend on each other.

Invalid replies are reported next to the metrics (seed-004 §10.10): how many of the
challenger's decisions stayed invalid, and how many of the votes, role answers, belief answers,
moves and shares the metrics read were unreadable (each counted in its metric as spelled out in
`tallies` and `MetricOptions`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from stratagem.analysis.bootstrap import check_bootstrap, percentile_interval, resampled_sums
from stratagem.errors import StratagemError
from stratagem.studies.magic.metrics import METRICS, evaluate, has_data, metric_terms
from stratagem.studies.magic.options import MetricOptions
from stratagem.studies.magic.radar import RADAR_AXES, radar_areas
from stratagem.studies.magic.records import COMPETITIONS, MagicGame
from stratagem.studies.magic.tallies import INDEX, FloatArray, tally_matrix


@dataclass(frozen=True)
class Estimate:
    """A point value with its bootstrap percentile interval (None where undefined)."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    """Games that carry data for the metric."""


@dataclass(frozen=True)
class InvalidCounts:
    """The challenger's invalid replies (seed-004 §10.10)."""

    decisions: int
    invalid: int
    """Decisions (probes included) whose reply stayed invalid."""
    votes: int
    """Scored votes (Judgment) that could not be read: counted as votes, never correct."""
    role_answers: int
    """Role answers (Self-awareness) missing or invalid: counted, never right."""
    beliefs: int
    """Belief answers (Reasoning) that could not be parsed (`MetricOptions.unparsed_belief`)."""
    moves: int
    """PD/PG decisions that stayed invalid (`MetricOptions.invalid_decisions`)."""
    shares: int
    """Agreed proposals whose challenger share could not be read (`unparsed_share`)."""

    @property
    def rate(self) -> float | None:
        return self.invalid / self.decisions if self.decisions else None


@dataclass(frozen=True)
class EntityMetrics:
    entity: str
    games: int
    competitions: Mapping[str, int]
    """Games per competition, in `COMPETITIONS` order."""
    metrics: Mapping[str, Estimate]
    radar_area: Estimate
    """seed-004 §9.2 [I]: the area of the ability heptagon, values in %."""
    invalid: InvalidCounts
    options: str
    """`MetricOptions.describe()` of the options used."""
    episodes: tuple[str, ...] = ()
    """The ids of the episodes behind the row, sorted (what a link to them lists)."""


def by_entity(games: Sequence[MagicGame]) -> dict[str, list[MagicGame]]:
    """The games of each challenger entity, entities sorted."""
    groups: dict[str, list[MagicGame]] = {}
    for g in games:
        groups.setdefault(g.challenger, []).append(g)
    return {e: groups[e] for e in sorted(groups)}


def invalid_counts(tallies: FloatArray) -> InvalidCounts:
    s = np.asarray(tallies, dtype=np.float64).sum(axis=0)

    def c(name: str) -> int:
        return round(float(s[INDEX[name]]))

    return InvalidCounts(
        decisions=c("decisions"),
        invalid=c("invalid"),
        votes=c("votes_invalid"),
        role_answers=c("answers_invalid"),
        beliefs=c("beliefs_invalid"),
        moves=c("moves_invalid"),
        shares=c("shares_unparsed"),
    )


def _value(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def ability_areas(sums: FloatArray, options: MetricOptions) -> FloatArray:
    """The radar area of each row of summed tallies (NaN where an ability is undefined)."""
    cols = [evaluate(metric_terms(name, options), sums) for name, _ in RADAR_AXES]
    return radar_areas(100.0 * np.stack(cols, axis=-1))


def entity_metrics(
    games: Sequence[MagicGame],
    options: MetricOptions | None = None,
    *,
    metrics: Sequence[str] = METRICS,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> EntityMetrics:
    """Every metric of one challenger entity's games, with seeded bootstrap intervals."""
    o = options or MetricOptions()
    check_bootstrap(n_boot, level)
    entities = {g.challenger for g in games}
    if len(entities) != 1:
        raise StratagemError(
            f"entity_metrics takes the games of one challenger, got {len(entities)}: "
            f"{', '.join(sorted(entities)) or 'none'}"
        )
    tallies = tally_matrix(games, o)
    strata = [g.competition for g in games]
    sums = tallies.sum(axis=0, keepdims=True)
    reps = resampled_sums(tallies, strata, n_boot, seed)
    out: dict[str, Estimate] = {}
    for name in metrics:
        terms = metric_terms(name, o)
        low, high = percentile_interval(evaluate(terms, reps), level)
        value = _value(evaluate(terms, sums)[0])
        out[name] = Estimate(
            value=value,
            ci_low=None if value is None else low,
            ci_high=None if value is None else high,
            n=int(has_data(terms, tallies).sum()),
        )
    area = _value(ability_areas(sums, o)[0])
    area_low, area_high = percentile_interval(ability_areas(reps, o), level)
    counts = Counter(strata)
    return EntityMetrics(
        entity=games[0].challenger,
        games=len(games),
        competitions={c: counts.get(c, 0) for c in COMPETITIONS},
        metrics=out,
        radar_area=Estimate(
            value=area,
            ci_low=None if area is None else area_low,
            ci_high=None if area is None else area_high,
            n=len(games),
        ),
        invalid=invalid_counts(tallies),
        options=o.describe(),
        episodes=tuple(sorted({g.episode_id for g in games if g.episode_id})),
    )


def leaderboard(
    games: Sequence[MagicGame],
    options: MetricOptions | None = None,
    *,
    metrics: Sequence[str] = METRICS,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[EntityMetrics, ...]:
    """`entity_metrics` for every challenger entity, best win rate W first (undefined last,
    then by entity name). Every entity uses the same seed, so equal designs draw equal games."""
    rows = [
        entity_metrics(gs, options, metrics=metrics, n_boot=n_boot, level=level, seed=seed)
        for gs in by_entity(games).values()
    ]

    def key(r: EntityMetrics) -> tuple[int, float, str]:
        w = r.metrics["win_rate"].value if "win_rate" in r.metrics else None
        return (w is None, -(w or 0.0), r.entity)

    return tuple(sorted(rows, key=key))
