"""The tools a TradeCraft player may call (seed-002 §2.6, §13.2): `item_info` and
`possible_recipes_from_hand` in any phase; in the craft phase the two-step flow
`craft_recipe_check` / `craft_recipe_apply`, then `craft_done` (§2.3).

Answers are text built from the rules module's exact checks, so what a tool accepts the game
accepts (`CraftBench.action` is the craft move): a check reads its items with the engine's own
`craft_items` (one amount parser, one size bound, answered as a bound, never as an invalid
recipe). Arguments are untrusted model output: any shape gets an error answer, never an
exception, and only a passed check then apply changes a hand.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from stratagem.games.spaces import IllegalAction
from stratagem.games.tradecraft import actions as tradecraft_actions
from stratagem.games.tradecraft.actions import (
    MAX_NAME,
    PREFIX,
    Craft,
    CraftSpace,
    OverBound,
    amount_text,
    craft_items,
    describe,
    item_name,
)
from stratagem.games.tradecraft.rules import (
    OK,
    Recipe,
    Slot,
    TradecraftRules,
    apply_craft,
    floor_hand,
)
from stratagem.llm.types import Tool

# Answers stay bounded (§2.6): recipes per item_info section, members per tag, recipes listed.
LIST_CAP, TAG_CAP, RECIPES_CAP = 12, 6, 30

ITEM_INFO = Tool(
    "item_info",
    "Information about one item: the recipes that make it (exact input amounts per output "
    "count), the recipes that use it, the tags it belongs to, and its value as fuel.",
    {
        "type": "object",
        "properties": {
            "item": {
                "type": "string",
                "maxLength": 64,
                "description": "an item, e.g. minecraft:torch",
            }
        },
        "required": ["item"],
    },
)
POSSIBLE_RECIPES = Tool(
    "possible_recipes_from_hand",
    "The recipes you can craft from your current hand, each with inputs it could use.",
)
_AMOUNTS = {"type": "object", "additionalProperties": {"type": ["number", "string"]}}
CRAFT_CHECK = Tool(
    "craft_recipe_check",
    "Check one craft against the rules and your hand. Returns code 0 (ok), 1 (invalid recipe) "
    "or 2 (insufficient items). Amounts may be numbers or 'p/q' strings; the output is whole.",
    {
        "type": "object",
        "properties": {
            "input": _AMOUNTS | {"description": 'item: amount, e.g. {"oak_planks": "1/2"}'},
            "output": _AMOUNTS | {"description": 'item: count, e.g. {"stick": 1}'},
        },
        "required": ["input", "output"],
    },
)
AMOUNT_PATTERN = "^[0-9]{1,3}(/[0-9]{1,3})?$"


def held_craft_check(rules: TradecraftRules, hand: Mapping[str, Fraction | int]) -> Tool:
    """`craft_recipe_check` with its items held to what a craft from `hand` can name: inputs
    among the hand's items (amounts as "n" or "p/q"), outputs among the recipes craftable from
    it. For constrained decoding (a grammar cannot leave item names open without letting a
    small model write names that never end); the check itself is the same."""
    held = sorted(_short(i) for i, n in hand.items() if n > 0)
    outputs = sorted(
        {_short(r.output) for r in rules.craftable({i: Fraction(n) for i, n in hand.items()})}
    )
    amount = {"type": "string", "pattern": AMOUNT_PATTERN}
    count = {"enum": list(range(1, 17))}
    parameters = {
        "type": "object",
        "properties": {
            "input": {"type": "object", "properties": dict.fromkeys(held, amount),
                      "additionalProperties": False},
            "output": {"type": "object", "properties": dict.fromkeys(outputs, count),
                       "additionalProperties": False},
        },
        "required": ["input", "output"],
    }  # fmt: skip
    return Tool(CRAFT_CHECK.name, CRAFT_CHECK.description, parameters)


CRAFT_APPLY = Tool("craft_recipe_apply", "Apply the last craft that passed craft_recipe_check.")
CRAFT_DONE = Tool("craft_done", "Finish crafting this turn; fractions are then rounded down.")
INFO_TOOLS: tuple[Tool, ...] = (ITEM_INFO, POSSIBLE_RECIPES)
CRAFT_TOOLS: tuple[Tool, ...] = (CRAFT_CHECK, CRAFT_APPLY, CRAFT_DONE)


def _short(item: str) -> str:
    return item.removeprefix(PREFIX)


def _capped(names: list[str], cap: int) -> str:
    more = f", ... and {len(names) - cap} more" if len(names) > cap else ""
    return ", ".join(names[:cap]) + more


def _slot_text(rules: TradecraftRules, slot: Slot) -> str:
    """'2 #minecraft:planks (any of: acacia_planks, ...)' or '1 charcoal or coal'."""
    names = []
    for name in slot.accepts:
        if name.startswith("#"):
            members = sorted(_short(i) for i in rules.members(name))
            names.append(f"{name} (any of: {_capped(members, TAG_CAP)})")
        else:
            names.append(_short(name))
    return f"{slot.count} {' or '.join(names)}"


def recipe_text(rules: TradecraftRules, recipe: Recipe) -> str:
    """One recipe at its own output count; cooking adds its fuel (§2.2: 1/8 coal a smelt)."""
    parts = [_slot_text(rules, s) for s in recipe.slots]
    if recipe.fuel:
        fuel = rules.options.fuel_per_craft  # per `recipe.count` (1) of a cooking output
        plank = rules.fuel_units(PREFIX + "oak_planks")  # §2.2: 1/8 coal = 2/3 of a plank
        parts.append(f"fuel: {amount_text(fuel)} coal or {amount_text(fuel / plank)} planks or ...")
    made = f"{recipe.id} ({recipe.kind}): {recipe.count} {_short(recipe.output)}"
    return f"{made} from {' + '.join(parts)}"


def _listing(title: str, lines: list[str], cap: int = LIST_CAP) -> list[str]:
    if not lines:
        return [f"{title}: none"]
    more = [f"- ... and {len(lines) - cap} more"] if len(lines) > cap else []
    return [f"{title}:", *(f"- {line}" for line in lines[:cap]), *more]


def item_info(rules: TradecraftRules, item: str) -> str:
    """§2.6 item_info: what makes the item, what it makes, its tags and fuel value."""
    name = item_name(item)  # IllegalAction on a non-name; run_tool answers it
    if len(name) > MAX_NAME:
        return f"unknown item {name[:MAX_NAME]}...: no recipe makes or uses it"
    if name.startswith(PREFIX + "#"):  # "#planks": a tag, prefixed inside the '#'
        name = "#" + PREFIX + name[len(PREFIX) + 1 :]
    if name.startswith("#"):
        members = sorted(_short(i) for i in rules.tags.get(name[1:], ()))
        return f"{name}: any of {_capped(members, 36)}" if members else f"unknown tag {name}"
    tags = sorted("#" + t for t, items in rules.tags.items() if name in items)
    units = rules.fuel_units(name)
    makes, uses = rules.recipes_for(name), rules.recipes_using(name)
    if not (makes or uses or tags or units):
        return f"unknown item {name}: no recipe makes or uses it"
    lines = [f"{name}:"]
    lines += _listing("can be crafted from", [recipe_text(rules, r) for r in makes])
    lines += _listing("used in", [recipe_text(rules, r) for r in uses])
    lines.append(f"tags: {_capped(tags, LIST_CAP) or 'none'}")
    if units:  # §2.2: fuel.json's ratio, as the amount one smelt burns
        per_smelt = amount_text(rules.options.fuel_per_craft / units)
        lines.append(f"fuel: one smelt needs {per_smelt} {_short(name)}")
    return "\n".join(lines)


def _assignment(
    rules: TradecraftRules, recipe: Recipe, hand: Mapping[str, Fraction], amount: int
) -> dict[str, Fraction] | None:
    """A greedy input assignment from `hand` for `amount` of the output, kept only if the rules'
    exact check accepts it (greedy can miss one; then the caller shows the recipe instead)."""
    left = {i: a for i, a in hand.items() if a > 0}
    used: dict[str, Fraction] = {}

    def take(item: str, want: Fraction) -> Fraction:
        if (got := min(left[item], want)) > 0:
            left[item] -= got
            used[item] = used.get(item, Fraction(0)) + got
        return got

    scale = Fraction(amount, recipe.count)
    for slot in sorted(recipe.slots, key=lambda s: len(s.items & left.keys())):
        need = slot.count * scale  # non-fuel items first: fuel may be needed below
        for item in sorted(slot.items & left.keys(), key=lambda i: (rules.fuel_units(i), i)):
            need -= take(item, need)
    if recipe.fuel:
        units = rules.options.fuel_per_craft * scale
        for item in sorted(left, key=lambda i: (-rules.fuel_units(i), i)):
            if rules.fuel_units(item) and units > 0:
                units -= take(item, units / rules.fuel_units(item)) * rules.fuel_units(item)
    return dict(sorted(used.items())) if rules.accepts(recipe, used, amount) else None


def possible_recipes(rules: TradecraftRules, hand: Mapping[str, Fraction | int]) -> str:
    """§2.6 possible_recipes_from_hand: each craftable recipe with inputs that work now, for its
    full output count when the hand allows, else for 1 (1 stick from 1/2 plank, §2.3)."""
    held = {i: Fraction(a) for i, a in hand.items() if a > 0}
    found = rules.craftable(held)
    if not found:
        return "nothing can be crafted from your hand"
    lines = []
    for recipe in found[:RECIPES_CAP]:
        amount = recipe.count if rules.can_make(recipe, held, recipe.count) else 1
        used = _assignment(rules, recipe, held, amount)
        made = f"{recipe.id}: {amount} {_short(recipe.output)}"
        lines.append(f"{made} from {describe(used)}" if used else recipe_text(rules, recipe))
    lines += [""] * (len(found) - len(lines))  # counted by "... and N more", never computed
    return "\n".join(_listing("you can craft", lines, RECIPES_CAP))


@dataclass
class ToolAnswer:
    content: str  # the text sent back to the model / shown to the person
    ok: bool
    error: str | None = None


def _failed(error: str, content: str) -> ToolAnswer:  # error: a short code, e.g. phase_error
    return ToolAnswer(content, False, error)


class CraftBench:
    """One player's craft phase: check / apply / done over its hand (§2.3 two-step flow)."""

    def __init__(
        self,
        rules: TradecraftRules,
        hand: Mapping[str, Fraction | int],
        max_crafts: int = tradecraft_actions.MAX_CRAFTS,
    ) -> None:
        self.rules, self.max_crafts = rules, max_crafts
        self.hand: dict[str, Fraction] = {i: Fraction(a) for i, a in sorted(hand.items()) if a > 0}
        self.crafts: list[dict[str, Any]] = []  # CraftSpace's canonical form, in order
        self.checks, self.done = 0, False
        self.errors = 0  # failed checks, and applies without a passed check
        self._passed: Craft | None = None

    def _closed(self) -> ToolAnswer | None:
        self.errors += self.done  # a step after craft_done is an error too
        return _failed("finished", "crafting is already finished this turn") if self.done else None

    def check(self, inputs: Any, output: Any) -> ToolAnswer:
        """§2.3 craft_recipe_check: code 0, 1 or 2 with the reason; remembers a passed recipe."""
        self._passed = None
        if closed := self._closed():
            return closed
        self.checks += 1
        try:
            given, wanted = dict(craft_items(inputs, "input")), dict(craft_items(output, "output"))
        except OverBound as error:  # the engine's bound: not a judgement of the recipe
            self.errors += 1
            return _failed("over_bound", f"refused by a size bound, not a recipe check: {error}")
        except IllegalAction as error:
            self.errors += 1
            return _failed("bad_arguments", f"code 1 (invalid recipe): {error}")
        result = self.rules.check(self.hand, given, wanted)
        if result.code != OK:
            self.errors += 1
            label = "invalid_recipe" if result.code == 1 else "insufficient_items"
            extra = f"; you hold {describe(self.hand)}" if result.code == 2 else ""
            text = f"code {result.code} ({label.replace('_', ' ')}): {result.reason}{extra}"
            return _failed(label, text)
        self._passed = Craft(
            tuple(sorted(given.items())), tuple((i, int(n)) for i, n in sorted(wanted.items()))
        )
        assert result.recipe is not None
        made = f"recipe {result.recipe.id} makes {describe(wanted)} from {describe(given)}"
        return ToolAnswer(f"code 0 (ok): {made}; call craft_recipe_apply to apply it", True)

    def apply(self) -> ToolAnswer:
        """§2.3 craft_recipe_apply: the last checked recipe, if it passed and still fits."""
        passed, self._passed = self._passed, None
        if closed := self._closed():
            return closed
        if passed is None:
            self.errors += 1
            return _failed("no_check", "no recipe passed craft_recipe_check since the last apply")
        if len(self.crafts) >= self.max_crafts:
            self.errors += 1
            return _failed("too_many", f"at most {self.max_crafts} crafts in one craft phase")
        if len(_move([*self.crafts, passed.as_json()])) > CraftSpace.max_chars:
            self.errors += 1  # the engine's bound on a craft move's text
            return _failed("too_many", "the crafts this turn would be over the move's size bound")
        inputs, output = dict(passed.inputs), dict(passed.output)
        # it still fits: the hand changes only here, and every apply clears the passed check
        self.hand = apply_craft(self.hand, inputs, output)
        self.crafts.append(passed.as_json())
        text = f"applied: {describe(output)} from {describe(inputs)}; your hand is now "
        return ToolAnswer(text + describe(self.hand), True)

    def finish(self) -> ToolAnswer:
        """§2.3 craft_done: the hand is floored and fractional leftovers are lost."""
        self._passed = None
        if closed := self._closed():
            return closed
        self.done = True
        floored = floor_hand(self.hand)
        lost = {i: a - floored.get(i, 0) for i, a in self.hand.items() if a != floored.get(i, 0)}
        loss = f"lost to flooring: {describe(lost)}" if lost else "nothing is lost to flooring"
        text = f"crafting finished ({len(self.crafts)} crafts); your hand will be "
        return ToolAnswer(f"{text}{describe(floored)}; {loss}", True)

    def action(self) -> str:
        """The CraftSpace action text for the applied crafts (its canonical form)."""
        return _move(self.crafts)


