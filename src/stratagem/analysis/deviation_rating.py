"""Deviation ratings: a clone-invariant rating from the strictest coarse correlated equilibrium
(Marris, Liu, Gemp, Piliouras and Lanctot, "Deviation Ratings: A General, Clone-Invariant Rating
Method", 2025, arXiv:2502.11645).

Bradley-Terry (`rating`) averages over whoever happened to be played: add copies of one entity
(the same model under two names, a near-identical prompt) and every other entity's rating moves.
Deviation ratings do not: a copy adds a constraint identical to its original's, and the ratings
depend only on the values of the constraints.

**The rating game.** An N-player normal-form game: player p picks a strategy a_p from A_p (the
rated entities: models, agents, tasks) and G_p(a) is p's payoff at the joint strategy a; σ is a
joint distribution over A = A_1 × ... × A_N. The **deviation gain** of strategy s for player p
(the coarse-correlated-equilibrium constraint) is

    δ_p^σ(s) = Σ_a σ(a) [G_p(s, a_-p) - G_p(a)]

and σ is a coarse correlated equilibrium (CCE) when δ_p^σ(s) ≤ 0 for every p and s.

**The strictest CCE, iterated** (the paper's procedure). Every (p, s) starts free. Repeat

    ε* = min over σ ∈ Δ(A), ε of ε
         s.t.  δ_p^σ(s) ≤ ε       for every free (p, s)
               δ_p^σ(s) ≤ r_p(s)  for every frozen (p, s)

and freeze, with r_p(s) = ε*, every free (p, s) whose constraint binds at *every* optimum, until
none is free. A constraint binds at every optimum when it has a positive dual variable
(complementary slackness: Σ y_k (ε - δ_k) = 0 at every primal optimum for a dual optimum y ≥ 0).
The free constraints' duals sum to 1 (the derivative of ε* under a shift of all their right-hand
sides), so every round freezes at least one and at most Σ_p |A_p| LPs are solved, each by HiGHS
(`scipy.optimize.linprog(method="highs")`, duals from `ineqlin.marginals`).

**The rating** r_p(s) is its frozen value, the deviation gain of s under the final σ: unique even
where σ is not. The paper's properties, each tested: r ≤ 0 (a CCE exists, so ε* ≤ 0); clone
invariance (an exact copy of s rates r_p(s) and nothing else moves); offset invariance (adding
b_p(a_-p) to G_p changes no δ); dominance preservation. In a two-player zero-sum game the CCE
marginals are minimax strategies, so each player's best strategy rates exactly 0 and every other
its shortfall against the opponent's equilibrium mix; in a general-sum game every strategy may
rate below 0 (in a coordination game any fixed deviation forfeits what the correlation earned).

**Rating games built from stored results:**

- `symmetric_ratings`: a two-player symmetric game, G_1(i, j) = M[i, j], G_2(i, j) = M[j, i];
  by uniqueness both players' ratings agree, and player 1's are returned.
- `pairwise_game`: M[i, j] = (weighted share of i's comparisons with j it won, ties ½) - ½, a
  zero-sum game; it needs every two entities to have met (a missing pair has no payoff).
- `task_ratings`: model-by-task scores T(m, t) (e.g. a challenger's win rate per competition) as
  a game of two model players and a task player, after the paper's model-versus-task games for
  LLM leaderboards: G_A(m, m', t) = T(m, t) - T(m', t), G_B = -G_A, and the task player is paid
  |G_A| for telling the two models apart (this payoff is this module's stated choice), so a task
  that separates no one, or a copy of one, moves nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from stratagem.analysis.rating import PairResult
from stratagem.errors import StratagemError

FloatArray = npt.NDArray[np.float64]

DUAL_TOL = 1e-7
"""A free constraint's dual above this (the free duals sum to 1) marks it binding everywhere."""
MAX_JOINT = 250_000
"""Joint strategies the LP may have (one variable each)."""
CITATION = "Marris et al. 2025, arXiv:2502.11645"


@dataclass(frozen=True)
class DeviationRatings:
    strategies: tuple[tuple[str, ...], ...]
    """Each player's strategy names."""
    ratings: tuple[tuple[float, ...], ...]
    """r_p(s) per player and strategy, in `strategies` order (all ≤ 0)."""
    equilibrium: FloatArray = field(compare=False)
    """The final σ, shaped like the game (one of possibly many: the ratings are unique)."""
    rounds: int
    """LPs solved."""

    def of(self, player: int = 0) -> dict[str, float]:
        """One player's ratings by strategy name."""
        return dict(zip(self.strategies[player], self.ratings[player], strict=True))


