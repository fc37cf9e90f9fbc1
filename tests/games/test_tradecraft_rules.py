"""TradeCraft's packaged rules and the strict recipe check (seed-002 §2.2-2.4, §13 item 1).

The shipped-data tests need only the package; the converter tests read `../shared/data` and skip
where a clone has no such folder.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
from collections.abc import Mapping
from fractions import Fraction as F
from importlib import resources
from pathlib import Path
from types import ModuleType

import pytest

from stratagem.games.tradecraft.rules import (
    INSUFFICIENT_ITEMS,
    INVALID_RECIPE,
    OK,
    CraftOptions,
    Recipe,
    Slot,
    TradecraftRules,
    apply_craft,
    floor_hand,
    load_rules,
    to_fraction,
)

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT.parent / "shared/data/tradecraft-minecraft-1.20"
needs_source = pytest.mark.skipif(not SOURCE.is_dir(), reason="no ../shared/data in this clone")

M = "minecraft:"


def mc(items: Mapping[str, F | int]) -> dict[str, F]:
    return {M + k: F(v) for k, v in items.items()}


@pytest.fixture(scope="module")
def rules() -> TradecraftRules:
    return load_rules()


# seed-002 §2.2's table of the recipes the known instances need (one concrete choice per tag)
SPEC_TABLE = [
    ("shears", 1, {"iron_ingot": 2}),
    ("torch", 4, {"coal": 1, "stick": 1}),
    ("torch", 4, {"charcoal": 1, "stick": 1}),
    ("stick", 4, {"cherry_planks": 2}),
    ("stick", 4, {"oak_planks": 1, "birch_planks": 1}),  # a tag covered by mixing members
    ("bucket", 1, {"iron_ingot": 3}),
    ("stone_shovel", 1, {"cobblestone": 1, "stick": 2}),
    ("lever", 1, {"cobblestone": 1, "stick": 1}),
    ("chain", 1, {"iron_ingot": 1, "iron_nugget": 2}),
    ("iron_nugget", 9, {"iron_ingot": 1}),
    ("lightning_rod", 1, {"copper_ingot": 3}),
    ("iron_ingot", 1, {"raw_iron": 1, "coal": F(1, 8)}),
    ("copper_ingot", 1, {"raw_copper": 1, "coal": F(1, 8)}),
    ("stone", 1, {"cobblestone": 1, "coal": F(1, 8)}),
    ("stone_pressure_plate", 1, {"stone": 2}),
    ("oak_planks", 4, {"oak_log": 1}),
    # §13 item 1's unit tests on instance 0 and §2.2's "2/3 of a plank" per smelt
    ("stick", 1, {"oak_planks": F(1, 2)}),
    ("torch", 1, {"coal": F(1, 4), "stick": F(1, 4)}),
    ("iron_ingot", 1, {"raw_iron": 1, "cherry_planks": F(2, 3)}),
]


@pytest.mark.parametrize(("output", "amount", "inputs"), SPEC_TABLE)
def test_spec_recipes_check_out(
    rules: TradecraftRules, output: str, amount: int, inputs: dict[str, F]
) -> None:
    result = rules.match(mc(inputs), {M + output: amount})
    assert result.code == OK, result.reason
    assert result.recipe is not None and result.recipe.output == M + output


def test_spec_recipe_shapes(rules: TradecraftRules) -> None:
    (torch,) = rules.recipes_for(M + "torch")
    assert (torch.kind, torch.count, torch.fuel) == ("crafting_shaped", 4, False)
    assert torch.inputs_for(1) == {
        (M + "charcoal", M + "coal"): F(1, 4),
        (M + "stick",): F(1, 4),
    }
    smelt = {r.id: r for r in rules.recipes_for(M + "iron_ingot")}
    assert smelt["iron_ingot_from_smelting_raw_iron"].fuel
    assert all(not r.fuel for r in rules.recipes if r.kind == "campfire_cooking")
    assert all(r.fuel for r in rules.recipes if r.kind in ("smelting", "blasting", "smoking"))


def concrete_inputs(rules: TradecraftRules, recipe: Recipe, amount: int) -> dict[str, F]:
    """Exact inputs for `amount` of the output: the first item of each slot, coal as fuel."""
    scale = F(amount, recipe.count)
    inputs: dict[str, F] = {}
    for slot in recipe.slots:
        item = min(slot.items)
        inputs[item] = inputs.get(item, F(0)) + slot.count * scale
    if recipe.fuel:
        inputs[M + "coal"] = inputs.get(M + "coal", F(0)) + rules.options.fuel_per_craft * scale
    return inputs


def test_every_source_recipe_is_accepted_at_its_ratio(rules: TradecraftRules) -> None:
    """All 1,144 single-step recipes: accepted at their ratio, refused when it is broken."""
    assert len(rules.recipes) == 1144
    for recipe in rules.recipes:
        for amount in sorted({recipe.count, 1, 3 * recipe.count}):
            inputs = concrete_inputs(rules, recipe, amount)
            assert rules.accepts(recipe, inputs, amount), (recipe.id, amount, inputs)
            assert rules.check(inputs, inputs, {recipe.output: amount}).code == OK, recipe.id
        inputs = concrete_inputs(rules, recipe, recipe.count)
        for item in inputs:  # a wrong ratio, then a missing input
            assert not rules.accepts(recipe, {**inputs, item: 2 * inputs[item]}, recipe.count)
            assert not rules.accepts(
                recipe, {i: a for i, a in inputs.items() if i != item}, recipe.count
            ), (recipe.id, item)
        assert not rules.accepts(recipe, {**inputs, M + "dragon_egg": F(1)}, recipe.count)
        assert not rules.accepts(recipe, {}, recipe.count)
        assert not rules.accepts(recipe, inputs, 2 * recipe.count)


def test_refusals(rules: TradecraftRules) -> None:
    def code(inputs: dict[str, F | int], output: dict[str, F | int]) -> int:
        return rules.match(mc(inputs), mc(output)).code

    assert code({}, {"stick": 1}) == INVALID_RECIPE  # items from nothing
    assert code({"oak_planks": 1}, {"stick": 1}) == INVALID_RECIPE  # wrong ratio
    assert code({"oak_planks": F(1, 4)}, {"stick": F(1, 2)}) == INVALID_RECIPE  # fractional out
    assert code({"oak_planks": 0}, {"stick": 0}) == INVALID_RECIPE
    assert code({"coal": F(1, 4)}, {"torch": 1}) == INVALID_RECIPE  # missing input
    assert code({"coal": F(1, 4), "stick": F(1, 4), "dirt": 1}, {"torch": 1}) == INVALID_RECIPE
    assert code({"raw_iron": 1}, {"iron_ingot": 1}) == INVALID_RECIPE  # no fuel
    assert code({"raw_iron": 1, "coal": F(1, 4)}, {"iron_ingot": 1}) == INVALID_RECIPE
    assert code({"raw_iron": 1, "cobblestone": F(1, 8)}, {"iron_ingot": 1}) == INVALID_RECIPE
    assert code({"stick": 1}, {"bedrock": 1}) == INVALID_RECIPE  # nothing makes it
    assert code({"stick": 1}, {"stick": 1, "torch": 1}) == INVALID_RECIPE  # two outputs
    bad = rules.match({M + "oak_planks": "half"}, {M + "stick": 1})
    assert bad.code == INVALID_RECIPE and "half" in bad.reason


def test_hand_must_hold_the_inputs(rules: TradecraftRules) -> None:
    inputs, output = mc({"coal": F(1, 4), "stick": F(1, 4)}), mc({"torch": 1})
    assert rules.check(mc({"coal": 1, "stick": 1}), inputs, output).code == OK
    short = rules.check(mc({"coal": 1, "stick": F(1, 8)}), inputs, output)
    assert short.code == INSUFFICIENT_ITEMS and "stick" in short.reason
    assert rules.check({}, mc({"coal": 1}), output).code == INVALID_RECIPE  # recipe first


def test_fuel_reads_exact_fractions(rules: TradecraftRules) -> None:
    assert rules.fuel[M + "oak_planks"] == F(16, 3)
    assert rules.fuel[M + "oak_log"] == F(16, 3)
    assert rules.fuel[M + "red_carpet"] == F(1600, 67)
    assert rules.fuel[M + "coal"] == rules.fuel[M + "charcoal"] == 1
    assert rules.fuel[M + "stick"] == 16 and rules.fuel[M + "wooden_hoe"] == 8
    assert rules.fuel[M + "coal_block"] == F(1, 10) and rules.fuel[M + "blaze_rod"] == F(2, 3)
    assert rules.fuel[M + "oak_slab"] == F(32, 3) and rules.fuel[M + "oak_boat"] == F(4, 3)
    assert rules.fuel_units(M + "cherry_planks") == F(3, 16) and rules.fuel_units(M + "dirt") == 0
    assert M + "beehive" in rules.fuel and M + "oak_sign" in rules.fuel  # blocks-only tags
    assert rules.fuel[M + "trapped_chest"] == F(16, 3)  # the duplicate: first by default
    last = load_rules(CraftOptions(duplicate_fuel="last"))
    assert last.fuel[M + "trapped_chest"] == F(4, 3) and last.fuel[M + "chest"] == F(16, 3)
    for options, fuel in ((last, F(1, 6)), (rules, F(2, 3))):  # 1/8 unit of fuel
        smelt = {M + "raw_iron": F(1), M + "trapped_chest": fuel}
        assert options.match(smelt, {M + "iron_ingot": 1}).code == OK
        assert (last if options is rules else rules).match(
            smelt, {M + "iron_ingot": 1}
        ).code == INVALID_RECIPE


def test_fuel_amount_is_an_option(rules: TradecraftRules) -> None:
    quarter = load_rules(CraftOptions(fuel_per_craft=F(1, 4)))
    inputs = mc({"raw_iron": 2, "coal": F(1, 2)})
    assert quarter.match(inputs, mc({"iron_ingot": 2})).code == OK
    assert rules.match(inputs, mc({"iron_ingot": 2})).code == INVALID_RECIPE
    assert rules.match(mc({"raw_iron": 2, "coal": F(1, 4)}), mc({"iron_ingot": 2})).code == OK


@pytest.mark.parametrize(
    ("inputs", "ok"),
    [
        ({"oak_log": F(5, 3)}, True),  # 1 log smelted, 2/3 log burnt (= 1/8 unit)
        ({"oak_log": F(4, 3)}, False),
        ({"oak_log": 2}, False),
        ({"oak_log": 1, "birch_log": F(2, 3)}, True),
        ({"oak_log": 1, "coal": F(1, 8)}, True),
        ({"oak_log": F(4, 3), "coal": F(1, 16)}, True),  # fuel half log, half coal
        ({"oak_log": F(4, 3), "coal": F(1, 8)}, False),
        ({"oak_log": F(1, 2), "birch_log": F(1, 2), "oak_planks": F(2, 3)}, True),
        ({"oak_planks": F(5, 3)}, False),  # planks burn but are no log
    ],
)
def test_charcoal_quirk(rules: TradecraftRules, inputs: dict[str, F], ok: bool) -> None:
    """A log can fill both slots of the charcoal recipe: ingredient and fuel (data README)."""
    result = rules.match(mc(inputs), mc({"charcoal": 1}))
    assert result.ok is ok, result.reason


def test_several_recipes_for_one_output(rules: TradecraftRules) -> None:
    kinds = {r.kind for r in rules.recipes_for(M + "cooked_beef")}
    assert kinds == {"smelting", "smoking", "campfire_cooking"}
    campfire = rules.match(mc({"beef": 1}), mc({"cooked_beef": 1}))
    assert campfire.recipe is not None and campfire.recipe.kind == "campfire_cooking"
    assert rules.match(mc({"beef": 1, "coal": F(1, 8)}), mc({"cooked_beef": 1})).code == OK
    slab = {r.kind for r in rules.recipes_for(M + "stone_slab")}
    assert slab == {"crafting_shaped", "stonecutting"}
    assert rules.match(mc({"stone": F(1, 2)}), mc({"stone_slab": 1})).code == OK  # 3 -> 6
    assert rules.match(mc({"stone": 1}), mc({"stone_slab": 2})).code == OK  # cutter: 1 -> 2


def test_worked_example_instance_0(rules: TradecraftRules) -> None:
    """§2.4's example: one trade (coal for raw_iron), then both targets in one craft phase."""
    first = rules.instances_1v1()[0]
    p1 = {item: F(a) for item, a in first["hands"][0].items()}
    p2 = {item: F(a) for item, a in first["hands"][1].items()}
    p1[M + "coal"] -= 1
    p2[M + "coal"] = F(1)
    p2[M + "raw_iron"] -= 1
    p1[M + "raw_iron"] = F(1)
    p1 = {i: a for i, a in p1.items() if a}
    steps: list[tuple[dict[str, F], dict[str, F | int], dict[str, F | int]]] = [
        (p1, {"raw_iron": 1, "cherry_planks": F(2, 3)}, {"iron_ingot": 1}),
        (p1, {"iron_ingot": 2}, {"shears": 1}),
        (p2, {"oak_planks": F(1, 2)}, {"stick": 1}),
        (p2, {"coal": F(1, 4), "stick": F(1, 4)}, {"torch": 1}),
    ]
    for hand, inputs, output in steps:
        assert rules.check(hand, mc(inputs), mc(output)).code == OK, output
        after = apply_craft(hand, mc(inputs), mc(output))
        hand.clear()
        hand.update(after)
    assert floor_hand(p1) == mc({"shears": 1, "raw_copper": 1, "cobblestone": 1})
    assert floor_hand(p2) == mc({"torch": 1, "raw_iron": 4, "cobblestone": 1, "raw_copper": 2})