def _move(crafts: list[dict[str, Any]]) -> str:
    return json.dumps(crafts, sort_keys=True, separators=(",", ":"))


def _item_info(rules: TradecraftRules, _: Any, args: Mapping[str, Any]) -> ToolAnswer:
    text = item_info(rules, args["item"])  # item_name refuses a non-string
    known = not text.startswith("unknown")
    return ToolAnswer(text, known, None if known else "unknown_item")


def _recipes(rules: TradecraftRules, hand: Mapping[str, Any], _: Any) -> ToolAnswer:
    return ToolAnswer(possible_recipes(rules, hand), True)


TOOLS: dict[str, Tool] = {tool.name: tool for tool in INFO_TOOLS + CRAFT_TOOLS}
INFO_HANDLERS: dict[str, Callable[[TradecraftRules, Any, Mapping[str, Any]], ToolAnswer]] = {
    ITEM_INFO.name: _item_info,
    POSSIBLE_RECIPES.name: _recipes,
}
CRAFT_HANDLERS: dict[str, Callable[[CraftBench, Mapping[str, Any]], ToolAnswer]] = {
    CRAFT_CHECK.name: lambda bench, args: bench.check(args["input"], args["output"]),
    CRAFT_APPLY.name: lambda bench, _: bench.apply(),
    CRAFT_DONE.name: lambda bench, _: bench.finish(),
}