def deviation_matrix(payoffs: Sequence[FloatArray]) -> FloatArray:
    """D[(p, s), a] = G_p(s, a_-p) - G_p(a): rows by player then strategy, columns the joint
    strategies in C order, so δ^σ = D @ σ.ravel()."""
    shape = payoffs[0].shape
    rows = []
    for p, g in enumerate(payoffs):
        for s in range(shape[p]):
            deviated = np.broadcast_to(np.take(g, [s], axis=p), shape)
            rows.append((deviated - g).ravel())
    return np.asarray(np.stack(rows), dtype=np.float64)


def _check_game(payoffs: Sequence[npt.ArrayLike]) -> list[FloatArray]:
    if not payoffs:
        raise StratagemError("a rating game needs at least one player's payoffs")
    arrays = [np.asarray(g, dtype=np.float64) for g in payoffs]
    shape = arrays[0].shape
    if len(shape) != len(arrays):
        raise StratagemError(
            f"{len(arrays)} players' payoffs need {len(arrays)} axes (one per player), "
            f"got shape {shape}"
        )
    for p, g in enumerate(arrays):
        if g.shape != shape:
            raise StratagemError(f"player {p}'s payoffs have shape {g.shape}, expected {shape}")
        if not np.isfinite(g).all():
            raise StratagemError(f"player {p}'s payoffs are not all finite numbers")
    if 0 in shape:
        raise StratagemError(f"every player needs at least one strategy, got shape {shape}")
    if math.prod(shape) > MAX_JOINT:
        raise StratagemError(
            f"the rating game has {math.prod(shape):,} joint strategies (shape {shape}), more "
            f"than the {MAX_JOINT:,} one LP takes"
        )
    return arrays


def strictest_gains(d: FloatArray) -> tuple[FloatArray, FloatArray, int]:
    """(r, σ, rounds) of the iterated strictest CCE over the deviation matrix `d` (module
    docstring). `d` is scaled to max |d| = 1 for the solver and the ratings scaled back."""
    from scipy.optimize import linprog  # deferred: importing scipy costs about half a second

    k, j = d.shape
    scale = float(np.abs(d).max())
    if scale == 0.0:  # every strategy is a copy of every other: nothing to gain anywhere
        return np.zeros(k), np.full(j, 1.0 / j), 0
    dn = d / scale
    frozen = np.full(k, np.nan)
    objective = np.zeros(j + 1)
    objective[-1] = 1.0
    a_eq = np.ones((1, j + 1))
    a_eq[0, -1] = 0.0
    bounds = [(0.0, None)] * j + [(None, None)]
    sigma = np.full(j, 1.0 / j)
    rounds = 0
    while np.isnan(frozen).any():
        free = np.isnan(frozen)
        a_ub = np.hstack([dn, -free[:, None].astype(np.float64)])
        b_ub = np.where(free, 0.0, frozen)
        res = linprog(
            objective,
            A_ub=a_ub,
            b_ub=b_ub,
            A_eq=a_eq,
            b_eq=[1.0],
            bounds=bounds,
            method="highs",
        )
        rounds += 1
        if res.status != 0 or res.x is None:
            raise StratagemError(f"the deviation-rating LP failed in round {rounds}: {res.message}")
        eps = float(res.x[-1])
        dual = -np.asarray(res.ineqlin.marginals, dtype=np.float64)
        binding = free & (dual > DUAL_TOL)
        if not binding.any():  # the free duals sum to 1: the largest one binds
            binding = free & (dual >= dual[free].max())
        frozen[binding] = eps
        sigma = np.clip(np.asarray(res.x[:j], dtype=np.float64), 0.0, None)
    return frozen * scale + 0.0, sigma / sigma.sum(), rounds


