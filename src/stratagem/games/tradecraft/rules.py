"""TradeCraft's Minecraft 1.20 crafting rules: the packaged recipes, tags and fuel, and the exact
single-step recipe check the game uses (seed-002 §2.2, §2.3, §2.6).

The data come from `games/tradecraft/data/tradecraft.json.gz`, made by
`scripts/tradecraft_data.py` from TradeCraft's rule set (MIT;
`games/tradecraft/data/LICENSE-TradeCraft`); the data header records the source and
every quirk's decision. All amounts are `Fraction`s: crafting allows fractional inputs with integer
outputs (§2.3; 1 stick from 1/2 plank), and floats would make "exactly the recipe ratio"
meaningless.

The check is strict (§2.3): "make k of X from these inputs" is legal iff some recipe for X accepts
*exactly* those inputs at its ratio scaled by k / (recipe output count), each input item assigned to
slots whose alternatives or tags contain it, nothing left over and no slot short. Why this is exact:

- A recipe without fuel is a transportation problem: items supply their amounts, slots demand
  theirs, and an item may feed any slot that accepts it with no loss. By the supply-demand theorem
  (Gale 1957; max-flow min-cut with unbounded middle edges), a perfect assignment exists iff total
  supply equals total demand and every set S of slots demands no more than the items that can feed
  S hold. Recipes have at most 5 slots after merging, so all subsets (31) are checked.
- A recipe with fuel (cooking below 600 ticks) has exactly one ingredient slot (asserted at load),
  plus fuel worth `fuel_per_craft` units per craft, where n items of a fuel with count n make one
  unit (§2.2). Items accepted only by one side go there; an item accepted by both (a log smelted to
  charcoal and burnt as its fuel: the charcoal quirk) is split. The amount diverted to fuel is fixed
  by the ingredient slot's demand, and the fuel units it can yield form an interval whose ends come
  from filling the lowest- or highest-value fuels first, so the check is a closed form.

Several recipes may make one output (smoking and campfire cooking; crafting and stonecutting): a
request is legal if any accepts it (the first by recipe id is reported).
"""

from __future__ import annotations

import copy
import gzip
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from functools import cache
from importlib import resources
from itertools import combinations
from math import floor
from typing import Any, Literal

DATA_FILE = "data/tradecraft.json.gz"
OK, INVALID_RECIPE, INSUFFICIENT_ITEMS = 0, 1, 2  # craft_recipe_check's return codes (§2.3)

Amount = Fraction | int | str
DuplicateFuel = Literal["first", "last"]


@dataclass(frozen=True)
class CraftOptions:
    """The [A] choices of the crafting rules (seed-002 §0: each a config option).

    fuel_per_craft: fuel units one cooking craft of the recipe's output needs (§2.2: 1/8, i.e.
        a coal smelts 8 items).
    duplicate_fuel: which count to use when `fuel.json` lists an item twice (only `trapped_chest`:
        16/3 then 4/3). "first" (default) is the vanilla burn time (300 ticks, like a chest).
    """

    fuel_per_craft: Fraction = Fraction(1, 8)
    duplicate_fuel: DuplicateFuel = "first"


@dataclass(frozen=True)
class Slot:
    """One ingredient of a recipe: `count` units of any item in `items`.

    `accepts` keeps the recipe's own names (items, or tags as '#minecraft:planks') for display.
    """

    count: int
    accepts: tuple[str, ...]
    items: frozenset[str] = field(repr=False)


@dataclass(frozen=True)
class Recipe:
    """A single-step recipe: `count` of `output` from its slots (plus fuel when `fuel`)."""

    id: str
    kind: str
    output: str
    count: int
    slots: tuple[Slot, ...]
    fuel: bool

    def inputs_for(self, amount: int) -> dict[tuple[str, ...], Fraction]:
        """Each slot's demand (by its accepted names) for `amount` of the output."""
        scale = Fraction(amount, self.count)
        return {slot.accepts: slot.count * scale for slot in self.slots}


@dataclass(frozen=True)
class CraftCheck:
    """The result of a check: code 0 ok, 1 invalid recipe, 2 insufficient items (§2.3)."""

    code: int
    recipe: Recipe | None
    reason: str

    @property
    def ok(self) -> bool:
        return self.code == OK


MAX_DIGITS = 30
MAX_AMOUNT = 10**MAX_DIGITS
AMOUNT_TEXT = re.compile(r"[+-]?\d{1,30}(\.\d{1,30}|/\d{1,30})?")
"""An amount written as text: an integer, a decimal or a fraction, each part of at most
`MAX_DIGITS` decimal digits (as Fraction reads them, "١" too; "²" is none, though
"²".isdigit() holds)."""


