"""Deviation ratings (Marris et al. 2025): games with known answers, a hand-worked 2x2 game checked
by brute force over joint distributions, an independent LP formulation that decides "binding at
every optimum" without duals, the paper's properties (≤ 0, clone, offset and dominance), and
the motivation: a clone moves Bradley-Terry and not the deviation ratings."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from stratagem.analysis.deviation_rating import (
    deviation_ratings,
    pairwise_game,
    pairwise_ratings,
    symmetric_ratings,
    task_ratings,
)
from stratagem.analysis.rating import PairResult, bradley_terry
from stratagem.errors import StratagemError

RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])


def gains(payoffs: list[np.ndarray], sigma: np.ndarray) -> list[float]:
    """δ_p(s) = Σ_a σ(a) [G_p(s, a_-p) - G_p(a)], by explicit loops over joint strategies."""
    shape = payoffs[0].shape
    out = []
    for p, g in enumerate(payoffs):
        for s in range(shape[p]):
            total = 0.0
            for a in itertools.product(*(range(n) for n in shape)):
                dev = list(a)
                dev[p] = s
                total += sigma[a] * (g[tuple(dev)] - g[a])
            out.append(total)
    return out


def flat(ratings: tuple[tuple[float, ...], ...]) -> list[float]:
    return [x for row in ratings for x in row]


def independent(payoffs: list[np.ndarray]) -> list[float]:
    """The iterated strictest CCE with "binds at every optimum" decided by one LP per free
    constraint (can it be made slack on the optimal face?), not by dual variables."""
    shape = payoffs[0].shape
    joints = list(itertools.product(*(range(n) for n in shape)))
    rows = []
    for p, g in enumerate(payoffs):
        for s in range(shape[p]):
            row = []
            for a in joints:
                dev = list(a)
                dev[p] = s
                row.append(g[tuple(dev)] - g[a])
            rows.append(row)
    d = np.array(rows)
    k, j = d.shape
    frozen: dict[int, float] = {}
    eq = np.hstack([np.ones((1, j)), np.zeros((1, 1))])
    bounds = [(0, None)] * j + [(None, None)]
    while len(frozen) < k:
        free = [i for i in range(k) if i not in frozen]
        a_ub = np.array([[*d[i], -1.0 if i in free else 0.0] for i in range(k)])
        b_ub = np.array([0.0 if i in free else frozen[i] for i in range(k)])
        c = np.zeros(j + 1)
        c[-1] = 1
        eps = linprog(c, a_ub, b_ub, eq, [1], bounds, method="highs").x[-1]
        face_ub = np.array([[*d[i], 0.0] for i in range(k)])
        face_b = np.array([eps + 1e-10 if i in free else frozen[i] + 1e-10 for i in range(k)])
        tight = []
        for i in free:
            # maximise ε* - δ_i on the optimal face: 0 means it binds at every optimum
            obj = np.array([*d[i], 0.0])
            res = linprog(obj, face_ub, face_b, eq, [1], bounds, method="highs")
            if eps - res.fun < 1e-6:
                tight.append(i)
        assert tight
        for i in tight:
            frozen[i] = eps
    return [frozen[i] for i in range(k)]


def test_rock_paper_scissors_rates_every_strategy_zero() -> None:
    assert symmetric_ratings(RPS, ["R", "P", "S"]) == {"R": 0.0, "P": 0.0, "S": 0.0}


@pytest.mark.parametrize("gap", [0.25, 2.0])
def test_a_dominated_strategy_rates_minus_its_gap(gap: float) -> None:
    """RPS plus D, Rock's row less `gap` against everything: the equilibrium mixes R, P, S
    uniformly (value 0), so δ(D) = u(D, uniform) - 0 = -gap."""
    m = np.zeros((4, 4))
    m[:3, :3] = RPS
    m[3, :3] = RPS[0] - gap
    m[:3, 3] = -(RPS[0] - gap)
    r = symmetric_ratings(m, ["R", "P", "S", "D"])
    assert r["R"] == r["P"] == r["S"] == 0.0
    assert r["D"] == pytest.approx(-gap, abs=1e-9)


CHICKEN = [np.array([[0.0, 7.0], [2.0, 6.0]]), np.array([[0.0, 2.0], [7.0, 6.0]])]
"""Chicken, strategies (Dare, Chicken), row payoffs first."""


def test_chicken_worked_by_hand() -> None:
    """σ = (DD, DC, CD, CC): δ_1(D) = p_CC - 2 p_CD, δ_1(C) = 2 p_DD - p_DC and the mirror for
    player 2. Weights ½ on both C constraints give 2 p_DD - ½(p_DC + p_CD) ≥ -½, so the max is
    at least -½, reached at p_DC = p_CD = ½: both C constraints bind at -½. Then p_DC, p_CD ≥
    ½ + 2 p_DD forces σ = (0, ½, ½, 0), where δ(D) = -1."""
    r = deviation_ratings(CHICKEN, [["D", "C"], ["D", "C"]])
    assert r.of(0) == pytest.approx({"D": -1.0, "C": -0.5}, abs=1e-9)
    assert r.of(1) == pytest.approx({"D": -1.0, "C": -0.5}, abs=1e-9)
    assert r.equilibrium == pytest.approx(np.array([[0.0, 0.5], [0.5, 0.0]]), abs=1e-9)


def leximin_by_grid(payoffs: list[np.ndarray], steps: int) -> list[float]:
    """The joint distribution on a grid of the 2x2 simplex whose deviation gains, sorted from
    the largest, are lexicographically smallest: the strictest CCE by brute force."""
    best: tuple[tuple[float, ...], list[float]] | None = None
    for a, b, c in itertools.product(range(steps + 1), repeat=3):
        d = steps - a - b - c
        if d < 0:
            continue
        sigma = np.array([[a, b], [c, d]], dtype=float) / steps
        g = gains(payoffs, sigma)
        key = tuple(round(x, 12) for x in sorted(g, reverse=True))
        if best is None or key < best[0]:
            best = (key, g)
    assert best is not None
    return best[1]


@pytest.mark.parametrize(
    "payoffs",
    [
        CHICKEN,
        [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])],  # coordination
        [np.array([[3.0, 0.0], [5.0, 1.0]]), np.array([[3.0, 5.0], [0.0, 1.0]])],  # dilemma
        [np.array([[1.0, -1.0], [-1.0, 1.0]]), np.array([[-1.0, 1.0], [1.0, -1.0]])],  # pennies
    ],
    ids=["chicken", "coordination", "dilemma", "pennies"],
)
def test_two_by_two_games_match_brute_force_over_joint_distributions(
    payoffs: list[np.ndarray],
) -> None:
    expected = leximin_by_grid(payoffs, steps=20)
    assert flat(deviation_ratings(payoffs).ratings) == pytest.approx(expected, abs=1e-9)


def test_random_games_match_the_independent_formulation() -> None:
    rng = np.random.default_rng(3)
    games = [[rng.integers(-3, 4, size=(3, 3)).astype(float) for _ in range(2)] for _ in range(4)]
    games += [[rng.integers(-2, 3, size=(2, 2, 2)).astype(float) for _ in range(3)]]
    a = rng.integers(-3, 4, size=(4, 4)).astype(float)
    games += [[a - a.T, (a - a.T).T]]  # symmetric zero-sum: a degenerate, symmetric optimum
    for payoffs in games:
        result = deviation_ratings(payoffs)
        assert flat(result.ratings) == pytest.approx(independent(payoffs), abs=1e-7)
        # the ratings are the deviation gains of the returned σ, which is a CCE
        assert gains(payoffs, result.equilibrium) == pytest.approx(flat(result.ratings), abs=1e-7)
        assert abs(result.equilibrium.sum() - 1) < 1e-9 and (result.equilibrium >= 0).all()


def test_ratings_are_at_most_zero_and_zero_sum_best_is_zero() -> None:
    rng = np.random.default_rng(5)
    for _ in range(5):
        g1 = rng.normal(size=(3, 4))
        general = deviation_ratings([g1, rng.normal(size=(3, 4))])
        assert max(flat(general.ratings)) <= 1e-12
        zero_sum = deviation_ratings([g1, -g1])
        assert [max(row) for row in zero_sum.ratings] == pytest.approx([0.0, 0.0], abs=1e-9)
    coordination = [np.eye(2), np.eye(2)]
    # general sum: a correlated device worth 1 is lost by either fixed deviation
    assert flat(deviation_ratings(coordination).ratings) == pytest.approx([-0.5] * 4, abs=1e-9)


def test_a_clone_rates_as_its_original_and_moves_no_one() -> None:
    rng = np.random.default_rng(7)
    g1, g2 = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    base = deviation_ratings([g1, g2])
    rows = [0, 1, 2, 1]  # player 1's strategy 1 twice
    cloned = deviation_ratings([g1[rows], g2[rows]])
    assert cloned.ratings[0] == pytest.approx((*base.ratings[0], base.ratings[0][1]), abs=1e-8)
    assert cloned.ratings[1] == pytest.approx(base.ratings[1], abs=1e-8)
    a = rng.normal(size=(4, 4))
    m = a - a.T
    names = ["a", "b", "c", "d"]
    before = symmetric_ratings(m, names)
    idx = [0, 1, 2, 3, 2, 2]  # c three times
    after = symmetric_ratings(m[np.ix_(idx, idx)], [*names, "c2", "c3"])
    for e in names:
        assert after[e] == pytest.approx(before[e], abs=1e-8)
    assert after["c2"] == after["c3"] == pytest.approx(before["c"], abs=1e-8)


def test_offsets_that_depend_on_the_others_change_nothing() -> None:
    rng = np.random.default_rng(9)
    g1, g2 = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    shifted = [g1 + rng.normal(size=(1, 2)) * 5, g2 + rng.normal(size=(3, 1)) * 5]
    assert flat(deviation_ratings(shifted).ratings) == pytest.approx(
        flat(deviation_ratings([g1, g2]).ratings), abs=1e-8
    )


def test_dominance_is_preserved() -> None:
    rng = np.random.default_rng(11)
    g1, g2 = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    g1[2] = g1[0] - rng.random(3)  # strategy 2 dominated by strategy 0
    r = deviation_ratings([g1, g2]).ratings[0]
    assert r[0] >= r[2] - 1e-9


def _cycle(extra_a: bool) -> list[PairResult]:
    """A beats B, B beats C, C beats A, each 8 of 10; with `extra_a`, A2 is an exact copy of A
    (the same results against B and C, ties with A)."""
    out = []
    copies = ["A", "A2"] if extra_a else ["A"]
    for a in copies:
        for k in range(10):
            out.append(PairResult(a, "B", 1.0 if k < 8 else 0.0, game_id=f"{a}B{k}"))
            out.append(PairResult("C", a, 1.0 if k < 8 else 0.0, game_id=f"C{a}{k}"))
    for k in range(10):
        out.append(PairResult("B", "C", 1.0 if k < 8 else 0.0, game_id=f"BC{k}"))
    if extra_a:
        out += [PairResult("A", "A2", 0.5, game_id=f"AA{k}") for k in range(10)]
    return out


def test_a_clone_moves_bradley_terry_but_not_deviation_ratings() -> None:
    """The motivation: on a cycle every entity is equal, and both methods say so; one copy of A
    makes Bradley-Terry prefer C (which beats A twice over) to B, while the deviation ratings
    stay where they were."""
    bt = {r.entity: r.rating for r in bradley_terry(_cycle(False), n_boot=1).ratings}
    bt2 = {r.entity: r.rating for r in bradley_terry(_cycle(True), n_boot=1).ratings}
    assert abs(bt["B"] - bt["C"]) < 1e-3
    assert bt2["C"] - bt2["B"] > 50
    dr, dr2 = pairwise_ratings(_cycle(False)), pairwise_ratings(_cycle(True))
    assert dr == pytest.approx({"A": 0.0, "B": 0.0, "C": 0.0}, abs=1e-9)
    assert dr2 == pytest.approx({"A": 0.0, "A2": 0.0, "B": 0.0, "C": 0.0}, abs=1e-9)


def test_the_pairwise_game_and_its_missing_pairs() -> None:
    results = [
        PairResult("x", "y", 1.0),
        PairResult("y", "x", 0.5),
        PairResult("x", "y", 0.0, weight=2.0),
        PairResult("x", "z", 1.0),
    ]
    game = pairwise_game(results)
    assert game.names == ("x", "y", "z")
    # x vs y: won 1·1 + 1·0.5 + 2·0 of weight 4 -> 0.375, minus ½
    assert game.payoff[0, 1] == pytest.approx(-0.125) and game.payoff[1, 0] == pytest.approx(0.125)
    assert game.missing == [("y", "z")]
    with pytest.raises(StratagemError, match="y vs z never did"):
        pairwise_ratings(results)


def test_task_ratings_ignore_copied_tasks_and_models() -> None:
    rng = np.random.default_rng(13)
    scores = {f"m{i}": {f"t{k}": float(rng.random()) for k in range(4)} for i in range(4)}
    base = task_ratings(scores)
    assert max(base.models.values()) <= 1e-12 and max(base.tasks.values()) <= 1e-12
    copied = {m: {**row, "t0-copy": row["t0"]} for m, row in scores.items()}
    copied["m0-copy"] = dict(copied["m0"])
    again = task_ratings(copied)
    for m, v in base.models.items():
        assert again.models[m] == pytest.approx(v, abs=1e-8)
    for t, v in base.tasks.items():
        assert again.tasks[t] == pytest.approx(v, abs=1e-8)
    assert again.models["m0-copy"] == pytest.approx(base.models["m0"], abs=1e-8)
    assert again.tasks["t0-copy"] == pytest.approx(base.tasks["t0"], abs=1e-8)
    with pytest.raises(StratagemError, match="model 'm1' has no score on task 't9'"):
        task_ratings({"m0": {"t9": 1.0}, "m1": {}})


def test_bad_games_are_named() -> None:
    with pytest.raises(StratagemError, match="2 players' payoffs need 2 axes"):
        deviation_ratings([np.zeros(3), np.zeros(3)])
    with pytest.raises(StratagemError, match="player 1's payoffs have shape"):
        deviation_ratings([np.zeros((2, 2)), np.zeros((2, 3))])
    with pytest.raises(StratagemError, match="do not match"):
        deviation_ratings([np.zeros((2, 2))] * 2, [["a"], ["b", "c"]])
    with pytest.raises(StratagemError, match="square matrix"):
        symmetric_ratings(np.zeros((2, 3)), ["a", "b"])
    assert symmetric_ratings(np.zeros((2, 2)), ["a", "b"]) == {"a": 0.0, "b": 0.0}
