"""The fitting engine of the decision-utility models (seed-002 §6): grid search over the
utility parameters with the logistic fit of β and b at each grid point, the grid point chosen by
training log-likelihood (or inner-CV log-loss), then sklearn's LogisticRegression(lbfgs) at the
chosen point. §6's default keeps the parameters on the grid; `TomOptions.refine` adds an
L-BFGS-B refinement off the grid.

Why it is vectorised: the U(0,1,2) grid has 11·11·11·13·13 ≈ 225k points, and a logistic fit
per point (sklearn in a loop, or even one batched Newton fit over all rows) costs seconds per
fold. The penalised fit of P(y=1) = σ(β·Ũ + b) on a standardised Ũ depends on the grid point
only through Ũ, and the first Newton step from β = 0 has a closed form in the feature moments:
its gain is ½·g²/H with g = n·corr(U, y)·sd(y) and H constant over rows (ΣŨ = 0, ΣŨ² = n), so it
ranks every row by corr(U, y)² without forming U. The best `SCREEN` rows by that step then get
the full batched Newton fit (exact penalised β, b), and the grid point is picked among them.
U(0) (11 points) and U(0,1) (1,573) are below `SCREEN`, so only U(0,1,2) is screened; on 36
noisy planted data sets (C = 1 and 1e6) the screened best equalled the exhaustive best. The
batched Newton fit reaches the same penalised optimum as LogisticRegression(lbfgs, C) at each
point. Candidates are kept in grid order, so of two points that fit equally well (w1 = 0 makes
γ irrelevant) the first in the grid wins, as a loop over the grid would pick it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from stratagem.studies.tom.options import TomOptions

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SCREEN = 2048
"""Grid rows that get the full Newton fit after the one-step screen (module docstring)."""
NEWTON_STEPS = 30
PARAMS: dict[int, tuple[str, ...]] = {
    0: ("rho",),
    1: ("rho", "w1", "gamma"),
    2: ("rho", "w1", "gamma", "w2", "kappa"),
}
"""The utility parameters of U(0), U(0,1), U(0,1,2) (§6 eqs. 1–3)."""
LOSS_GRID = np.arange(-2.0, 3.0 + 1e-9, 0.5)
"""§6 [A]: ρ, γ, κ ∈ {−2, −1.5, …, 3}."""
WEIGHT_GRID = np.arange(-3.0, 3.0 + 1e-9, 0.5)
"""§6 [A]: w1, w2 ∈ {−3, −2.5, …, 3}."""


def _bounds(name: str) -> tuple[float, float]:
    grid = WEIGHT_GRID if name.startswith("w") else LOSS_GRID
    return float(grid[0]), float(grid[-1])


@cache
def grid(order: int) -> FloatArray:
    """All grid points of U(0..order), one row each, columns as `PARAMS[order]` (cached and
    read-only: built once per process)."""
    axes = [WEIGHT_GRID if n.startswith("w") else LOSS_GRID for n in PARAMS[order]]
    points = np.array(list(itertools.product(*axes)), dtype=np.float64).reshape(-1, len(axes))
    points.setflags(write=False)
    return points


@cache
def grid_theta(order: int) -> FloatArray:
    """`theta` of every grid point (cached, read-only)."""
    th = theta(grid(order), order)
    th.setflags(write=False)
    return th


def theta(params: FloatArray, order: int) -> FloatArray:
    """Weights of U on the features (G0, L0, G1, L1, G2, L2), one row per parameter row.

    §6 eqs. 1–3: U = G0 − ρL0 + w1(G1 − γL1) + w2(G2 − κL2)."""
    p = np.atleast_2d(params)
    cols = [np.ones(len(p)), -p[:, 0]]
    if order >= 1:
        cols += [p[:, 1], -p[:, 1] * p[:, 2]]
    if order >= 2:
        cols += [p[:, 3], -p[:, 3] * p[:, 4]]
    return np.stack(cols, axis=1)


def standardise(u: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Rows of U standardised (§6: Ũ inside the training fold); a constant row becomes 0."""
    mean = u.mean(axis=-1, keepdims=True)
    sd = u.std(axis=-1, keepdims=True)
    safe = np.where(sd > 1e-12, sd, 1.0)
    return np.where(sd > 1e-12, (u - mean) / safe, 0.0), mean[..., 0], sd[..., 0]