class AmountBound(ValueError):
    """An amount refused by the size bound, not as unreadable."""


def to_fraction(value: object) -> Fraction:
    """TradeCraft's one amount parser: the engine's crafts and proposals, the agents' craft tools
    and the game's options all read amounts here, so they accept and refuse the same values.

    An exact Fraction from an int, a Fraction, a finite float or text ("3", "0.125", "3/8"),
    with its size and its denominator bounded by `MAX_AMOUNT` (untrusted text must not make Fraction
    build 10**99999999: no exponents in text). A float is read through its shortest decimal form
    (0.1 -> 1/10), which is what a player who wrote 0.1 meant; booleans are refused (they are
    ints to Python, never amounts). Whether an amount may be negative, zero or fractional is the
    caller's rule, not the parser's.
    """
    amount: Fraction
    if isinstance(value, bool):
        raise ValueError(f"not an amount: {shown_value(value)}")
    if isinstance(value, Fraction | int):
        amount = Fraction(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not an amount: {shown_value(value)}")
        amount = Fraction(Decimal(repr(value)))
    elif isinstance(value, str) and AMOUNT_TEXT.fullmatch(text := value.strip()):
        try:
            amount = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"not an amount: {shown_value(value)}") from None
    else:
        raise ValueError(f"not an amount: {shown_value(value)}")
    if abs(amount) > MAX_AMOUNT or amount.denominator > MAX_AMOUNT:
        raise AmountBound(f"amount out of range (beyond 10**{MAX_DIGITS})")
    return amount


def shown_value(value: object) -> str:
    """A bounded repr of untrusted input (a long int's repr may even raise)."""
    try:
        return repr(value)[:40]
    except ValueError:
        return type(value).__name__


