"""Decision-utility fitting (seed-002 §6, Table 1, Figure 6): how well the decision maker's own
V reports, turned into gains and losses, predict its accept/reject decisions.

Each decision gives G_k = Σ count·v_k over what the DM would receive (the proposal's offer) and
L_k over what it would give (the request). The group's utility model (U(0), U(0,1) or U(0,1,2))
is fitted by a grid search with LogisticRegression(lbfgs) at the grid points (`utility_grid`;
an L-BFGS-B refinement off the grid is the `refine` option) and scored by episode-wise
GroupKFold macro-F1, mean ± std over folds as Table 1 reports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.model_selection import GroupKFold
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from stratagem.studies.tom.options import DEFAULTS, TomOptions
from stratagem.studies.tom.proposals import value_of
from stratagem.studies.tom.records import Group, TomGame
from stratagem.studies.tom.utility_grid import FloatArray, IntArray, fit_grid

Key = tuple[str, str]
MODEL_NAMES = {0: "U(0)", 1: "U(0,1)", 2: "U(0,1,2)"}
ORDER: dict[Group, int] = {"V0": 0, "V1": 1, "V2": 2}
"""§6: V0 group → U(0); V1 → U(0,1); V2 → U(0,1,2)."""
FEATURES = ("G0", "L0", "G1", "L1", "G2", "L2")


@dataclass(frozen=True)
class DecisionSample:
    """One decision with the DM's gains and losses at each order it reported (§6, Table 2)."""

    episode_id: str
    model: str
    group: Group
    turn: int
    g: tuple[float | None, ...]
    """G_0, G_1, ... up to the order the DM was asked for; None where that report was unread."""
    l: tuple[float | None, ...]  # noqa: E741 - the spec's L
    y: int


def decision_samples(
    games: Sequence[TomGame], options: TomOptions = DEFAULTS
) -> list[DecisionSample]:
    """Every decided proposal whose DM is the focal seat (either seat if `include_baseline`),
    with G_k, L_k from the DM's own reports at that turn, k up to the order the DM was asked
    for; an unread order is None and the others keep their features (Table 2 defines each
    from its own report), and a turn with no readable report gives no sample. Empty proposals
    (all features 0) are kept, as §6 keeps every proposal shown to the DM, unless
    `skip_empty`."""
    out: list[DecisionSample] = []
    for game in games:
        for p in game.proposals:
            dm = p.decider
            if p.accepted is None or (dm != game.focal and not options.include_baseline):
                continue
            if p.empty and options.skip_empty:
                continue
            report = game.report(p.turn, dm)
            top = ORDER[game.group] if dm == game.focal else 0
            g: list[float | None] = []
            l: list[float | None] = []  # noqa: E741
            for k in range(top + 1):
                values = report.order(k) if report is not None else None
                # §6: G_k over I_recv = the offer, L_k over I_give = the request
                g.append(None if values is None else value_of(p.offer, values))
                l.append(None if values is None else value_of(p.request, values))
            if any(v is not None for v in g):
                y = int(p.accepted)
                out.append(
                    DecisionSample(game.episode_id, game.model, game.group, p.turn, (*g,), (*l,), y)
                )
    return out


@dataclass(frozen=True)
class UtilityFit:
    """One Table 1 cell: the fitted utility model on all samples, and its CV macro-F1."""

    model_name: str
    params: dict[str, float]
    beta: float
    b: float
    s_u: float
    f1_mean: float
    f1_std: float
    fold_f1: tuple[float, ...]
    n: int
    episodes: int
    accept_rate: float
    notes: tuple[str, ...]
    one_class_folds: int = 0
    """Test folds whose decisions were all one class (`TomOptions.f1_classes` scores them)."""


@dataclass(frozen=True)
class PlainFit:
    """The §6 robustness check: plain logistic regression on the raw 2/4/6 features.

    `coefficients` are per raw unit (coef / feature sd), comparable to `effective_coefficients`."""

    model_name: str
    coefficients: dict[str, float]
    b: float
    f1_mean: float
    f1_std: float
    fold_f1: tuple[float, ...]
    n: int
    episodes: int
    accept_rate: float
    notes: tuple[str, ...]
    one_class_folds: int = 0


