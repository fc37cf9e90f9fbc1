"""seed-002 §4: KL(V0_opponent ‖ V1_focal) on hand-made reports with values worked by hand."""

from __future__ import annotations

import math

import pytest
from tom_builders import game, rep

from stratagem.errors import StratagemError
from stratagem.studies.tom.belief_accuracy import (
    epsilon_sensitivity,
    kl,
    kl_by_turn,
    kl_overall,
    kl_points,
    revealed_kl,
)
from stratagem.studies.tom.options import TomOptions
from stratagem.studies.tom.records import TomGame


def test_kl_of_identical_reports_is_zero() -> None:
    v = {"a": 3, "b": 0, "c": 10}
    assert kl(v, v, ["a", "b", "c"], 1e-6) == 0.0


def test_kl_three_items_by_hand() -> None:
    # P = (.5, .25, .25), Q = (.25, .25, .5): KL = .5 ln 2 + 0 + .25 ln .5 = .25 ln 2
    p, q = {"a": 2, "b": 1, "c": 1}, {"a": 1, "b": 1, "c": 2}
    assert kl(p, q, ["a", "b", "c"], 1e-6) == pytest.approx(0.25 * math.log(2), rel=1e-5)


def test_kl_smoothing_and_missing_items() -> None:
    # ε = 1: P = (1/3, 2/3), Q = (2/3, 1/3): KL = 1/3 ln 1/2 + 2/3 ln 2 = 1/3 ln 2
    assert kl({"a": 0, "b": 1}, {"a": 1}, ["a", "b"], 1.0) == pytest.approx(math.log(2) / 3)
    # an item a report leaves out scores 0
    assert kl({"a": 4}, {"a": 4, "b": 0}, ["a", "b"], 1e-6) == 0.0
    # direction matters: KL(P‖Q) != KL(Q‖P) in general
    p, q = {"a": 9, "b": 1}, {"a": 5, "b": 5}
    assert kl(p, q, ["a", "b"], 1e-6) != pytest.approx(kl(q, p, ["a", "b"], 1e-6))


def test_kl_refuses_empty_domain_and_bad_epsilon() -> None:
    with pytest.raises(StratagemError, match="non-empty"):
        kl({}, {}, [], 1e-6)
    with pytest.raises(StratagemError, match="epsilon"):
        kl({"a": 1}, {"a": 1}, ["a"], 0.0)


def _games() -> list[TomGame]:
    truth = {"a": 2, "b": 1, "c": 1}
    g1 = game(
        "e1",
        reports=[
            rep(1, 0, {"a": 1}, v1=truth),  # turn 1: exact belief -> 0
            rep(1, 1, truth),
            rep(2, 0, {"a": 1}, v1={"a": 1, "b": 1, "c": 2}),  # .25 ln 2
            rep(2, 1, truth),
            rep(3, 0, {"a": 1}, v1=truth),  # opponent's report missing -> no point
            rep(4, 0, {"a": 1}),  # no V1 -> no point
            rep(4, 1, truth),
        ],
    )
    g2 = game("e2", reports=[rep(1, 0, {"a": 1}, v1={"a": 1, "b": 1, "c": 2}), rep(1, 1, truth)])
    g0 = game("e0", group="V0", reports=[rep(1, 0, {"a": 1}), rep(1, 1, truth)])
    return [g1, g2, g0]


def test_kl_points_pair_same_turn_reports() -> None:
    points = kl_points(_games())
    assert [(p.episode_id, p.turn) for p in points] == [("e1", 1), ("e1", 2), ("e2", 1)]
    h = 0.25 * math.log(2)
    assert [p.kl for p in points] == pytest.approx([0.0, h, h], abs=1e-5)
    by_turn = kl_by_turn(points)
    assert by_turn[("m", "V1")][1] == pytest.approx((h / 2, 2), abs=1e-5)
    assert by_turn[("m", "V1")][2] == pytest.approx((h, 1), abs=1e-5)
    mean, n = kl_overall(points)[("m", "V1")]
    assert n == 3 and mean == pytest.approx(2 * h / 3, abs=1e-5)


def test_kl_domain_is_the_union_of_both_reports() -> None:
    g = game("e", reports=[rep(1, 0, {"a": 1}, v1={"a": 5}), rep(1, 1, {"a": 5, "b": 5})])
    # P = (.5, .5), Q ≈ (1, 0): large but finite thanks to ε
    (point,) = kl_points([g])
    assert point.kl == pytest.approx(kl({"a": 5, "b": 5}, {"a": 5}, ["a", "b"], 1e-6))
    assert point.kl > 5


def test_revealed_kl_only_in_the_v2_group() -> None:
    v2 = game("v2", group="V2", reports=[rep(1, 0, {"a": 2, "b": 2}, {"a": 1}, {"a": 2, "b": 2})])
    v1 = game("v1", reports=[rep(1, 0, {"a": 2}, {"a": 1})])
    points = revealed_kl([v1, v2])
    assert [(p.episode_id, p.kl) for p in points] == [("v2", 0.0)]


def test_epsilon_sensitivity_one_mean_per_epsilon() -> None:
    out = epsilon_sensitivity(_games(), TomOptions(epsilons=(1e-6, 1.0)))
    assert set(out) == {("m", "V1")}
    assert set(out[("m", "V1")]) == {1e-6, 1.0}
    # more smoothing pulls both distributions toward uniform: a smaller divergence
    assert out[("m", "V1")][1.0] < out[("m", "V1")][1e-6]