def run_tool(
    name: str,
    arguments: Mapping[str, Any],
    rules: TradecraftRules,
    hand: Mapping[str, Fraction | int],
    bench: CraftBench | None = None,
) -> ToolAnswer:
    """Answer one tool call; every failure is an answer (ok False), never an exception."""
    tool = TOOLS.get(name) if isinstance(name, str) else None
    if tool is None:
        known = ", ".join(TOOLS)
        return _failed("unknown_tool", f"unknown tool {str(name)[:60]!r}; the tools are {known}")
    if not isinstance(arguments, Mapping):
        return _failed("bad_arguments", f"{name}: arguments must be an object")
    allowed = set(tool.parameters.get("properties", {}))
    extra = sorted(str(k)[:40] for k in arguments if k not in allowed)[:5]
    missing = sorted(set(tool.parameters.get("required", ())) - set(arguments))
    if extra or missing:
        problem = f"unknown arguments {extra}" if extra else f"missing arguments {missing}"
        return _failed("bad_arguments", f"{name}: {problem}; it takes {sorted(allowed) or 'none'}")
    try:
        if name in INFO_HANDLERS:  # the current hand: in the craft phase, after the applied crafts
            return INFO_HANDLERS[name](rules, bench.hand if bench else hand, arguments)
        if bench is None:  # §2.6 [R]: a tool of another phase gets a phase_error reply
            return _failed("phase_error", "phase_error: craft tools only work in the craft phase")
        return CRAFT_HANDLERS[name](bench, arguments)
    except (ValueError, IllegalAction) as error:
        return _failed("bad_arguments", f"{name}: {error}")