def _log_loss(z: FloatArray, y: FloatArray) -> FloatArray:
    """Σ log-loss per row: minus the training log-likelihood (§6's selection criterion)."""
    return np.asarray(np.sum(np.logaddexp(0.0, z) - y * z, axis=-1), dtype=np.float64)


def _objective(z: FloatArray, y: FloatArray, beta: FloatArray, c: float) -> FloatArray:
    """sklearn's penalised loss per row: Σ log-loss + β²/(2C), intercept unpenalised."""
    return np.asarray(_log_loss(z, y) + beta**2 / (2 * c), dtype=np.float64)


def newton(ut: FloatArray, y: FloatArray, c: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Penalised (β, b) of σ(β·Ũ + b) for every row of `ut` at once, by damped Newton steps;
    returns β, b and the training log-loss (unpenalised) per row."""
    rows = ut.shape[0]
    ybar = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
    beta, b = np.zeros(rows), np.full(rows, np.log(ybar / (1 - ybar)))
    ut2 = ut * ut
    for _ in range(NEWTON_STEPS):
        p = expit(ut * beta[:, None] + b[:, None])
        r, w = p - y, p * (1 - p)
        g1, g0 = np.einsum("ij,ij->i", r, ut) + beta / c, r.sum(axis=1)
        h11 = np.einsum("ij,ij->i", w, ut2) + 1 / c
        h10, h00 = np.einsum("ij,ij->i", w, ut), w.sum(axis=1) + 1e-12
        det = h11 * h00 - h10**2
        d1 = np.clip((h00 * g1 - h10 * g0) / det, -5, 5)
        d0 = np.clip((h11 * g0 - h10 * g1) / det, -5, 5)
        beta, b = beta - d1, b - d0
        if max(np.max(np.abs(d1)), np.max(np.abs(d0))) < 1e-9:
            break
    return beta, b, _log_loss(ut * beta[:, None] + b[:, None], y)


def screen(x: FloatArray, y: FloatArray, th: FloatArray, keep: int) -> IntArray:
    """Indices of the `keep` rows of `th` whose U correlates most with y (module docstring)."""
    xc = x - x.mean(axis=0)
    cov = xc.T @ xc / len(x)
    cy = xc.T @ (y - y.mean()) / len(x)
    var = np.einsum("pi,ij,pj->p", th, cov, th)
    num = th @ cy
    score = np.where(var > 1e-12, num**2 / np.where(var > 1e-12, var, 1.0), 0.0)
    return np.argsort(-score, kind="stable")[:keep].astype(np.int64)


def _heldout_loss(
    th: FloatArray, x: FloatArray, y: FloatArray, groups: IntArray, folds: int, c: float
) -> FloatArray:
    """Mean held-out log-loss of every row of `th` over GroupKFold splits (selection inner_cv)."""
    total = np.zeros(len(th))
    splits = list(GroupKFold(n_splits=folds).split(x, y, groups))
    for train, test in splits:
        u_tr = th @ x[train].T
        ut, mean, sd = standardise(u_tr)
        beta, b, _ = newton(ut, y[train], c)
        u_te = th @ x[test].T
        safe = np.where(sd > 1e-12, sd, 1.0)[:, None]
        z = (
            beta[:, None] * np.where(sd[:, None] > 1e-12, (u_te - mean[:, None]) / safe, 0)
            + b[:, None]
        )
        total += np.mean(np.logaddexp(0.0, z) - y[test] * z, axis=1)
    return total / len(splits)


@dataclass(frozen=True)
class GridFit:
    """A fitted utility model: parameters, logistic β and b, and U's training mean and sd."""

    params: dict[str, float]
    beta: float
    b: float
    mean_u: float
    s_u: float
    grid_params: dict[str, float]
    """The chosen grid point (`params` too, unless refined off the grid)."""

    def prob(self, x: FloatArray, order: int) -> FloatArray:
        """P(accept) for feature rows `x`, standardising with the training mean and sd."""
        p = np.array([[self.params[n] for n in PARAMS[order]]])
        u = x @ theta(p, order)[0]
        ut = (u - self.mean_u) / self.s_u if self.s_u > 1e-12 else np.zeros_like(u)
        return np.asarray(expit(self.beta * ut + self.b), dtype=np.float64)


def _refine(
    start: FloatArray, beta: float, b: float, x: FloatArray, y: FloatArray, order: int, c: float
) -> FloatArray:
    """`TomOptions.refine`: all parameters and (β, b) refined jointly from the grid point by
    L-BFGS-B, minimising sklearn's penalised loss, parameters kept in the grid's range."""
    k = len(start)

    def loss(v: FloatArray) -> float:
        u = x @ theta(v[:k], order)[0]
        ut, _, _ = standardise(u)
        z = v[k] * ut + v[k + 1]
        return float(_objective(z, y, np.asarray(v[k]), c))

    bounds = [_bounds(n) for n in PARAMS[order]] + [(None, None), (None, None)]
    v0 = np.concatenate([start, [beta, b]])
    res = minimize(loss, v0, method="L-BFGS-B", bounds=bounds)
    best = res.x if res.fun <= loss(v0) else v0
    return np.asarray(best[:k], dtype=np.float64)


def fit_grid(
    x: FloatArray,
    y: FloatArray,
    groups: IntArray,
    order: int,
    options: TomOptions,
    note: Callable[[str], None],
) -> GridFit:
    """The grid point with the highest training log-likelihood (`selection` "train") or the
    lowest inner-CV log-loss ("inner_cv"), each point's β and b fitted as sklearn would; then
    LogisticRegression(lbfgs, C) at that point (§6), or at its L-BFGS-B refinement (`refine`)."""
    c = options.C
    params, th = grid(order), grid_theta(order)
    top = np.sort(screen(x, y, th, SCREEN))  # grid order: ties go to the first grid point
    cand_th = th[top]
    if options.selection == "inner_cv" and len(set(groups.tolist())) >= options.folds:
        pick = int(np.argmin(_heldout_loss(cand_th, x, y, groups, options.folds, c)))
    else:
        if options.selection == "inner_cv":
            note("inner_cv selection fell back to train: too few training episodes")
        _, _, loss = newton(standardise(cand_th @ x.T)[0], y, c)
        pick = int(np.argmin(loss))
    start = params[top[pick]]
    lr, mean, sd = _logistic(start, x, y, order, c)
    chosen = start
    if options.refine:
        beta, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
        chosen = _refine(start, beta, b, x, y, order, c)
        lr, mean, sd = _logistic(chosen, x, y, order, c)
    names = PARAMS[order]
    return GridFit(
        {n: float(v) for n, v in zip(names, chosen, strict=True)},
        float(lr.coef_[0, 0]),
        float(lr.intercept_[0]),
        mean,
        sd,
        {n: float(v) for n, v in zip(names, start, strict=True)},
    )


def _logistic(
    point: FloatArray, x: FloatArray, y: FloatArray, order: int, c: float
) -> tuple[LogisticRegression, float, float]:
    """LogisticRegression(lbfgs, C) of y on the standardised U at `point`, and U's mean and sd."""
    u = x @ theta(point, order)[0]
    ut, mean, sd = standardise(u)
    lr = LogisticRegression(solver="lbfgs", C=c).fit(ut.reshape(-1, 1), y.astype(int))
    return lr, float(mean), float(sd)