def test_apply_and_floor() -> None:
    hand = mc({"oak_planks": 1})
    after = apply_craft(hand, mc({"oak_planks": F(1, 2)}), mc({"stick": 1}))
    assert after == mc({"oak_planks": F(1, 2), "stick": 1})
    assert apply_craft(after, mc({"oak_planks": F(1, 2)}), mc({"stick": 1})) == mc({"stick": 2})
    assert floor_hand(mc({"coal": F(7, 8), "stick": F(5, 2)})) == mc({"stick": 2})


def test_to_fraction() -> None:
    assert to_fraction("3/8") == to_fraction("0.375") == to_fraction(0.375) == F(3, 8)
    assert to_fraction(0.1) == F(1, 10) and to_fraction(2) == 2 and to_fraction(" 1/3 ") == F(1, 3)
    # An exponent is refused before Fraction sees it: "1e99999999" would build a 10**99999999.
    for bad in (True, "x", "1/0", None, "1e99999999", "1" * 40):
        with pytest.raises(ValueError):
            to_fraction(bad)  # type: ignore[arg-type]


def test_instances_ship(rules: TradecraftRules) -> None:
    instances = rules.instances_1v1()
    assert len(instances) == 10
    assert instances[0] == {
        "hands": [
            mc({"cherry_planks": 1, "coal": 1, "iron_ingot": 1, "raw_copper": 1, "cobblestone": 1}),
            mc({"oak_planks": 1, "raw_iron": 5, "cobblestone": 1, "raw_copper": 2}),
        ],
        "targets": [mc({"shears": 1}), mc({"torch": 1})],
    }
    pairs = [tuple(next(iter(t)).removeprefix(M) for t in i["targets"]) for i in instances]
    assert pairs == [
        ("shears", "torch"),
        ("bucket", "stone_shovel"),
        ("bucket", "lever"),
        ("chain", "stone_shovel"),
        ("chain", "lever"),
        ("detector_rail", "target"),
        ("dropper", "observer"),
        ("observer", "powered_rail"),
        ("shield", "arrow"),
        ("comparator", "lantern"),
    ]
    for instance in instances:  # every item named is known to the rules
        for side in instance["hands"] + instance["targets"]:
            for item in side:
                assert rules.recipes_for(item) or any(
                    item in s.items for r in rules.recipes for s in r.slots
                ), item
    instances[0]["hands"].clear()  # a copy: the rules are not changed
    assert rules.instances_1v1()[0]["hands"]