class TradecraftRules:
    """The packaged rule set under one set of options; build it with `load_rules`."""

    def __init__(self, data: Mapping[str, Any], options: CraftOptions) -> None:
        self.options = options
        self.source: Mapping[str, Any] = data["source"]
        self.decisions: str = data["decisions"]
        self.tags: dict[str, frozenset[str]] = {
            name: frozenset(items) for name, items in data["tags"].items()
        }
        pick = 0 if options.duplicate_fuel == "first" else -1
        # n items of a fuel make one unit of fuel (fuel.json's "count"; §2.2)
        self.fuel: dict[str, Fraction] = {
            item: Fraction(counts[pick]) for item, counts in data["fuel"].items()
        }
        self.recipes: tuple[Recipe, ...] = tuple(self._recipe(r) for r in data["recipes"])
        by_output: dict[str, list[Recipe]] = {}
        for recipe in sorted(self.recipes, key=lambda r: r.id):
            by_output.setdefault(recipe.output, []).append(recipe)
        self.by_output: dict[str, tuple[Recipe, ...]] = {k: tuple(v) for k, v in by_output.items()}
        uses: dict[str, list[Recipe]] = {}
        for recipe in sorted(self.recipes, key=lambda r: r.id):
            for item in sorted(frozenset().union(*(s.items for s in recipe.slots))):
                uses.setdefault(item, []).append(recipe)
        self.by_input: dict[str, tuple[Recipe, ...]] = {k: tuple(v) for k, v in uses.items()}
        self._instances: list[Any] = data["instances_1v1"]

    def _recipe(self, raw: Mapping[str, Any]) -> Recipe:
        slots = tuple(
            Slot(count, tuple(names), frozenset().union(*(self.members(n) for n in names)))
            for count, names in raw["inputs"]
        )
        if raw["fuel"] and len(slots) != 1:  # the closed-form fuel check relies on it
            raise ValueError(f"cooking recipe {raw['id']} has {len(slots)} ingredient slots")
        return Recipe(raw["id"], raw["kind"], raw["output"], raw["count"], slots, raw["fuel"])

    def members(self, name: str) -> frozenset[str]:
        """The items a recipe name stands for: a tag ('#minecraft:planks') or one item."""
        return self.tags[name[1:]] if name.startswith("#") else frozenset((name,))

    def instances_1v1(self) -> list[dict[str, Any]]:
        """The 10 published two-player instances (§2.4), verbatim; a fresh copy each call."""
        return copy.deepcopy(self._instances)

    def recipes_for(self, output: str) -> tuple[Recipe, ...]:
        return self.by_output.get(output, ())

    def recipes_using(self, item: str) -> tuple[Recipe, ...]:
        """Recipes with a slot that accepts `item` (fuel use aside), for item_info (§2.6)."""
        return self.by_input.get(item, ())

    def feeders(self, goal: Iterable[str], depth: int, fuel: bool = False) -> frozenset[str]:
        """Items that can feed the `goal` items within `depth` single-step crafts (a goal item
        only when a chain leads back to it). `fuel`: a cooking step's fuel items count too, as
        leaves (nobody crafts a crossbow to burn it)."""
        goal = set(goal)
        found: set[str] = set()
        frontier = set(goal)
        for _ in range(depth):
            nxt: set[str] = set()
            for out in frontier:
                for recipe in self.recipes_for(out):
                    for slot in recipe.slots:
                        nxt |= slot.items
                    if fuel and recipe.fuel:
                        found |= self.fuel.keys()
            frontier = nxt - found - goal
            found |= nxt
        return frozenset(found)

    def fuel_units(self, item: str) -> Fraction:
        """Fuel units one item gives (1/8 smelts one item; 0 if it does not burn)."""
        count = self.fuel.get(item)
        return 1 / count if count else Fraction(0)

    # --- the strict check (§2.3) -------------------------------------------------------------

    def accepts(self, recipe: Recipe, inputs: Mapping[str, Fraction], amount: int) -> bool:
        """Whether `recipe` makes exactly `amount` of its output from exactly `inputs`."""
        if amount <= 0 or not inputs or any(a <= 0 for a in inputs.values()):
            return False
        scale = Fraction(amount, recipe.count)
        if recipe.fuel:
            return self._accepts_cooking(recipe.slots[0], scale, inputs)
        return _transport_feasible([(s.count * scale, s.items) for s in recipe.slots], inputs)

    def _accepts_cooking(self, slot: Slot, scale: Fraction, inputs: Mapping[str, Fraction]) -> bool:
        """The closed form for one ingredient slot plus fuel (module docstring): what the items
        accepted by both sides must give to fuel is fixed, and the fuel units that amount can
        yield run from burning the lowest-value items first to burning the highest first."""
        demand, fuel_demand = slot.count * scale, self.options.fuel_per_craft * scale
        slot_only, fuel_only, both = Fraction(0), Fraction(0), []
        for item, amount in inputs.items():
            units, in_slot = self.fuel_units(item), item in slot.items
            if in_slot and units:
                both.append((units, amount))
            elif in_slot:
                slot_only += amount
            elif units:
                fuel_only += amount * units
            else:
                return False  # an item this recipe cannot use
        diverted = slot_only + sum(a for _, a in both) - demand  # of `both`, burnt as fuel
        if diverted < 0 or diverted > sum((a for _, a in both), Fraction(0)):
            return False
        low = _fill(sorted(both), diverted)
        high = _fill(sorted(both, reverse=True), diverted)
        return low <= fuel_demand - fuel_only <= high

    def can_make(self, recipe: Recipe, hand: Mapping[str, Fraction], amount: int = 1) -> bool:
        """Whether some inputs taken from `hand` make `amount` of the output by `recipe`.

        The same exact arguments as `accepts`, with "at most what is held" for "exactly": Gale's
        condition without the equal totals for crafting; for cooking, the shared items that the
        ingredient slot must take are the ones worth least as fuel (an exchange argument).
        """
        scale = Fraction(amount, recipe.count)
        held = {item: a for item, a in hand.items() if a > 0}
        if not recipe.fuel:
            demands = [(s.count * scale, s.items) for s in recipe.slots]
            return _transport_feasible(demands, held, exact=False)
        slot = recipe.slots[0]
        slot_only = sum(
            (a for i, a in held.items() if i in slot.items and not self.fuel_units(i)), Fraction(0)
        )
        fuel_only = sum(
            (a * self.fuel_units(i) for i, a in held.items() if i not in slot.items), Fraction(0)
        )
        both = sorted(
            (self.fuel_units(i), a)
            for i, a in held.items()
            if i in slot.items and self.fuel_units(i)
        )
        needed = max(slot.count * scale - slot_only, Fraction(0))  # taken from `both`
        if needed > sum((a for _, a in both), Fraction(0)):
            return False
        spare = _fill(both, sum((a for _, a in both), Fraction(0))) - _fill(both, needed)
        return self.options.fuel_per_craft * scale <= fuel_only + spare

    def craftable(self, hand: Mapping[str, Fraction]) -> tuple[Recipe, ...]:
        """Recipes that can make one output from `hand` (possible_recipes_from_hand, §2.6)."""
        held = {item for item, a in hand.items() if a > 0}
        return tuple(
            recipe
            for recipe in sorted(self.recipes, key=lambda r: r.id)
            if all(slot.items & held for slot in recipe.slots) and self.can_make(recipe, hand)
        )

    def match(self, inputs: Mapping[str, Amount], output: Mapping[str, Amount]) -> CraftCheck:
        """The recipe check alone (no hand): code 0 with the accepting recipe, or 1 with why."""
        try:
            wanted = {item: to_fraction(a) for item, a in output.items()}
            given = {item: to_fraction(a) for item, a in inputs.items()}
        except ValueError as error:
            return CraftCheck(INVALID_RECIPE, None, str(error))
        if len(wanted) != 1:
            return CraftCheck(INVALID_RECIPE, None, "name exactly one output item")
        ((item, amount),) = wanted.items()
        if amount.denominator != 1 or amount <= 0:
            return CraftCheck(INVALID_RECIPE, None, "the output amount must be a positive integer")
        if not given or any(a <= 0 for a in given.values()):
            return CraftCheck(INVALID_RECIPE, None, "every input amount must be positive")
        candidates = self.recipes_for(item)
        if not candidates:
            return CraftCheck(INVALID_RECIPE, None, f"no recipe makes {item}")
        for recipe in candidates:
            if self.accepts(recipe, given, int(amount)):
                return CraftCheck(OK, recipe, "ok")
        return CraftCheck(INVALID_RECIPE, None, f"no recipe for {item} takes exactly these inputs")

    def check(
        self,
        hand: Mapping[str, Amount],
        inputs: Mapping[str, Amount],
        output: Mapping[str, Amount],
    ) -> CraftCheck:
        """`craft_recipe_check` (§2.3): a legal recipe (else 1) that the hand can pay (else 2)."""
        result = self.match(inputs, output)
        if not result.ok:
            return result
        held = {item: to_fraction(a) for item, a in hand.items()}
        short = sorted(i for i, a in inputs.items() if held.get(i, Fraction(0)) < to_fraction(a))
        if short:
            return CraftCheck(INSUFFICIENT_ITEMS, result.recipe, "not enough " + ", ".join(short))
        return result


