"""PGM-aware agent vs its vanilla twin (seed-004 §9.2 "PGM gains" and "Significance").

Two entities are twins when they differ only in architecture (`"m|plain"` vs `"m|pgm"`). Their
games are paired by (game, setting, challenger seats, seed, repetition), which removes what a pair
shares (the setting, the seats, the defenders' fixed openings); games without a twin are left
out and counted. For each metric:

- `diff` = the metric over the PGM games minus the metric over their vanilla twins (the paper's
  per-ability gain, in absolute points: seed-004 §10.12 [I]);
- its interval: a paired bootstrap, resampling matched pairs within each competition, both sides
  with the same draws (`analysis.bootstrap`);
- `p_value`: scipy's paired t-test (the paper's "t-tests per vanilla/PGM pair", unit unstated,
  §9.2 [I]: here the game) on each game's own contribution to the metric
  (`metrics.unit_scores`: the metric on that game alone, a term the game has no data for counting
  0); games where either twin has no such contribution are left out of the test. For a metric
  with one ratio and a constant denominator per game, the mean unit difference equals `diff`.

The radar-area gain (the paper's "+37%") is area(PGM) / area(vanilla) - 1 over the matched
games, with an interval from the same paired replicates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from stratagem.analysis.bootstrap import check_bootstrap, percentile_interval, resample_counts
from stratagem.errors import StratagemError
from stratagem.studies.magic.leaderboard import Estimate, ability_areas, by_entity
from stratagem.studies.magic.metrics import METRICS, evaluate, metric_terms, unit_scores
from stratagem.studies.magic.options import MetricOptions
from stratagem.studies.magic.radar import area_gain
from stratagem.studies.magic.records import MagicGame, split_entity
from stratagem.studies.magic.tallies import FloatArray, tally_matrix

PairKey = tuple[str, int, tuple[int, ...], int, int]
"""`MagicGame.pair_key`: (game, setting, challenger seats, seed, repetition)."""

VANILLA_ARCH = "plain"
PGM_ARCH = "pgm"


@dataclass(frozen=True)
class PairedMetric:
    metric: str
    vanilla: float | None
    pgm: float | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    units: int
    """Matched games in the t-test (both twins contribute to the metric)."""
    t_statistic: float | None
    p_value: float | None
    """None with fewer than 2 units or when every unit difference is the same."""


@dataclass(frozen=True)
class PgmComparison:
    model: str
    vanilla: str
    pgm: str
    matched: int
    vanilla_only: int
    pgm_only: int
    metrics: Mapping[str, PairedMetric]
    area_vanilla: float | None
    area_pgm: float | None
    area_gain: Estimate
    """Relative radar-area change over the matched games (n = matched games)."""


def architecture_pairs(
    entities: Sequence[str], vanilla_arch: str = VANILLA_ARCH, pgm_arch: str = PGM_ARCH
) -> list[tuple[str, str]]:
    """(vanilla, pgm) entities sharing a model, sorted by model."""
    by_model: dict[str, dict[str, str]] = {}
    for e in set(entities):
        model, arch = split_entity(e)
        by_model.setdefault(model, {})[arch] = e
    return [
        (archs[vanilla_arch], archs[pgm_arch])
        for _model, archs in sorted(by_model.items())
        if vanilla_arch in archs and pgm_arch in archs
    ]


def _keyed(games: Sequence[MagicGame]) -> dict[PairKey, MagicGame]:
    out: dict[PairKey, MagicGame] = {}
    for g in games:
        if g.pair_key in out:
            raise StratagemError(
                f"two games of {g.challenger} share (game, setting, seats, seed, repetition) "
                f"{g.pair_key}: pairing with the other architecture would be ambiguous"
            )
        out[g.pair_key] = g
    return out


def _ttest(u_v: FloatArray, u_p: FloatArray) -> tuple[int, float | None, float | None]:
    ok = ~np.isnan(u_v) & ~np.isnan(u_p)
    v, p = u_v[ok], u_p[ok]
    n = int(ok.sum())
    d = p - v
    if n < 2 or np.all(d == d[0]):
        return n, None, None
    from scipy import stats  # deferred: importing scipy costs about half a second

    res = stats.ttest_rel(p, v)
    t, pv = float(res.statistic), float(res.pvalue)
    return n, (None if math.isnan(t) else t), (None if math.isnan(pv) else pv)


def _value(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def compare_architectures(
    vanilla_games: Sequence[MagicGame],
    pgm_games: Sequence[MagicGame],
    options: MetricOptions | None = None,
    *,
    metrics: Sequence[str] = METRICS,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> PgmComparison:
    """Paired comparison of one vanilla entity's games with its PGM twin's."""
    o = options or MetricOptions()
    check_bootstrap(n_boot, level)
    names = {
        side: {g.challenger for g in gs} for side, gs in (("v", vanilla_games), ("p", pgm_games))
    }
    if len(names["v"]) != 1 or len(names["p"]) != 1:
        raise StratagemError("compare_architectures takes the games of one entity per side")
    vanilla, pgm = names["v"].pop(), names["p"].pop()
    kv, kp = _keyed(vanilla_games), _keyed(pgm_games)
    keys = sorted(set(kv) & set(kp))
    if not keys:
        raise StratagemError(f"{vanilla} and {pgm} have no game in common to pair")
    t_v = tally_matrix([kv[k] for k in keys], o)
    t_p = tally_matrix([kp[k] for k in keys], o)
    strata = [kv[k].competition for k in keys]
    s_v, s_p = t_v.sum(axis=0, keepdims=True), t_p.sum(axis=0, keepdims=True)
    blocks = [(c @ t_v, c @ t_p) for c in resample_counts(strata, n_boot, seed)]
    r_v = np.concatenate([b[0] for b in blocks])
    r_p = np.concatenate([b[1] for b in blocks])
    out: dict[str, PairedMetric] = {}
    for name in metrics:
        terms = metric_terms(name, o)
        mv, mp = _value(evaluate(terms, s_v)[0]), _value(evaluate(terms, s_p)[0])
        diff = None if mv is None or mp is None else mp - mv
        low, high = percentile_interval(evaluate(terms, r_p) - evaluate(terms, r_v), level)
        units, t, p = _ttest(unit_scores(terms, t_v), unit_scores(terms, t_p))
        out[name] = PairedMetric(
            metric=name,
            vanilla=mv,
            pgm=mp,
            diff=diff,
            ci_low=None if diff is None else low,
            ci_high=None if diff is None else high,
            units=units,
            t_statistic=t,
            p_value=p,
        )
    a_v, a_p = _value(ability_areas(s_v, o)[0]), _value(ability_areas(s_p, o)[0])
    gain = None if a_v is None or a_p is None else area_gain(a_v, a_p)
    with np.errstate(divide="ignore", invalid="ignore"):
        areas_v = ability_areas(r_v, o)
        reps = np.where(areas_v > 0, ability_areas(r_p, o) / areas_v - 1, np.nan)
    g_low, g_high = percentile_interval(reps, level)
    return PgmComparison(
        model=split_entity(vanilla)[0],
        vanilla=vanilla,
        pgm=pgm,
        matched=len(keys),
        vanilla_only=len(kv) - len(keys),
        pgm_only=len(kp) - len(keys),
        metrics=out,
        area_vanilla=a_v,
        area_pgm=a_p,
        area_gain=Estimate(
            value=gain,
            ci_low=None if gain is None else g_low,
            ci_high=None if gain is None else g_high,
            n=len(keys),
        ),
    )


def pgm_comparisons(
    games: Sequence[MagicGame],
    options: MetricOptions | None = None,
    *,
    vanilla_arch: str = VANILLA_ARCH,
    pgm_arch: str = PGM_ARCH,
    metrics: Sequence[str] = METRICS,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[PgmComparison, ...]:
    """`compare_architectures` for every model played with both architectures."""
    groups = by_entity(games)
    return tuple(
        compare_architectures(
            groups[v], groups[p], options, metrics=metrics, n_boot=n_boot, level=level, seed=seed
        )
        for v, p in architecture_pairs(list(groups), vanilla_arch, pgm_arch)
    )