def test_header_and_licence(rules: TradecraftRules) -> None:
    assert rules.source["commit"] == "17227ea" and rules.source["licence"] == "MIT"
    assert "TradeCraft-team/TradeCraft" in rules.source["repository"]
    data = resources.files("stratagem.games.tradecraft").joinpath("data")
    licence = data.joinpath("LICENSE-TradeCraft").read_text("utf-8")
    assert licence.startswith("MIT License") and "WangJunqi" in licence
    header = json.loads(gzip.decompress(data.joinpath("tradecraft.json.gz").read_bytes()))
    assert header["licence_text"] == licence
    assert header["generated_by"] == "scripts/tradecraft_data.py"
    assert len(header["skipped_recipes"]) == 30
    assert "trapped_chest" in rules.decisions


def test_tag_lookup_prefers_item_tags(rules: TradecraftRules) -> None:
    assert not any("wall" in item for item in rules.tags["minecraft:banners"])
    assert rules.tags["minecraft:beehives"] == {M + "bee_nest", M + "beehive"}
    assert M + "oak_planks" in rules.members("#minecraft:planks")
    assert rules.members(M + "stick") == {M + "stick"}
    assert M + "red_wool" in rules.tags["minecraft:non_black_wool"]


def _converter() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "tradecraft_data", ROOT / "scripts/tradecraft_data.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_decimal_counts_to_fractions() -> None:
    from decimal import Decimal

    convert = _converter().decimal_to_fraction
    assert convert(Decimal("5.333333333")) == convert(Decimal("5.333333")) == F(16, 3)
    assert convert(Decimal("23.88059701")) == F(1600, 67)
    assert convert(Decimal("10.66666667")) == F(32, 3) and convert(Decimal("0.4")) == F(2, 5)
    assert convert(8) == 8


