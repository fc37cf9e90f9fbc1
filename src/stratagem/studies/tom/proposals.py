"""Proposal behaviour (seed-002 §5): does the proposer balance what it asks for against what it
gives, valued by its own V0? The (request, offer) scatter, its OLS slope m and Pearson r, with
episode-level bootstrap intervals (Figure 5's m–r map).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from stratagem.analysis.bootstrap import check_bootstrap, percentile_interval, resample_counts
from stratagem.studies.tom.options import DEFAULTS, TomOptions
from stratagem.studies.tom.records import Group, Items, TomGame, Values

Key = tuple[str, str]
FloatArray = npt.NDArray[np.float64]
TINY = 1e-12
"""Relative variance below which a slope or correlation is undefined (all x or all y equal)."""


@dataclass(frozen=True)
class ProposalPoint:
    """One proposal valued by its proposer's V0 at that turn."""

    episode_id: str
    model: str
    group: Group
    turn: int
    request: float
    offer: float
    accepted: bool | None


def value_of(items: Items, values: Values) -> float:
    """§5 [A]: Σ count·V0(i) over a multiset; an item the report does not score counts 0."""
    return float(sum(n * values.get(item, 0) for item, n in items.items()))


def proposal_points(
    games: Sequence[TomGame], options: TomOptions = DEFAULTS
) -> list[ProposalPoint]:
    """Every delivered proposal of the focal seat (both seats if `include_baseline`), valued by
    the V0 its proposer reported at the same turn; one without a readable V0 gives no point.
    Empty proposals are kept (§5 keeps every valid one) unless `skip_empty`."""
    points: list[ProposalPoint] = []
    for game in games:
        for p in game.proposals:
            if p.proposer != game.focal and not options.include_baseline:
                continue
            if p.empty and options.skip_empty:
                continue
            report = game.report(p.turn, p.proposer)
            if report is None or report.v0 is None:
                continue
            points.append(
                ProposalPoint(
                    game.episode_id,
                    game.model,
                    game.group,
                    p.turn,
                    value_of(p.request, report.v0),
                    value_of(p.offer, report.v0),
                    p.accepted,
                )
            )
    return points


@dataclass(frozen=True)
class MR:
    """OLS offer = m·request + c and Pearson r (§5); None where undefined."""

    m: float | None
    c: float | None
    r: float | None
    n: int


def _moments(w: FloatArray, x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Weighted slope and correlation of y on x, one per row of weights `w` (NaN if undefined).

    §5: m = cov(x, y)/var(x), r = cov(x, y)/sqrt(var(x)·var(y)), here as weighted sums so a
    bootstrap replicate is just a row of draw counts.
    """
    # a row that drew only games without points weighs nothing: its moments are NaN (undefined)
    sw = np.where(w.sum(axis=1) > 0, w.sum(axis=1), np.nan)
    mx, my = (w @ x) / sw, (w @ y) / sw
    vx = (w @ (x * x)) / sw - mx**2
    vy = (w @ (y * y)) / sw - my**2
    cxy = (w @ (x * y)) / sw - mx * my
    scale_x = max(float(np.max(x * x)), 1.0)
    scale_y = max(float(np.max(y * y)), 1.0)
    with np.errstate(invalid="ignore"):
        ok_x = vx > TINY * scale_x
        ok_xy = ok_x & (vy > TINY * scale_y)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(ok_x, cxy / np.where(ok_x, vx, 1.0), np.nan)
        r = np.where(ok_xy, cxy / np.sqrt(np.where(ok_xy, vx * vy, 1.0)), np.nan)
    return m, np.clip(r, -1.0, 1.0)


def _none(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def fit_mr(points: Sequence[ProposalPoint]) -> MR:
    """§5: m, c of the OLS line and Pearson r; all None with fewer than 2 points or no spread."""
    n = len(points)
    if n < 2:
        return MR(None, None, None, n)
    x = np.array([p.request for p in points], dtype=np.float64)
    y = np.array([p.offer for p in points], dtype=np.float64)
    m, r = _moments(np.ones((1, n)), x, y)
    slope = _none(float(m[0]))
    c = None if slope is None else float(y.mean() - slope * x.mean())
    return MR(slope, c, _none(float(r[0])), n)


@dataclass(frozen=True)
class MRSummary:
    """m and r of one (model, group) with their 90% episode-bootstrap intervals (§5)."""

    m: float | None
    r: float | None
    n: int
    episodes: int
    """The games resampled: every game of the (model, group), with a proposal or not (§5)."""
    m_ci: tuple[float, float] | None
    r_ci: tuple[float, float] | None
    m_defined: int = 0
    """Bootstrap replicates in which m was defined (the interval is over these)."""
    r_defined: int = 0
    replicates: int = 0


def _interval(stats: FloatArray, level: float) -> tuple[float, float] | None:
    low, high = percentile_interval(stats, level)
    return None if low is None or high is None else (low, high)


def mr_with_ci(
    points: Sequence[ProposalPoint],
    options: TomOptions = DEFAULTS,
    episodes: Sequence[str] = (),
) -> MRSummary:
    """§5: m and r with percentile intervals from resampling the group's *episodes* with
    replacement (B = options.bootstrap), recomputing m and r each time; undefined replicates
    (too few points, or none: a draw of games without a proposal) are skipped and counted.

    §5 resamples "the 20 episodes", so `episodes` names every game of the group, those
    without a scored proposal included (they weigh 0 in a replicate); the points' own games
    are always among them."""
    check_bootstrap(options.bootstrap, options.level)
    point = fit_mr(points)
    episodes = sorted({p.episode_id for p in points} | set(episodes))
    if not points:
        return MRSummary(None, None, 0, len(episodes), None, None)
    index = {e: k for k, e in enumerate(episodes)}
    owner = np.array([index[p.episode_id] for p in points], dtype=np.int64)
    x = np.array([p.request for p in points], dtype=np.float64)
    y = np.array([p.offer for p in points], dtype=np.float64)
    ms, rs = [], []
    # one stratum: episodes are the resampled units, all drawn from the same pool (§5)
    for counts in resample_counts([0] * len(episodes), options.bootstrap, options.seed):
        m, r = _moments(counts[:, owner], x, y)
        ms.append(m)
        rs.append(r)
    m_all, r_all = np.concatenate(ms), np.concatenate(rs)
    return MRSummary(
        point.m,
        point.r,
        len(points),
        len(episodes),
        _interval(m_all, options.level),
        _interval(r_all, options.level),
        int(np.sum(~np.isnan(m_all))),
        int(np.sum(~np.isnan(r_all))),
        options.bootstrap,
    )


def mr_map(games: Sequence[TomGame], options: TomOptions = DEFAULTS) -> dict[Key, MRSummary]:
    """§5 / Figure 5: one `MRSummary` per (model, group) present in `games`."""
    points = proposal_points(games, options)
    keys = sorted({(g.model, g.group) for g in games})
    return {
        key: mr_with_ci(
            [p for p in points if (p.model, p.group) == key],
            options,
            [g.episode_id for g in games if (g.model, g.group) == key],
        )
        for key in keys
    }
