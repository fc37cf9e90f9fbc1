"""Bradley-Terry ratings: recovery of known strengths, type weighting, bootstrap intervals, the
reduction of a multi-seat game to pairwise results."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stratagem.analysis.rating import (
    BASE,
    ELO_SCALE,
    PairResult,
    bradley_terry,
    seat_pairs,
)
from stratagem.errors import StratagemError


def _simulated(strengths: dict[str, float], games_per_pair: int, seed: int) -> list[PairResult]:
    """Results drawn from the model itself: P(a beats b) = σ(θ_a - θ_b)."""
    rng = np.random.default_rng(seed)
    names = sorted(strengths)
    out = []
    for x, a in enumerate(names):
        for b in names[x + 1 :]:
            p = 1 / (1 + math.exp(-(strengths[a] - strengths[b])))
            for k in range(games_per_pair):
                won = float(rng.random() < p)
                out.append(PairResult(a, b, won, game_type="t", game_id=f"{a}-{b}-{k}"))
    return out


def test_recovers_the_order_of_known_strengths() -> None:
    results = _simulated({"strong": 1.0, "middle": 0.0, "weak": -1.0}, 400, seed=11)
    table = bradley_terry(results, n_boot=100, seed=0)
    assert [r.entity for r in table.ratings] == ["strong", "middle", "weak"]
    by = {r.entity: r.rating for r in table.ratings}
    # one unit of θ is ELO_SCALE (173.7) points; 400 games a pair pin it to within ~0.15 θ
    assert by["strong"] - by["middle"] == pytest.approx(ELO_SCALE, abs=0.2 * ELO_SCALE)
    assert by["middle"] - by["weak"] == pytest.approx(ELO_SCALE, abs=0.2 * ELO_SCALE)
    # no anchor: the ratings average BASE (the L2 prior centres the strengths)
    assert np.mean(list(by.values())) == pytest.approx(BASE)


def test_anchor_is_rated_base() -> None:
    results = _simulated({"a": 0.5, "b": 0.0}, 50, seed=1)
    table = bradley_terry(results, anchor="b", n_boot=20)
    assert {r.entity: r.rating for r in table.ratings}["b"] == pytest.approx(BASE)
    with pytest.raises(StratagemError, match="anchor"):
        bradley_terry(results, anchor="zzz", n_boot=20)


def test_type_weighting_changes_nothing_when_types_agree() -> None:
    # the same results pattern, 10 times in type "big" and once in type "small"
    pattern = [("a", "b", 1.0), ("a", "b", 1.0), ("a", "b", 0.0), ("b", "c", 0.5), ("a", "c", 1.0)]
    results = [
        PairResult(a, b, y, game_type=t, game_id=f"{t}{k}-{i}")
        for t, copies in (("big", 10), ("small", 1))
        for k in range(copies)
        for i, (a, b, y) in enumerate(pattern)
    ]
    balanced = bradley_terry(results, balance_types=True, n_boot=10)
    plain = bradley_terry(results, balance_types=False, n_boot=10)
    for x, y in zip(balanced.ratings, plain.ratings, strict=True):
        assert x.entity == y.entity
        assert x.rating == pytest.approx(y.rating, abs=1e-4)


def test_type_weighting_counts_each_type_equally() -> None:
    # type "big": a beats b 9 times of 10 games; type "small": b beats a in its 1 game.
    results = [PairResult("a", "b", 1.0, "big", f"g{k}") for k in range(9)]
    results.append(PairResult("a", "b", 0.0, "big", "g9"))
    results.append(PairResult("a", "b", 0.0, "small", "s0"))
    plain = {r.entity: r.rating for r in bradley_terry(results, balance_types=False).ratings}
    balanced = {r.entity: r.rating for r in bradley_terry(results, n_boot=50).ratings}
    assert plain["a"] > plain["b"]  # 9 of 11 for a
    # balanced: each type weighs 5.5; a's weighted wins = 5.5 * 0.9 = 4.95 of 11 -> below half
    assert balanced["a"] < balanced["b"]


def test_intervals_contain_the_point_and_repeat_with_the_seed() -> None:
    results = _simulated({"a": 0.8, "b": 0.0, "c": -0.4}, 40, seed=5)
    one = bradley_terry(results, n_boot=200, seed=9)
    two = bradley_terry(results, n_boot=200, seed=9)
    other = bradley_terry(results, n_boot=200, seed=10)
    assert one == two
    assert one != other
    for r in one.ratings:
        assert r.ci_low is not None and r.ci_high is not None
        assert r.ci_low <= r.rating <= r.ci_high
        assert r.ci_low < r.ci_high


def test_counts_and_cost_column() -> None:
    results = [
        *seat_pairs(["x", "x", "y"], [2, 2, 0], game_type="g", game_id="1"),  # x beats y twice
        *seat_pairs(["x", "y", "y"], [1, 1, 1], game_type="g", game_id="2"),  # two ties
        *seat_pairs(["y", "x"], [True, False], game_type="h", game_id="1"),  # y beats x
    ]
    table = bradley_terry(results, n_boot=20, cost_per_game={"x": 0.12})
    by = {r.entity: r for r in table.ratings}
    assert (by["x"].games, by["x"].comparisons) == (3, 5)
    assert (by["x"].wins, by["x"].ties, by["x"].losses) == (2, 2, 1)
    assert (by["y"].wins, by["y"].ties, by["y"].losses) == (1, 2, 2)
    assert by["x"].cost_per_game == 0.12 and by["y"].cost_per_game is None


def test_all_ties_rate_everyone_alike() -> None:
    results = [PairResult("a", "b", 0.5, game_id=str(k)) for k in range(5)]
    results += [PairResult("b", "c", 0.5, game_id=f"c{k}") for k in range(5)]
    table = bradley_terry(results, n_boot=20)
    for r in table.ratings:
        assert r.rating == pytest.approx(BASE, abs=1e-3)


# -- the reduction of one game to pairs ----------------------------------------------------


def test_seat_pairs_compare_only_different_entities() -> None:
    # a MAgIC majority game: the challenger's two seats won 2 credits each, the spy 0
    pairs = seat_pairs(["m", "m", "gpt4"], [2, 2, 0], game_type="chameleon", game_id="7")
    assert [(p.a, p.b, p.outcome) for p in pairs] == [("m", "gpt4", 1.0), ("m", "gpt4", 1.0)]
    assert all(p.weight == 0.5 for p in pairs)  # the game counts once
    assert all((p.game_type, p.game_id) == ("chameleon", "7") for p in pairs)
    per_pair = seat_pairs(["m", "m", "gpt4"], [2, 2, 0], weighting="pair")
    assert all(p.weight == 1.0 for p in per_pair)
    assert seat_pairs(["m", "m"], [1, 0]) == []


def test_seat_pairs_ties_and_losses() -> None:
    pairs = seat_pairs(["a", "b", "c"], [1.0, 1.0, 3.0])
    # a-b tie, a-c loss, b-c loss; three comparisons share the game's weight
    assert [(p.a, p.b, p.outcome) for p in pairs] == [
        ("a", "b", 0.5),
        ("a", "c", 0.0),
        ("b", "c", 0.0),
    ]
    assert sum(p.weight for p in pairs) == pytest.approx(1.0)
    with pytest.raises(StratagemError, match="scores"):
        seat_pairs(["a", "b"], [1.0])


def test_bad_input_is_refused() -> None:
    with pytest.raises(StratagemError, match="no pairwise"):
        bradley_terry([])
    with pytest.raises(StratagemError, match="itself"):
        bradley_terry([PairResult("a", "a", 1.0)])
    with pytest.raises(StratagemError, match="outcome"):
        bradley_terry([PairResult("a", "b", 2.0)])
    with pytest.raises(StratagemError, match="l2"):
        bradley_terry([PairResult("a", "b", 1.0)], l2=0.0)