@needs_source
def test_converter_is_reproducible_and_matches_the_shipped_file() -> None:
    convert = _converter().convert
    first, second = convert(SOURCE), convert(SOURCE)
    assert first == second
    shipped = (
        resources.files("stratagem.games.tradecraft")
        .joinpath("data/tradecraft.json.gz")
        .read_bytes()
    )
    assert first == shipped, "rerun scripts/tradecraft_data.py"


@needs_source
def test_instances_match_the_source_verbatim(rules: TradecraftRules) -> None:
    source = json.loads((SOURCE / "instances/1p_v_1p/game_task.json").read_text("utf-8"))
    assert rules.instances_1v1() == source
    assert len(list((SOURCE / "recipes").glob("*.json"))) == len(rules.recipes) + 30


def _lp_feasible(recipe: Recipe, inputs: Mapping[str, F], amount: int) -> bool:
    """An independent oracle for crafting recipes: the transportation LP, solved by scipy."""
    import numpy as np
    from scipy.optimize import linprog

    items, slots = sorted(inputs), recipe.slots
    edges = [(i, j) for i, item in enumerate(items) for j, s in enumerate(slots) if item in s.items]
    if not edges or any(not any(e[0] == i for e in edges) for i in range(len(items))):
        return False
    rows = np.zeros((len(items) + len(slots), len(edges)))
    for k, (i, j) in enumerate(edges):
        rows[i, k] = rows[len(items) + j, k] = 1
    scale = F(amount, recipe.count)
    rhs = [float(inputs[i]) for i in items] + [float(s.count * scale) for s in slots]
    result = linprog(np.zeros(len(edges)), A_eq=rows, b_eq=rhs, bounds=(0, None), method="highs")
    return bool(result.status == 0)


