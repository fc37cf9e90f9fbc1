"""Solution concepts against the facts the specs state about their games."""

from __future__ import annotations

import numpy as np
import pytest

from stratagem.errors import StratagemError
from stratagem.games import (
    NormalFormGame,
    dominant_action,
    expected_payoffs,
    get_stage,
    is_equilibrium,
    iterated_strict_dominance,
    nash_equilibria,
    pareto_optimal,
    pure_nash_equilibria,
    strictly_dominated,
    symmetric_equilibria,
    symmetric_equilibrium,
)

C, D = 0, 1


def by_label(game: NormalFormGame, sigma: np.ndarray, order: tuple[str, ...]) -> list[float]:
    """A strategy's probabilities in a given label order, whatever the game's own order."""
    return [float(sigma[game.labels[0].index(label)]) for label in order]


# -- seed-001 §2 / §4.1 -------------------------------------------------------------------------


def test_confusion_has_exactly_the_two_pure_equilibria_cc_and_dd() -> None:
    confusion = get_stage("confusion")
    assert pure_nash_equilibria(confusion) == [(C, C), (D, D)]
    assert dominant_action(confusion, 0) is None
    assert strictly_dominated(confusion, 0) == []
    # seed-001 §2: only (C,C) is Pareto-optimal.
    assert pareto_optimal(confusion) == [(C, C)]


def test_dilemma_unique_equilibrium_dd_and_defect_strictly_dominant() -> None:
    dilemma = get_stage("dilemma")
    eqs = nash_equilibria(dilemma)
    assert len(eqs) == 1
    np.testing.assert_allclose(eqs[0][0], [0, 1])
    np.testing.assert_allclose(eqs[0][1], [0, 1])
    assert pure_nash_equilibria(dilemma) == [(D, D)]
    assert dominant_action(dilemma, 0) == D
    assert dominant_action(dilemma, 1) == D
    assert strictly_dominated(dilemma, 0) == [C]
    assert iterated_strict_dominance(dilemma) == ((D,), (D,))


def test_dilemma_cc_is_pareto_optimal_and_dd_is_not() -> None:
    optimal = pareto_optimal(get_stage("dilemma"))
    assert (C, C) in optimal
    assert (D, D) not in optimal


def test_delight_cooperate_dominant() -> None:
    delight = get_stage("delight")
    assert dominant_action(delight, 0) == C
    assert dominant_action(delight, 1) == C
    assert pure_nash_equilibria(delight) == [(C, C)]
    assert len(nash_equilibria(delight)) == 1


# -- seed-003 §1.2-1.3 ---------------------------------------------------------------------------


def test_stag_hunt_has_three_equilibria_including_mixed_one_third() -> None:
    sh = get_stage("sh")
    eqs = nash_equilibria(sh)
    assert len(eqs) == 3
    pure = [(int(np.argmax(x)), int(np.argmax(y))) for x, y in eqs[:2]]
    assert pure == [(0, 0), (1, 1)]
    mixed_row, mixed_col = eqs[2]
    np.testing.assert_allclose(mixed_row, [1 / 3, 2 / 3], atol=1e-8)
    np.testing.assert_allclose(mixed_col, [1 / 3, 2 / 3], atol=1e-8)
    # seed-003 §1.2: P(first action) = (bb - ab) / (aa - ab + bb - ba) = (2 - 1) / (6 - 1 + 2 - 4).
    assert mixed_row[0] == pytest.approx((2 - 1) / (6 - 1 + 2 - 4), abs=1e-8)


@pytest.mark.parametrize("name", ["pd", "sh-alt"])
def test_seed003_pd_payoffs_unique_equilibrium_second_action(name: str) -> None:
    game = get_stage(name)
    eqs = nash_equilibria(game)
    assert len(eqs) == 1
    np.testing.assert_allclose(eqs[0][0], [0, 1])
    assert dominant_action(game, 0) == 1


@pytest.mark.parametrize("name", ["eq1", "eq1-alt"])
def test_rps_default_and_label_variant_uniform(name: str) -> None:
    eqs = nash_equilibria(get_stage(name))
    assert len(eqs) == 1
    np.testing.assert_allclose(eqs[0][0], [1 / 3] * 3, atol=1e-8)
    np.testing.assert_allclose(eqs[0][1], [1 / 3] * 3, atol=1e-8)


@pytest.mark.parametrize("name", ["ba3", "ba3-alt"])
def test_rps_payoff_variants_equilibrium_in_rps_order(name: str) -> None:
    # seed-003 §1.3: (R, P, S) = (0.2, 0.2, 0.6) for ba3, and again for ba3-alt once its
    # (paper, rock, scissors) order is mapped back to rock, paper, scissors.
    game = get_stage(name)
    eqs = nash_equilibria(game)
    assert len(eqs) == 1
    for sigma in eqs[0]:
        assert by_label(game, sigma, ("rock", "paper", "scissors")) == pytest.approx(
            [0.2, 0.2, 0.6], abs=1e-8
        )
    # Value 0: the game is zero-sum and symmetric.
    assert expected_payoffs(game, eqs[0]) == pytest.approx((0.0, 0.0), abs=1e-8)


def test_ba3_alt_matches_the_code_formula() -> None:
    # seed-003 §1.3: P(a) = cb/Σ, P(b) = ac/Σ, P(c) = ba/Σ with ac=1, ba=3, cb=1.
    sigma = symmetric_equilibrium(get_stage("ba3-alt"))
    np.testing.assert_allclose(sigma, [1 / 5, 1 / 5, 3 / 5], atol=1e-8)


