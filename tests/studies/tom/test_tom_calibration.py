"""Belief calibration against the opponent's real target (an addition beyond seed-002's paper):
AUC and class means with a hand-made relevance, and the rule-based relevance on instance 0."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from tom_builders import game, rep

from stratagem.games.tradecraft.rules import load_rules
from stratagem.studies.tom.calibration import (
    auc,
    calibration_by_turn,
    calibration_points,
    calibration_summary,
    rules_relevance,
)
from stratagem.studies.tom.records import Items


def test_auc_mann_whitney_with_ties() -> None:
    scores = {"a": 9, "b": 5, "c": 5, "d": 0}
    # relevant {a, b} vs irrelevant {c, d}: a>c, a>d, b=c (1/2), b>d -> 3.5 / 4
    assert auc(scores, {"a", "b"}, ["a", "b", "c", "d"]) == pytest.approx(0.875)
    assert auc(scores, {"d"}, ["a", "b", "c", "d"]) == 0.0
    assert auc(scores, {"zz"}, ["a", "b"]) is None  # nothing of the domain is relevant
    assert auc(scores, set(), ["a", "b"]) is None
    assert auc(scores, {"a", "b"}, ["a", "b"]) is None
    assert auc({}, {"a"}, ["a", "b"]) == 0.5  # missing scores count 0: a tie


def by_hand(target: Items, domain: Sequence[str]) -> set[str]:
    return {i for i in domain if i.startswith(next(iter(target)))}


def test_calibration_points_with_injected_relevance() -> None:
    # the opponent (seat 1) needs "t": items t1, t2 are relevant
    g = game(
        "e",
        targets=({"s": 1}, {"t": 1}),
        reports=[
            rep(1, 0, {"s1": 9}, v1={"t1": 8, "t2": 6, "x": 1}),  # perfect: AUC 1
            rep(1, 1, {"t1": 2, "t2": 2, "x": 2}),  # flat self-report: AUC 1/2
            rep(2, 0, {"s1": 9}, v1={"t1": 0, "x": 5}),  # inverted: AUC 0
        ],
    )
    g0 = game(
        "v0",
        group="V0",
        targets=({"s": 1}, {"t": 1}),
        reports=[rep(1, 0, {"a": 1}), rep(1, 1, {"t1": 3, "x": 1})],
    )
    points = calibration_points([g, g0], by_hand)
    got = [(p.episode_id, p.turn, p.source, p.auc) for p in points]
    assert got == [
        ("e", 1, "V1_focal", 1.0),
        ("e", 1, "V0_opponent", 0.5),
        ("e", 2, "V1_focal", 0.0),
        ("v0", 1, "V0_opponent", 1.0),
    ]
    first = points[0]
    assert (first.mean_relevant, first.mean_irrelevant) == (7.0, 1.0)
    assert (first.n_relevant, first.n_irrelevant) == (2, 1)
    summary = calibration_summary(points)
    s = summary[("m", "V1", "V1_focal")]
    assert (s.mean_auc, s.auc_points, s.points) == (0.5, 2, 2)
    assert (s.mean_relevant, s.mean_irrelevant) == (3.5, 3.0)
    assert summary[("m", "V0", "V0_opponent")].mean_auc == 1.0
    turns = calibration_by_turn(points)
    assert turns[("m", "V1", "V1_focal")] == {1: (1.0, 1), 2: (0.0, 1)}


def test_rule_relevance_on_instance_0() -> None:
    instance = load_rules().instances_1v1()[0]
    domain = sorted({i for hand in instance["hands"] for i in hand})
    relevant = rules_relevance(load_rules())
    torch = relevant(instance["targets"][1], domain)  # seat 1 needs a torch
    assert "minecraft:coal" in torch  # a direct input
    assert "minecraft:oak_planks" in torch  # planks -> stick -> torch
    assert "minecraft:raw_iron" not in torch
    assert "minecraft:cobblestone" not in torch
    shears = relevant(instance["targets"][0], domain)  # seat 0 needs shears
    assert {"minecraft:iron_ingot", "minecraft:raw_iron", "minecraft:coal"} <= shears
    assert "minecraft:raw_copper" not in shears
    shallow = rules_relevance(load_rules(), depth=1)(instance["targets"][1], domain)
    assert shallow == {"minecraft:coal"}
