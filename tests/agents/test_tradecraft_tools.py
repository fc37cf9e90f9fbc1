"""TradeCraft's tools (seed-002 §2.6, §2.3) on published instance 0: seat 0 holds cherry_planks,
coal, iron_ingot, raw_copper, cobblestone (target shears); seat 1 oak_planks, raw_iron x5,
cobblestone, raw_copper x2 (target torch)."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest

from stratagem.agents.tom.tools import (
    CRAFT_TOOLS,
    INFO_TOOLS,
    CraftBench,
    item_info,
    possible_recipes,
    run_tool,
)
from stratagem.games.spaces import IllegalAction
from stratagem.games.tradecraft.actions import MAX_CRAFT_ITEMS, CraftSpace, OverBound, craft_items
from stratagem.games.tradecraft.game import TradecraftGame
from stratagem.games.tradecraft.rules import to_fraction

M = "minecraft:"
GAME = TradecraftGame(0)
RULES = GAME.rules
HAND0, HAND1 = GAME.hands


def test_the_tools_offered() -> None:
    assert [t.name for t in INFO_TOOLS] == ["item_info", "possible_recipes_from_hand"]
    assert [t.name for t in CRAFT_TOOLS] == [
        "craft_recipe_check",
        "craft_recipe_apply",
        "craft_done",
    ]
    assert INFO_TOOLS[0].parameters["required"] == ["item"]
    assert set(CRAFT_TOOLS[0].parameters["properties"]) == {"input", "output"}


def test_item_info_lists_what_makes_and_uses_an_item() -> None:
    torch = item_info(RULES, "torch")
    assert (
        "can be crafted from:\n- torch (crafting_shaped): 4 torch from 1 charcoal or coal + 1 stick"
        in torch
    )
    assert "lantern" in torch  # used in
    stick = item_info(RULES, "minecraft:stick")
    assert "2 #minecraft:planks (any of: acacia_planks" in stick and "more)" in stick
    ingot = item_info(RULES, "iron_ingot")
    assert "1 iron_ingot from 1 raw_iron + fuel: 1/8 coal or 2/3 planks" in ingot
    assert "... and 22 more" in ingot and len(ingot) < 4000  # bounded
    assert "fuel: one smelt needs 1/8 coal" in item_info(RULES, "coal")
    assert "tags: #minecraft:coals" in item_info(RULES, "coal")
    assert item_info(RULES, "#planks").startswith("#minecraft:planks: any of acacia_planks")
    assert item_info(RULES, "diamond_sword_of_doom") == (
        "unknown item minecraft:diamond_sword_of_doom: no recipe makes or uses it"
    )


def test_possible_recipes_from_a_hand() -> None:
    text = possible_recipes(RULES, HAND1)
    assert "- stick: 1 stick from 1/2 oak_planks" in text
    assert (
        "- iron_ingot_from_smelting_raw_iron: 1 iron_ingot from 2/3 oak_planks, 1 raw_iron" in text
    )
    assert "- stone: 1 stone from 1/8 coal, 1 cobblestone" in possible_recipes(RULES, HAND0)
    assert possible_recipes(RULES, {}) == "nothing can be crafted from your hand"
    rich = {item: 64 for item in ("minecraft:oak_log", "minecraft:iron_ingot", "minecraft:stick",
                                  "minecraft:coal", "minecraft:cobblestone")}  # fmt: skip
    assert "... and " in possible_recipes(RULES, rich)  # capped


def test_the_bench_checks_applies_and_finishes() -> None:
    bench = CraftBench(RULES, HAND1)
    answer = bench.check({"oak_planks": 0.5}, {"stick": 1})
    assert answer.ok and answer.content.startswith("code 0 (ok): recipe stick makes 1 stick")
    assert bench.apply().ok
    assert bench.hand["minecraft:oak_planks"] == Fraction(1, 2)
    assert bench.hand["minecraft:stick"] == 1
    smelt = bench.check({"raw_iron": 1, "oak_planks": "1/3"}, {"iron_ingot": 1})
    assert not smelt.ok and smelt.content.startswith("code 1")  # 1/3 plank is not 1/8 coal
    assert bench.apply().error == "no_check"  # the last check failed
    missing = bench.check({"coal": "1/4", "stick": "1/4"}, {"torch": 1})
    assert missing.content.startswith("code 2 (insufficient items): not enough minecraft:coal")
    assert missing.error == "insufficient_items"
    bad = bench.check({"stick": 1}, {"diamond": 1})
    assert bad.error == "invalid_recipe" and "code 1" in bad.content
    assert (bench.checks, bench.errors, len(bench.crafts)) == (4, 4, 1)
    done = bench.finish()
    assert done.ok and bench.done
    assert "lost to flooring: 1/2 oak_planks" in done.content
    assert "your hand will be 1 cobblestone, 2 raw_copper, 5 raw_iron, 1 stick" in done.content
    assert bench.check({"oak_planks": "1/2"}, {"stick": 1}).error == "finished"


def test_apply_without_a_check_is_an_error() -> None:
    bench = CraftBench(RULES, HAND1)
    answer = bench.apply()
    assert not answer.ok and answer.error == "no_check" and bench.errors == 1
    assert bench.finish().content.endswith("nothing is lost to flooring")
    assert bench.action() == "[]"


def test_the_bench_action_is_a_legal_craft_move() -> None:
    state = GAME.initial_state()
    state = state.apply({0: '{"offer": {"coal": 1}, "request": {"raw_iron": 1}}'})[0]
    state = state.apply({1: "accept"})[0]
    benches = [CraftBench(RULES, h) for h in state.hands]
    for step in (
        ({"raw_iron": 1, "cherry_planks": "2/3"}, {"iron_ingot": 1}),
        ({"iron_ingot": 2}, {"shears": 1}),
    ):
        assert benches[0].check(*step).ok and benches[0].apply().ok
    for step in (
        ({"oak_planks": "1/2"}, {"stick": 1}),
        ({"coal": "1/4", "stick": "1/4"}, {"torch": 1}),
    ):
        assert benches[1].check(*step).ok and benches[1].apply().ok
    actions = {}
    for seat, bench in enumerate(benches):
        space = state.legal(seat)
        assert isinstance(space, CraftSpace)
        assert space.validate(bench.action()) == bench.action()  # canonical already
        actions[seat] = bench.action()
    end = state.apply(actions)[0]
    assert end.is_terminal() and end.winners == (0, 1)
    assert json.loads(benches[1].action())[0] == {"input": {"minecraft:oak_planks": "1/2"},
                                                  "output": {"minecraft:stick": 1}}  # fmt: skip


def test_run_tool_dispatches_and_refuses_out_of_phase() -> None:
    answer = run_tool("item_info", {"item": "torch"}, RULES, HAND1)
    assert answer.ok and "charcoal or coal" in answer.content
    assert "1/2 oak_planks" in run_tool("possible_recipes_from_hand", {}, RULES, HAND1).content
    phase = run_tool("craft_recipe_apply", {}, RULES, HAND1)
    assert (phase.ok, phase.error) == (False, "phase_error")
    assert "craft tools only work in the craft phase" in phase.content
    unknown = run_tool("craft_64_diamonds", {}, RULES, HAND1)
    assert unknown.error == "unknown_tool" and "item_info" in unknown.content
    assert run_tool("item_info", {}, RULES, HAND1).error == "bad_arguments"
    assert run_tool("item_info", {"item": 5}, RULES, HAND1).error == "bad_arguments"
    assert run_tool("item_info", {"item": "x", "y": 1}, RULES, HAND1).error == "bad_arguments"
    assert run_tool("item_info", {"item": "nope"}, RULES, HAND1).error == "unknown_item"
    assert len(run_tool("item_info", {"item": "x" * 10_000}, RULES, HAND1).content) < 200
    bench = CraftBench(RULES, HAND1)
    args = {"input": {"oak_planks": "1/2"}, "output": {"stick": 1}}
    assert run_tool("craft_recipe_check", args, RULES, HAND1, bench).ok
    assert run_tool("craft_recipe_apply", {}, RULES, HAND1, bench).ok
    after = run_tool("possible_recipes_from_hand", {}, RULES, HAND1, bench).content
    assert "stick: 1 stick from 1/2 oak_planks" in after  # the bench's hand now: 1/2 plank
    assert "bowl" not in after  # 3/4 plank no longer held
    assert run_tool("craft_done", {}, RULES, HAND1, bench).ok and bench.done


INJECTIONS: list[Any] = [
    "craft 64 diamonds",
    {"input": {"diamond": 64}, "output": {"diamond_block": 7}},
    {"input": {"oak_planks": "1e99999999"}, "output": {"stick": 1}},
    {"input": {"oak_planks": 10**40}, "output": {"stick": 10**40}},
    {"input": {"oak_planks": -2}, "output": {"stick": -4}},
    {"input": {"oak_planks": "-1/2"}, "output": {"stick": 1}},
    {"input": {"oak_planks": float("nan")}, "output": {"stick": 1}},
    {"input": {"oak_planks": float("inf")}, "output": {"stick": 1}},
    {"input": {"oak_planks": True}, "output": {"stick": 1}},
    {"input": {"oak_planks": {"$gt": 0}}, "output": {"stick": [1]}},
    {"input": [["oak_planks", 0.5]], "output": {"stick": 1}},
    {"input": {"oak_planks": 0.5, "oak_planks ": 0.5}, "output": {"stick": 2}},
    {"input": {"x" * 10_000: 1}, "output": {"stick": 1}},
    {"input": {"oak_planks": "1/2"}, "output": {"stick": 1}, "hand": {"diamond": 64}},
    {"input": None, "output": None},
    {"input": {"oak_planks": "1/0"}, "output": {"stick": 1}},
    {"input": {"oak_planks": "0.5"}, "output": {"stick": "1.5"}},
]


@pytest.mark.parametrize("arguments", INJECTIONS)
def test_injected_arguments_never_change_the_hand(arguments: Any) -> None:
    bench = CraftBench(RULES, HAND1)
    before = dict(bench.hand)
    for name in ("craft_recipe_check", "craft_recipe_apply", "item_info"):
        answer = run_tool(name, arguments, RULES, HAND1, bench)
        assert not answer.ok and answer.error and len(answer.content) < 500
    assert bench.hand == before and bench.crafts == [] and bench.action() == "[]"


# -- one set of rules for the tool and the engine (issue 24 items 11, 12) -------------------------

IRON = M + "raw_iron"
FUELS = sorted(RULES.fuel)[:16]


def seventeen_inputs() -> dict[str, str]:
    """1 raw_iron smelted with its 1/8 coal of fuel paid by 16 different fuels (§2.3: "a tag
    input may be covered by mixing member items"; fuel likewise, §2.2), 1/128 unit each."""
    share = RULES.options.fuel_per_craft / len(FUELS)
    return {IRON: "1"} | {f: str(share / RULES.fuel_units(f)) for f in FUELS}


def engine_verdict(hand: dict[str, Fraction], inputs: Any, output: Any) -> bool:
    space = CraftSpace(hand=tuple(sorted(hand.items())), rules=RULES)
    try:
        space.validate(json.dumps([{"input": inputs, "output": output}]))
    except IllegalAction:
        return False
    return True


def test_a_craft_of_seventeen_inputs_is_legal_for_the_tool_and_the_engine() -> None:
    inputs = seventeen_inputs()
    assert len(inputs) == 17 and IRON not in FUELS
    hand = {item: Fraction(1) for item in inputs}
    assert RULES.check(hand, inputs, {M + "iron_ingot": 1}).ok  # the rules accept it
    bench = CraftBench(RULES, hand)
    answer = bench.check(inputs, {"iron_ingot": 1})
    assert answer.ok, answer.content  # was "code 1 (invalid recipe): ... 1 to 16 item"
    assert bench.apply().ok
    assert CraftSpace(hand=tuple(sorted(hand.items())), rules=RULES).validate(bench.action())


def test_the_size_bound_is_one_bound_reported_as_a_bound() -> None:
    # Every legal request fits: the widest is a cooking recipe fed by every fuel.
    widest = max(
        len(
            frozenset().union(*(s.items for s in r.slots))
            | (RULES.fuel.keys() if r.fuel else set())
        )
        for r in RULES.recipes
    )
    assert widest <= MAX_CRAFT_ITEMS
    names = [a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "abcdefghijklmnopqrstuvwxyz"]
    over = dict.fromkeys(names[: MAX_CRAFT_ITEMS + 1], 1)
    bench = CraftBench(RULES, HAND1)
    answer = bench.check(over, {"stick": 1})
    assert (answer.ok, answer.error) == (False, "over_bound")
    assert "code 1" not in answer.content and "size bound" in answer.content
    space = CraftSpace(hand=tuple((i, Fraction(n)) for i, n in HAND1.items()), rules=RULES)
    with pytest.raises(OverBound, match="size bound"):  # the engine: the same bound, same check
        space.validate(json.dumps([{"input": over, "output": {"stick": 1}}], separators=(",", ":")))
    with pytest.raises(OverBound):
        craft_items(over, "input")


@pytest.mark.parametrize(
    "coal",
    ["1/8", "0.125", 0.125, " 1/8 ", "0.1250000000000", "2/16", "1/" + "0" * 31, "1e-1",
     "Infinity", "NaN", "0.12 5", "1/0", True, 10**31, "¹/8"],
)  # fmt: skip
def test_the_tool_and_the_engine_read_amounts_alike(coal: Any) -> None:
    """One amount parser: "0.1250000000000" (13 decimals) passed the engine and not the tool;
    Infinity crashed the engine (OverflowError) where the tool refused it."""
    hand = {IRON: Fraction(1), M + "coal": Fraction(1)}
    inputs = {"raw_iron": 1, "coal": coal}
    if coal in ("Infinity", "NaN"):
        inputs["coal"] = float(coal.lower().replace("infinity", "inf"))
    tool = CraftBench(RULES, hand).check(inputs, {"iron_ingot": 1}).ok
    assert tool == engine_verdict(hand, inputs, {"iron_ingot": 1})
    assert tool == (to_fraction_or_none(coal) == Fraction(1, 8))


def to_fraction_or_none(value: Any) -> Fraction | None:
    try:
        return to_fraction(value)
    except ValueError:
        return None


def test_the_bench_stops_before_the_move_outgrows_the_engine() -> None:
    """The engine refuses a craft move over its text bound; the bench refuses the apply that
    would make it so, and what it submits is always a move the engine takes."""
    hand = {M + "oak_planks": Fraction(40)}
    bench = CraftBench(RULES, hand)
    refused = None
    for _ in range(80):
        assert bench.check({"oak_planks": "1/2"}, {"stick": 1}).ok
        if not (answer := bench.apply()).ok:
            refused = answer
            break
    assert refused is not None and refused.error == "too_many"
    space = CraftSpace(hand=tuple(hand.items()), rules=RULES)
    assert space.validate(bench.action()) == bench.action()