def test_symmetric_equilibrium_selection() -> None:
    sh = get_stage("sh")
    np.testing.assert_allclose(symmetric_equilibrium(sh), [1 / 3, 2 / 3], atol=1e-8)
    np.testing.assert_allclose(symmetric_equilibrium(sh, selection="mixed"), [1 / 3, 2 / 3])
    np.testing.assert_allclose(symmetric_equilibrium(sh, selection="first"), [1, 0])
    assert len(symmetric_equilibria(sh)) == 3
    # Unique: both selections agree.
    pd = get_stage("pd")
    np.testing.assert_allclose(symmetric_equilibrium(pd, "first"), [0, 1])
    np.testing.assert_allclose(symmetric_equilibrium(pd, "mixed"), [0, 1])


def test_symmetric_equilibrium_errors() -> None:
    with pytest.raises(StratagemError, match="unknown equilibrium selection 'best'"):
        symmetric_equilibrium(get_stage("sh"), selection="best")
    asym = NormalFormGame.bimatrix(
        "asym", [["a", "b"], ["x", "y"]], [[1, 0], [0, 1]], [[0, 1], [1, 0]]
    )
    with pytest.raises(StratagemError, match="not a symmetric 2-player game"):
        symmetric_equilibrium(asym)


def test_matching_pennies_unique_mixed() -> None:
    mp = NormalFormGame.bimatrix(
        "mp", [["h", "t"], ["h", "t"]], [[1, -1], [-1, 1]], [[-1, 1], [1, -1]]
    )
    eqs = nash_equilibria(mp)
    assert len(eqs) == 1
    np.testing.assert_allclose(eqs[0][0], [0.5, 0.5])
    assert pure_nash_equilibria(mp) == []


def test_degenerate_game_still_yields_verified_equilibria() -> None:
    # All payoffs equal: every profile is an equilibrium (a continuum); the extreme ones are listed.
    flat = NormalFormGame.symmetric("flat", ["a", "b"], [[1, 1], [1, 1]])
    eqs = nash_equilibria(flat)
    assert len(eqs) >= 2
    assert all(is_equilibrium(flat, eq) for eq in eqs)
    assert symmetric_equilibrium(flat).shape == (2,)
    # Column player indifferent, row strictly prefers a: (a, x) and (a, y) are both equilibria.
    deg = NormalFormGame.bimatrix(
        "deg", [["a", "b"], ["x", "y"]], [[1, 1], [0, 0]], [[1, 1], [1, 1]]
    )
    pure = {(int(np.argmax(x)), int(np.argmax(y))) for x, y in nash_equilibria(deg)}
    assert pure == {(0, 0), (0, 1)}


def test_equilibria_are_rounded_and_deduplicated() -> None:
    for _x, _y in nash_equilibria(get_stage("confusion")):
        for sigma in (_x, _y):
            assert np.all(sigma >= 0)
            assert float(sigma.sum()) == pytest.approx(1.0)
            assert np.array_equal(sigma, np.round(sigma, 9))
    eqs = nash_equilibria(get_stage("confusion"))
    keys = {tuple(map(tuple, eq)) for eq in eqs}
    assert len(keys) == len(eqs) == 3


def test_nash_equilibria_needs_two_players() -> None:
    with pytest.raises(StratagemError, match="3 players"):
        nash_equilibria(get_stage("npd3"))


# -- n players: seed-004 §3.4 ------------------------------------------------------------------


def test_three_player_pd_defect_dominant_and_all_defect_unique_pure_equilibrium() -> None:
    npd3 = get_stage("npd3")
    assert pure_nash_equilibria(npd3) == [(D, D, D)]
    for p in range(3):
        assert dominant_action(npd3, p) == D
    assert iterated_strict_dominance(npd3) == ((D,), (D,), (D,))
    # All-cooperate Pareto-dominates all-defect (2 > 1 each).
    assert (C, C, C) in pareto_optimal(npd3)
    assert (D, D, D) not in pareto_optimal(npd3)
    assert is_equilibrium(npd3, [[0, 1]] * 3)
    assert not is_equilibrium(npd3, [[1, 0]] * 3)


def test_iterated_dominance_needs_several_rounds() -> None:
    row = [[1, 1, 0], [0, 0, 2]]
    col = [[0, 2, 1], [3, 1, 0]]
    game = NormalFormGame.bimatrix("iter", [["U", "D"], ["L", "M", "R"]], row, col)
    # R is dominated by M for the column player (2 > 1, 1 > 0); then D is dominated by U for
    # the row player (1 > 0, 1 > 0); then L is dominated by M (2 > 0).
    assert strictly_dominated(game, 1) == [2]
    assert strictly_dominated(game, 0) == []
    assert iterated_strict_dominance(game) == ((0,), (1,))


def test_player_index_is_validated() -> None:
    with pytest.raises(StratagemError, match="got player 2"):
        strictly_dominated(get_stage("pd"), 2)


def test_expected_payoffs_validates_strategies() -> None:
    pd = get_stage("pd")
    assert expected_payoffs(pd, [[1, 0], [0, 1]]) == (1.0, 6.0)
    with pytest.raises(StratagemError, match="not a probability vector"):
        expected_payoffs(pd, [[0.7, 0.7], [0, 1]])
    with pytest.raises(StratagemError, match="expected \\(2,\\)"):
        expected_payoffs(pd, [[1, 0, 0], [0, 1]])
    with pytest.raises(StratagemError, match="2 players, got 1"):
        expected_payoffs(pd, [[1, 0]])