def _arrays(
    samples: Sequence[DecisionSample], order: int
) -> tuple[FloatArray, FloatArray, IntArray, int]:
    """Feature matrix (G0, L0, G1, L1, …), labels, episode index, and how many samples lacked
    an order up to `order` (a baseline DM, or an unread report) and were left out."""
    kept = [
        s for s in samples if len(s.g) > order and all(s.g[k] is not None for k in range(order + 1))
    ]
    x = np.array(
        [[v for k in range(order + 1) for v in (s.g[k], s.l[k])] for s in kept], dtype=np.float64
    ).reshape(len(kept), 2 * (order + 1))
    y = np.array([s.y for s in kept], dtype=np.float64)
    ids = {e: i for i, e in enumerate(sorted({s.episode_id for s in kept}))}
    groups = np.array([ids[s.episode_id] for s in kept], dtype=np.int64)
    return x, y, groups, len(samples) - len(kept)


Fitter = Callable[[FloatArray, FloatArray, IntArray], Callable[[FloatArray], FloatArray]]


def _cross_validate(
    x: FloatArray, y: FloatArray, groups: IntArray, fit: Fitter, options: TomOptions
) -> tuple[list[float], list[str], int]:
    """§6: GroupKFold by episode, macro-F1 per held-out fold (sklearn, zero_division 0) over
    both classes or the present ones (`f1_classes`), and how many test folds held one class.
    A training fold with one class predicts that class, and says so."""
    scores: list[float] = []
    notes: list[str] = []
    one_class = 0
    labels = [0, 1] if options.f1_classes == "both" else None
    for k, (train, test) in enumerate(GroupKFold(n_splits=options.folds).split(x, y, groups)):
        one_class += len(np.unique(y[test])) < 2
        classes = np.unique(y[train])
        if len(classes) < 2:
            pred = np.full(len(test), int(classes[0]))
            notes.append(f"fold {k + 1}: training fold all y={int(classes[0])}, predicts that")
        else:
            prob = fit(x[train], y[train], groups[train])(x[test])
            pred = (prob >= options.threshold).astype(int)
        f1 = f1_score(y[test].astype(int), pred, labels=labels, average="macro", zero_division=0)
        scores.append(float(f1))
    return scores, notes, one_class


def _inputs(
    samples: Sequence[DecisionSample], order: int, options: TomOptions
) -> tuple[FloatArray, FloatArray, IntArray, list[str]] | str:
    """(features, decisions, episode groups, notes) of a fit, or why no fit is possible."""
    x, y, groups, dropped = _arrays(samples, order)
    episodes = len(set(groups.tolist()))
    if episodes < options.folds:
        return f"{episodes} episode(s) with decisions, fewer than {options.folds} folds"
    if len(np.unique(y)) < 2:
        return f"all {len(y)} decisions are y={int(y[0])}: nothing to separate"
    notes = [f"{dropped} sample(s) without V0..V{order} left out"] if dropped else []
    return x, y, groups, notes


def fit_utility(
    samples: Sequence[DecisionSample], order: int, options: TomOptions = DEFAULTS
) -> UtilityFit | str:
    """U(0..order) fitted on all samples, with its GroupKFold macro-F1; a string saying why
    when it cannot be computed."""
    # the arrays are tiny: BLAS threads only add overhead (3x slower on 2 cores)
    with threadpool_limits(limits=1, user_api="blas"):
        return _fit_utility(samples, order, options)


def _fit_utility(
    samples: Sequence[DecisionSample], order: int, options: TomOptions
) -> UtilityFit | str:
    inputs = _inputs(samples, order, options)
    if isinstance(inputs, str):
        return inputs
    x, y, groups, notes = inputs

    def fitter(xt: FloatArray, yt: FloatArray, gt: IntArray) -> Callable[[FloatArray], FloatArray]:
        model = fit_grid(xt, yt, gt, order, options, notes.append)
        return lambda xs: model.prob(xs, order)

    scores, cv_notes, one_class = _cross_validate(x, y, groups, fitter, options)
    full = fit_grid(x, y, groups, order, options, notes.append)
    return UtilityFit(
        MODEL_NAMES[order],
        full.params,
        full.beta,
        full.b,
        full.s_u,
        float(np.mean(scores)),
        float(np.std(scores)),
        tuple(scores),
        len(y),
        len(set(groups.tolist())),
        float(y.mean()),
        tuple(dict.fromkeys(notes + cv_notes)),
        one_class,
    )