def test_check_agrees_with_an_lp_on_mixed_tag_inputs(rules: TradecraftRules) -> None:
    """Split each slot over several of its items, then perturb: the check agrees with the LP."""
    import random

    rng = random.Random(2)
    mixed = [r for r in rules.recipes if not r.fuel and any(len(s.items) > 1 for s in r.slots)]
    assert len(mixed) > 100
    for trial in range(600):
        recipe = rng.choice(mixed)
        inputs: dict[str, F] = {}
        for slot in recipe.slots:
            members = rng.sample(sorted(slot.items), min(3, len(slot.items)))
            cuts = sorted(F(rng.randint(0, 12), 12) for _ in members[1:])
            shares = [b - a for a, b in zip([F(0), *cuts], [*cuts, F(1)], strict=True)]
            for item, share in zip(members, shares, strict=True):
                if share:
                    inputs[item] = inputs.get(item, F(0)) + share * slot.count
        assert rules.accepts(recipe, inputs, recipe.count), (recipe.id, inputs)
        if trial % 2:  # move some amount between two items: legal only if the LP says so
            a, b = rng.sample(sorted({*inputs, *min(recipe.slots, key=len_items).items}), 2)
            moved = min(inputs.get(a, F(0)), F(1, 3))
            inputs = {**inputs, a: inputs.get(a, F(0)) - moved, b: inputs.get(b, F(0)) + moved}
            inputs = {i: x for i, x in inputs.items() if x}
        expected = _lp_feasible(recipe, inputs, recipe.count)
        assert rules.accepts(recipe, inputs, recipe.count) is expected, (recipe.id, inputs)