def deviation_ratings(
    payoffs: Sequence[npt.ArrayLike], strategies: Sequence[Sequence[str]] | None = None
) -> DeviationRatings:
    """The deviation ratings of an N-player game given as one payoff array per player, each of
    shape (|A_1|, ..., |A_N|); `strategies` names each player's strategies ("0", "1", ... if
    not given)."""
    arrays = _check_game(payoffs)
    shape = arrays[0].shape
    if strategies is None:
        names = tuple(tuple(str(s) for s in range(n)) for n in shape)
    else:
        names = tuple(tuple(str(s) for s in ss) for ss in strategies)
        if tuple(len(ss) for ss in names) != shape:
            raise StratagemError(
                f"strategy names per player {[len(ss) for ss in names]} do not match the "
                f"payoffs' shape {shape}"
            )
    r, sigma, rounds = strictest_gains(deviation_matrix(arrays))
    out: list[tuple[float, ...]] = []
    start = 0
    for n in shape:
        out.append(tuple(float(x) for x in r[start : start + n]))
        start += n
    return DeviationRatings(names, tuple(out), sigma.reshape(shape), rounds)


def symmetric_ratings(matrix: npt.ArrayLike, names: Sequence[str]) -> dict[str, float]:
    """Ratings of the two-player symmetric game whose row player earns M[i, j] (module
    docstring): one rating per entity."""
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] != len(names):
        raise StratagemError(
            f"a symmetric rating game needs a square matrix with one row per entity: "
            f"{len(names)} entities, matrix shape {m.shape}"
        )
    return deviation_ratings([m, m.T], [names, names]).of(0)


@dataclass(frozen=True)
class PairwiseGame:
    names: tuple[str, ...]
    payoff: FloatArray = field(compare=False)
    """M[i, j] = weighted share of i's comparisons with j that i won (ties ½), minus ½."""
    weight: FloatArray = field(compare=False)
    """Total weight of the comparisons of i and j."""

    @property
    def missing(self) -> list[tuple[str, str]]:
        """The pairs of different entities that never met."""
        n = len(self.names)
        return [
            (self.names[i], self.names[j])
            for i in range(n)
            for j in range(i + 1, n)
            if self.weight[i, j] <= 0
        ]


def pairwise_game(results: Sequence[PairResult]) -> PairwiseGame:
    """The zero-sum game of who beats whom (module docstring), from `rating.PairResult`s."""
    names = tuple(sorted({r.a for r in results} | {r.b for r in results}))
    idx = {e: k for k, e in enumerate(names)}
    n = len(names)
    weight = np.zeros((n, n))
    won = np.zeros((n, n))
    for r in results:
        i, j = idx[r.a], idx[r.b]
        weight[i, j] += r.weight
        weight[j, i] += r.weight
        won[i, j] += r.weight * r.outcome
        won[j, i] += r.weight * (1.0 - r.outcome)
    share = np.divide(won, weight, out=np.full((n, n), 0.5), where=weight > 0)
    np.fill_diagonal(share, 0.5)
    return PairwiseGame(names, share - 0.5, weight)


def pairwise_ratings(results: Sequence[PairResult]) -> dict[str, float]:
    """Deviation ratings of every entity of pairwise results; every two must have met."""
    if not results:
        raise StratagemError("no pairwise results to rate")
    game = pairwise_game(results)
    missing = game.missing
    if missing:
        shown = ", ".join(f"{a} vs {b}" for a, b in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise StratagemError(
            f"deviation ratings need every two entities to have met: {shown}{more} never did"
        )
    return symmetric_ratings(game.payoff, game.names)


@dataclass(frozen=True)
class TaskRatings:
    models: dict[str, float]
    tasks: dict[str, float]
    """The task player's ratings: 0 for the tasks that best separate the models."""


def task_ratings(scores: Mapping[str, Mapping[str, float]]) -> TaskRatings:
    """Deviation ratings of the model-model-task game over `scores[model][task]` (module
    docstring); every model needs a finite score on every task."""
    models = sorted(scores)
    if not models:
        raise StratagemError("no model scores to rate")
    tasks = sorted({t for row in scores.values() for t in row})
    if not tasks:
        raise StratagemError("no task scores to rate")
    t = np.zeros((len(models), len(tasks)))
    for i, m in enumerate(models):
        for k, task in enumerate(tasks):
            value = scores[m].get(task)
            if value is None or not math.isfinite(value):
                raise StratagemError(f"model {m!r} has no score on task {task!r}")
            t[i, k] = value
    gap = t[:, None, :] - t[None, :, :]
    result = deviation_ratings([gap, -gap, np.abs(gap)], [models, models, tasks])
    return TaskRatings(models=result.of(0), tasks=result.of(2))