def apply_craft(
    hand: Mapping[str, Fraction], inputs: Mapping[str, Amount], output: Mapping[str, Amount]
) -> dict[str, Fraction]:
    """The hand after a checked craft (`craft_recipe_apply`, §2.3); items at 0 are removed."""
    after = dict(hand)
    for item, amount in inputs.items():
        after[item] = after.get(item, Fraction(0)) - to_fraction(amount)
    for item, amount in output.items():
        after[item] = after.get(item, Fraction(0)) + to_fraction(amount)
    return {item: a for item, a in after.items() if a != 0}


def floor_hand(hand: Mapping[str, Fraction]) -> dict[str, int]:
    """The hand at `craft_done` (§2.3): amounts floored, items at 0 removed (leftovers are lost)."""
    return {item: floor(a) for item, a in hand.items() if floor(a) > 0}


def _fill(fuels: Iterable[tuple[Fraction, Fraction]], total: Fraction) -> Fraction:
    """Fuel units from burning `total` items, taking (units per item, available) in order."""
    units, left = Fraction(0), total
    for per_item, available in fuels:
        take = min(available, left)
        units, left = units + take * per_item, left - take
    return units


def _transport_feasible(
    slots: list[tuple[Fraction, frozenset[str]]], supply: Mapping[str, Fraction], exact: bool = True
) -> bool:
    """Whether the items' supplies fill the slots' demands (supply-demand theorem): with every
    item used up when `exact`, else with each item used at most up to its supply."""
    if exact and sum(supply.values()) != sum(d for d, _ in slots):
        return False
    if exact and any(not any(item in items for _, items in slots) for item in supply):
        return False
    for size in range(1, len(slots) + 1):
        for chosen in combinations(slots, size):
            feeders = frozenset().union(*(items for _, items in chosen))
            if sum(d for d, _ in chosen) > sum(a for i, a in supply.items() if i in feeders):
                return False
    return True


@cache
def _data() -> dict[str, Any]:
    blob = resources.files("stratagem.games.tradecraft").joinpath(DATA_FILE).read_bytes()
    data: dict[str, Any] = json.loads(gzip.decompress(blob))
    return data


@cache
def load_rules(options: CraftOptions = CraftOptions()) -> TradecraftRules:
    """The packaged rules under `options` (cached: one parse per process, one build per options)."""
    return TradecraftRules(_data(), options)