def effective_coefficients(fit: UtilityFit) -> dict[str, float]:
    """§6 [A] (Figure 6): the weight of each gain/loss on the logit, per raw unit:
    c_G0 = β/s_U, c_L0 = −βρ/s_U, c_G1 = βw1/s_U, c_L1 = −βw1γ/s_U, c_G2 = βw2/s_U,
    c_L2 = −βw2κ/s_U. A constant U (s_U = 0) gives all zeros."""
    k = fit.beta / fit.s_u if fit.s_u > 1e-12 else 0.0
    p = fit.params
    out = {"G0": k, "L0": -k * p["rho"]}
    if "w1" in p:
        out |= {"G1": k * p["w1"], "L1": -k * p["w1"] * p["gamma"]}
    if "w2" in p:
        out |= {"G2": k * p["w2"], "L2": -k * p["w2"] * p["kappa"]}
    return out


def normalised(coeffs: dict[str, float]) -> dict[str, float]:
    """§6 [A]: coefficients divided by the largest magnitude, for display (all 0 stay 0)."""
    top = max((abs(v) for v in coeffs.values()), default=0.0)
    return {k: (v / top if top > 0 else 0.0) for k, v in coeffs.items()}


def plain_logistic(
    samples: Sequence[DecisionSample], order: int, options: TomOptions = DEFAULTS
) -> PlainFit | str:
    """§6 [A] robustness check: LogisticRegression(lbfgs, C) on the standardised raw features
    (G0, L0, … up to the order), same GroupKFold macro-F1."""
    with threadpool_limits(limits=1, user_api="blas"):
        return _plain_logistic(samples, order, options)


def _plain_logistic(
    samples: Sequence[DecisionSample], order: int, options: TomOptions
) -> PlainFit | str:
    inputs = _inputs(samples, order, options)
    if isinstance(inputs, str):
        return inputs
    x, y, groups, notes = inputs

    def fit_raw(
        xt: FloatArray, yt: FloatArray
    ) -> tuple[LogisticRegression, FloatArray, FloatArray]:
        mean, sd = xt.mean(axis=0), xt.std(axis=0)
        sd = np.where(sd > 1e-12, sd, 1.0)
        lr = LogisticRegression(solver="lbfgs", C=options.C).fit((xt - mean) / sd, yt.astype(int))
        return lr, mean, sd

    def fitter(xt: FloatArray, yt: FloatArray, _: IntArray) -> Callable[[FloatArray], FloatArray]:
        lr, mean, sd = fit_raw(xt, yt)
        return lambda xs: np.asarray(lr.predict_proba((xs - mean) / sd)[:, 1], dtype=np.float64)

    scores, cv_notes, one_class = _cross_validate(x, y, groups, fitter, options)
    lr, mean, sd = fit_raw(x, y)
    coef = lr.coef_[0] / sd
    return PlainFit(
        f"logit{MODEL_NAMES[order][1:]}",
        {name: float(c) for name, c in zip(FEATURES, coef, strict=False)},
        float(lr.intercept_[0] - np.sum(lr.coef_[0] * mean / sd)),
        float(np.mean(scores)),
        float(np.std(scores)),
        tuple(scores),
        len(y),
        len(set(groups.tolist())),
        float(y.mean()),
        tuple(dict.fromkeys(notes + cv_notes)),
        one_class,
    )


def table1(games: Sequence[TomGame], options: TomOptions = DEFAULTS) -> dict[Key, UtilityFit | str]:
    """Table 1: per (model, group), the group's utility model fitted on its DM's decisions."""
    samples = decision_samples(games, options)
    out: dict[Key, UtilityFit | str] = {}
    for model, group in sorted({(g.model, g.group) for g in games}):
        cell = [s for s in samples if s.model == model and s.group == group]
        out[(model, group)] = fit_utility(cell, ORDER[group], options)
    return out