def len_items(slot: Slot) -> int:
    return len(slot.items)


def test_can_make_and_craftable(rules: TradecraftRules) -> None:
    hands = rules.instances_1v1()[0]["hands"]
    p1 = {i: F(a) for i, a in hands[0].items()}
    p2 = {i: F(a) for i, a in hands[1].items()}
    made = {r.output.removeprefix(M) for r in rules.craftable(p2)}
    assert {"stick", "iron_ingot", "copper_ingot", "stone", "oak_button"} <= made
    assert "torch" not in made and "shears" not in made  # no coal; no ingots
    made = {r.output.removeprefix(M) for r in rules.craftable(p1)}
    assert {"iron_nugget", "stick", "stone", "copper_ingot"} <= made and "shears" not in made
    (charcoal,) = rules.recipes_for(M + "charcoal")
    assert rules.can_make(charcoal, mc({"oak_log": F(5, 3)}))
    assert not rules.can_make(charcoal, mc({"oak_log": F(3, 2)}))
    assert rules.can_make(charcoal, mc({"oak_log": 1, "stick": 2}))  # 2 sticks = 1/8 unit
    assert not rules.can_make(charcoal, mc({"oak_log": 1, "stick": F(3, 2)}))
    assert rules.can_make(charcoal, mc({"oak_log": 10}), amount=6)  # 6 + 6 * 2/3 logs
    assert not rules.can_make(charcoal, mc({"oak_log": 10}), amount=7)
    for recipe in rules.recipes:  # the hand that holds the exact inputs can make the recipe
        inputs = concrete_inputs(rules, recipe, 1)
        assert rules.can_make(recipe, inputs), recipe.id
        assert not rules.can_make(recipe, {i: a / 2 for i, a in inputs.items()}), recipe.id
    assert {r.id for r in rules.recipes_using(M + "stick")} >= {"torch", "stone_shovel", "lever"}
