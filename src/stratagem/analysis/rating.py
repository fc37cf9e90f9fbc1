"""Bradley-Terry ratings from pairwise results, on an Elo-like scale, with bootstrap intervals.

**Model.** Entity i has a strength θ_i and P(i beats j) = σ(θ_i - θ_j), σ the logistic. A
result (a, b, y) has y = 1 (a won), 0.5 (tie) or 0 (a lost); a tie counts as half a win each
way, as in Elo scoring. The fit maximises the weighted log-likelihood

    Σ_k w_k [y_k log σ(θ_a - θ_b) + (1 - y_k) log σ(θ_b - θ_a)]  -  (l2 / 2) Σ_i θ_i²

with scipy's L-BFGS-B and the analytic gradient. The small L2 prior makes the fit identifiable
(strengths are otherwise defined up to a shift) and finite for an entity that won or lost every
comparison; at the optimum it also makes Σ θ_i = 0 exactly, since every comparison adds to one
gradient what it takes from another. choix (PyPI) fits the same model but takes neither
per-comparison weights nor ties, which the type weighting and the ties need, hence scipy.

**Scale.** rating_i = `base` + (400 / ln 10) · (θ_i - θ_ref), so a 400-point difference means
10:1 odds (the Elo convention) and θ_ref is the mean strength (default: ratings average `base`
= 1500) or the strength of the `anchor` entity (which is then rated exactly `base`).

**Weights.** Each result carries a weight; with `balance_types` the weights of each game type
are rescaled so that every type carries the same total weight (the overall total unchanged,
so the prior keeps its strength): a type with 500 games does not drown one with 20. When every
type shows the same results in the same proportions, balancing changes nothing.

**Intervals.** A seeded bootstrap resamples *games* (results sharing `game_id`, since the seats
of one game are compared with each other) within each game type, keeping each type's number of
games, refits, and reports the central `level` percentile interval of each rating.

`seat_pairs` reduces one multi-seat game to such results: every two seats of different entities
are compared by their scores (or win/lose flags); seats of one entity are not compared with
each other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from stratagem.analysis.bootstrap import check_bootstrap, percentile_interval, resample_counts
from stratagem.errors import StratagemError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

ELO_SCALE = 400 / math.log(10)
"""Rating points per unit of θ: 400 points = odds of 10 to 1."""
BASE = 1500.0


@dataclass(frozen=True)
class PairResult:
    a: str
    b: str
    outcome: float
    """1 a won, 0.5 tie, 0 a lost (values in between are partial wins)."""
    game_type: str = ""
    game_id: str = ""
    """Results with the same (game_type, game_id) come from one game and are resampled
    together; an empty id makes the result a game of its own."""
    weight: float = 1.0


def seat_pairs(
    entities: Sequence[str],
    scores: Sequence[float] | Sequence[bool],
    *,
    game_type: str = "",
    game_id: str = "",
    weighting: Literal["game", "pair"] = "game",
) -> list[PairResult]:
    """The pairwise results of one game: each two seats of different entities, the higher score
    winning and equal scores tying. `weighting`: "game" = the game's results share weight 1
    (a game counts once, however many seats it has), "pair" = each result weighs 1."""
    if len(entities) != len(scores):
        raise StratagemError(f"{len(entities)} seats' entities but {len(scores)} scores")
    pairs = [
        (s, t)
        for s in range(len(entities))
        for t in range(s + 1, len(entities))
        if entities[s] != entities[t]
    ]
    return [
        PairResult(entities[s], entities[t], outcome, game_type, game_id, w)
        for s, t, outcome, w in compared(pairs, scores, weighting)
    ]


def compared(
    pairs: Sequence[tuple[int, int]], scores: Sequence[float] | Sequence[bool], weighting: str
) -> list[tuple[int, int, float, float]]:
    """(s, t, outcome of s against t, weight) of each pair of seats compared in one game: the
    higher score wins, equal scores tie; the weights as `seat_pairs` says."""
    if weighting not in ("game", "pair"):
        raise StratagemError(f"weighting must be 'game' or 'pair', got {weighting!r}")
    vals = [float(x) for x in scores]
    w = 1.0 / len(pairs) if pairs and weighting == "game" else 1.0
    return [
        (s, t, 1.0 if vals[s] > vals[t] else 0.5 if vals[s] == vals[t] else 0.0, w)
        for s, t in pairs
    ]


@dataclass(frozen=True)
class Rating:
    entity: str
    rating: float
    ci_low: float | None
    ci_high: float | None
    games: int
    comparisons: int
    wins: int
    ties: int
    losses: int
    cost_per_game: float | None
    """Dollars per game, as passed in (None when not given)."""


@dataclass(frozen=True)
class RatingTable:
    ratings: tuple[Rating, ...]
    """Best first."""
    anchor: str | None
    base: float
    l2: float
    balance_types: bool
    n_boot: int
    level: float
    seed: int


def fit_strengths(
    i: IntArray,
    j: IntArray,
    y: FloatArray,
    w: FloatArray,
    n: int,
    l2: float,
    x0: FloatArray | None = None,
) -> FloatArray:
    """θ maximising the penalised weighted log-likelihood of results (i vs j, outcome y)."""
    from scipy.optimize import minimize  # deferred: importing scipy costs about half a second

    # Results of the same ordered pair are summed once: W = Σ w, Y = Σ w·y.
    pair = i * n + j
    uniq, inv = np.unique(pair, return_inverse=True)
    pw = np.bincount(inv, weights=w, minlength=len(uniq))
    py = np.bincount(inv, weights=w * y, minlength=len(uniq))
    pi, pj = uniq // n, uniq % n

    def objective(theta: FloatArray) -> tuple[float, FloatArray]:
        d = theta[pi] - theta[pj]
        # -log σ(d) = logaddexp(0, -d); -log σ(-d) = logaddexp(0, d)
        nll = float(py @ np.logaddexp(0.0, -d) + (pw - py) @ np.logaddexp(0.0, d))
        nll += 0.5 * l2 * float(theta @ theta)
        resid = py - pw / (1.0 + np.exp(-d))  # ∂LL/∂d per pair = Y - W·σ(d)
        grad = -(np.bincount(pi, weights=resid, minlength=n))
        grad += np.bincount(pj, weights=resid, minlength=n)
        return nll, grad + l2 * theta

    start = np.zeros(n) if x0 is None else np.asarray(x0, dtype=np.float64)
    res = minimize(objective, start, jac=True, method="L-BFGS-B", options={"maxiter": 1000})
    return np.asarray(res.x, dtype=np.float64)


def _check(results: Sequence[PairResult]) -> None:
    for k, r in enumerate(results):
        where = f"result {k} ({r.a} vs {r.b})"
        if r.a == r.b:
            raise StratagemError(f"{where}: an entity is not compared with itself")
        if not 0 <= r.outcome <= 1:
            raise StratagemError(f"{where}: outcome {r.outcome!r} must be in [0, 1]")
        if not math.isfinite(r.weight) or r.weight < 0:
            raise StratagemError(f"{where}: weight {r.weight!r} must be a finite number >= 0")


def bradley_terry(
    results: Sequence[PairResult],
    *,
    balance_types: bool = True,
    l2: float = 0.01,
    anchor: str | None = None,
    base: float = BASE,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    cost_per_game: Mapping[str, float] | None = None,
) -> RatingTable:
    """Ratings with intervals and counts, best first (see the module docstring)."""
    check_bootstrap(n_boot, level)
    if not results:
        raise StratagemError("no pairwise results to rate")
    if l2 <= 0:
        raise StratagemError(f"l2 must be > 0 (it makes the ratings identifiable), got {l2}")
    _check(results)
    names = sorted({r.a for r in results} | {r.b for r in results})
    if anchor is not None and anchor not in names:
        raise StratagemError(f"anchor {anchor!r} played no game: expected one of the entities")
    idx = {e: k for k, e in enumerate(names)}
    n = len(names)
    i = np.array([idx[r.a] for r in results], dtype=np.int64)
    j = np.array([idx[r.b] for r in results], dtype=np.int64)
    y = np.array([r.outcome for r in results], dtype=np.float64)
    w = np.array([r.weight for r in results], dtype=np.float64)
    types = [r.game_type for r in results]
    if balance_types:
        w = _balanced(w, types)

    units: dict[tuple[str, str], int] = {}
    game = np.array(
        [
            units.setdefault((r.game_type, r.game_id or f"#{k}"), len(units))
            for k, r in enumerate(results)
        ],
        dtype=np.int64,
    )
    unit_types = [key[0] for key in sorted(units, key=units.__getitem__)]

    def to_ratings(theta: FloatArray) -> FloatArray:
        ref = float(theta[idx[anchor]] if anchor is not None else theta.mean())
        return np.asarray(base + ELO_SCALE * (theta - ref), dtype=np.float64)

    # Each fit is tiny: BLAS threads only add overhead (20x slower on two busy cores, the
    # viewer's Analysis part waiting on the bootstrap); one thread gives the same numbers.
    with threadpool_limits(limits=1, user_api="blas"):
        theta = fit_strengths(i, j, y, w, n, l2)
        point = to_ratings(theta)
        reps: list[FloatArray] = []
        for counts in resample_counts(unit_types, n_boot, seed):
            for row in counts:
                reps.append(to_ratings(fit_strengths(i, j, y, w * row[game], n, l2, x0=theta)))
    boot = np.stack(reps)

    rows = []
    for e, k in idx.items():
        low, high = percentile_interval(boot[:, k], level)
        mine_a, mine_b = i == k, j == k
        wins = int(((y > 0.5) & mine_a).sum() + ((y < 0.5) & mine_b).sum())
        ties = int(((y == 0.5) & (mine_a | mine_b)).sum())
        comparisons = int((mine_a | mine_b).sum())
        rows.append(
            Rating(
                entity=e,
                rating=float(point[k]),
                ci_low=low,
                ci_high=high,
                games=len(set(game[mine_a | mine_b].tolist())),
                comparisons=comparisons,
                wins=wins,
                ties=ties,
                losses=comparisons - wins - ties,
                cost_per_game=None if cost_per_game is None else cost_per_game.get(e),
            )
        )
    rows.sort(key=lambda r: (-r.rating, r.entity))
    return RatingTable(
        ratings=tuple(rows),
        anchor=anchor,
        base=base,
        l2=l2,
        balance_types=balance_types,
        n_boot=n_boot,
        level=level,
        seed=seed,
    )


def _balanced(w: FloatArray, types: Sequence[str]) -> FloatArray:
    """Rescale each type's weights to the same total, keeping the overall total."""
    kinds = sorted(set(types))
    per_type = {t: float(w[[k for k, x in enumerate(types) if x == t]].sum()) for t in kinds}
    target = float(w.sum()) / len(kinds)
    scale = np.array(
        [target / per_type[t] if per_type[t] > 0 else 0.0 for t in types], dtype=np.float64
    )
    return np.asarray(w * scale, dtype=np.float64)
