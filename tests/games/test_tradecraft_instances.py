"""Generated TradeCraft instances (seed-002 §2.4, §3.3): deterministic, by the design rules, with
their difficulty recomputable, and the published 10 first and untouched in the study set."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from stratagem.games.tradecraft.instances import (
    GeneratorOptions,
    describe_difficulty,
    generate_instances,
    study_set,
)
from stratagem.games.tradecraft.instances_search import (
    chain_length,
    craft_plan,
    min_trades,
    replay,
)
from stratagem.games.tradecraft.rules import load_rules

RULES = load_rules()


@pytest.fixture(scope="module")
def generated() -> list[dict[str, Any]]:
    return generate_instances(6, seed=7)


def _union(instance: dict[str, Any]) -> dict[str, int]:
    union: dict[str, int] = {}
    for hand in instance["hands"]:
        for item, amount in hand.items():
            union[item] = union.get(item, 0) + amount
    return union


def test_same_seed_same_instances(generated: list[dict[str, Any]]) -> None:
    assert generate_instances(6, seed=7) == generated
    assert generate_instances(6, seed=8) != generated


def test_published_shape(generated: list[dict[str, Any]]) -> None:
    for instance in generated:
        assert len(instance["hands"]) == 2 and len(instance["targets"]) == 2
        for part in (*instance["hands"], *instance["targets"]):
            assert part and all(isinstance(a, int) and a > 0 for a in part.values())
        (t0,), (t1,) = instance["targets"]
        assert t0 != t1


def test_union_suffices_for_each_target_alone(generated: list[dict[str, Any]]) -> None:
    for instance in generated:
        union = _union(instance)
        for target in instance["targets"]:
            plan = craft_plan(RULES, union, target)
            assert plan is not None
            made = replay(RULES, union, plan)  # the rules module's check, step by step
            assert all(made[i] >= n for i, n in target.items())


def test_each_player_needs_the_other(generated: list[dict[str, Any]]) -> None:
    for instance in generated:
        hands, targets = instance["hands"], instance["targets"]
        for p in (0, 1):
            assert chain_length(RULES, hands[p], targets[p]) is None
            assert min_trades(RULES, hands[p], hands[1 - p], targets[p]) >= 1  # type: ignore[operator]


def test_difficulty_stored_and_recomputed(generated: list[dict[str, Any]]) -> None:
    for instance in generated:
        meta = instance["meta"]
        again = describe_difficulty({k: instance[k] for k in ("hands", "targets")}, RULES)
        assert again is not None
        for key in ("chain_length", "min_trades", "difficulty", "jointly_craftable"):
            assert meta[key] == again[key]
        assert meta["difficulty"] == [
            c * t for c, t in zip(meta["chain_length"], meta["min_trades"], strict=True)
        ]
        assert all(c >= 1 for c in meta["chain_length"])


def test_distractors_present(generated: list[dict[str, Any]]) -> None:
    """§2.4: hands are not the exact needs; some held kind is not needed by either plan."""
    for instance in generated:
        union = _union(instance)
        used: set[str] = set()
        for target in instance["targets"]:
            plan = craft_plan(RULES, union, target)
            assert plan is not None
            for inputs, _, _ in plan:
                used |= set(inputs)
        assert set(union) - used


def test_study_set_starts_with_published_untouched() -> None:
    published = RULES.instances_1v1()
    options = GeneratorOptions()
    small = study_set(12, seed=3, options=options)
    assert len(small) == 12 and small[:10] == published
    assert small[10:] == generate_instances(2, seed=3, options=options)
    assert RULES.instances_1v1() == published  # nothing mutated the packaged data
    longer = study_set(13, seed=3)
    assert longer[:12] == small  # a longer set extends a shorter one (first half of 40 = 20)
    with pytest.raises(ValueError):
        study_set(5)


def test_replay_refuses_an_illegal_step() -> None:
    step = ({"minecraft:oak_planks": Fraction(1)}, "minecraft:stick", 4)  # 4 sticks need 2 planks
    with pytest.raises(ValueError):
        replay(RULES, {"minecraft:oak_planks": 5}, [step])


def test_published_instance_0_matches_the_worked_example() -> None:
    """§2.4's worked example: shears (smelt raw_iron, then craft) and torch (plank to stick, then
    torch) take two crafts each, and one traded kind each (coal for raw_iron)."""
    meta = describe_difficulty(RULES.instances_1v1()[0], RULES)
    assert meta is not None
    assert meta["chain_length"] == [2, 2] and meta["min_trades"] == [1, 1]
    assert meta["difficulty"] == [2, 2] and meta["jointly_craftable"] is True
