"""The searches behind the generated instances' difficulty (seed-002 §2.4): fewest craft operations
to a target from a hand, and fewest item kinds a player needs from the other.

Every step is checked by the rules module's exact check (`TradecraftRules.check`, §2.3), so a
"craftable" answer is a replayable plan. [I] The search restricts itself, to stay small:
- one held item per recipe slot (no mixing of tag members inside a slot) and one fuel item;
- output amounts 1..`max_amount` per craft;
- only recipes whose output can lead to the goal within the depth cap.
So `chain_length` is the shortest chain among such plans; crafting is within one craft phase,
so fractions stay exact and nothing is floored mid-chain (§2.3).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from itertools import combinations, product

from stratagem.games.tradecraft.rules import Recipe, TradecraftRules, apply_craft

Hand = tuple[tuple[str, Fraction], ...]  # sorted, positive amounts: a hashable hand
Goal = tuple[tuple[str, int], ...]
Step = tuple[dict[str, Fraction], str, int]  # inputs, output, amount: one craft request
Found = tuple[tuple[Step, ...] | None, bool]  # a plan or None; whether that answer is decided


def _hand(hand: Mapping[str, Fraction | int]) -> Hand:
    return tuple(sorted((i, Fraction(a)) for i, a in hand.items() if a > 0))


def relevant(rules: TradecraftRules, goal: Sequence[str], depth: int) -> frozenset[str]:
    """Items that can feed the goal's items within `depth` crafts (the goal included)."""
    return frozenset(goal) | rules.feeders(goal, depth)


def steps(
    rules: TradecraftRules, hand: Hand, outputs: frozenset[str], max_amount: int
) -> Iterator[Step]:
    """Legal crafts (inputs, output, amount) from `hand` whose output is in `outputs`.

    The recipe check proper (`accepts`) runs once per recipe, items and fuel at amount 1 (cached);
    the inputs scale linearly with the amount, so larger amounts only need the hand to hold them.
    """
    held = dict(hand)
    fuels = [i for i in held if rules.fuel_units(i)]
    for output in sorted(outputs):
        for recipe in rules.recipes_for(output):
            choices = [sorted(slot.items & held.keys()) for slot in recipe.slots]
            if not all(choices):
                continue
            for picks in product(*choices):
                for fuel in fuels if recipe.fuel else [None]:
                    unit = _unit_inputs(rules, recipe, picks, fuel)
                    if unit is None:
                        continue
                    for amount in range(1, max_amount + 1):
                        inputs = {i: a * amount for i, a in unit}
                        if any(held[i] < a for i, a in inputs.items()):
                            break
                        yield inputs, output, amount


@lru_cache(maxsize=65536)
def _unit_inputs(
    rules: TradecraftRules, recipe: Recipe, picks: tuple[str, ...], fuel: str | None
) -> tuple[tuple[str, Fraction], ...] | None:
    """The inputs of one output by `recipe` from these items, if the exact check accepts them."""
    inputs = _inputs(rules, recipe, picks, fuel, 1)
    return tuple(sorted(inputs.items())) if rules.accepts(recipe, inputs, 1) else None


def _inputs(
    rules: TradecraftRules, recipe: Recipe, picks: Sequence[str], fuel: str | None, amount: int
) -> dict[str, Fraction]:
    scale = Fraction(amount, recipe.count)
    inputs: dict[str, Fraction] = {}
    for slot, item in zip(recipe.slots, picks, strict=True):
        inputs[item] = inputs.get(item, Fraction(0)) + slot.count * scale
    if fuel is not None:
        need = rules.options.fuel_per_craft * scale / rules.fuel_units(fuel)
        inputs[fuel] = inputs.get(fuel, Fraction(0)) + need
    return inputs


def _apply(hand: Hand, inputs: Mapping[str, Fraction], output: str, amount: int) -> Hand:
    after = dict(hand)
    for item, a in inputs.items():
        after[item] -= a
    after[output] = after.get(output, Fraction(0)) + amount
    return tuple(sorted((i, a) for i, a in after.items() if a > 0))  # already Fractions


def _reached(hand: Hand, goal: Goal) -> bool:
    held = dict(hand)
    return all(held.get(i, Fraction(0)) >= n for i, n in goal)


@lru_cache(maxsize=4096)
def _shortest(
    rules: TradecraftRules, hand: Hand, goal: Goal, depth: int, max_amount: int, cap: int
) -> Found:
    """Breadth-first: a shortest craft plan from `hand` to hold `goal`, or None within `depth`
    crafts; and whether the answer is decided (False when `cap` visited states cut it short)."""
    if _reached(hand, goal):
        return (), True
    outputs = relevant(rules, [i for i, _ in goal], depth)
    parent: dict[Hand, tuple[Hand, Step] | None] = {hand: None}
    layer = [hand]
    for _ in range(depth):
        nxt = []
        for h in layer:
            for step in steps(rules, h, outputs, max_amount):
                after = _apply(h, *step)
                if after in parent:
                    continue
                parent[after] = (h, step)
                if _reached(after, goal):
                    return _path(parent, after), True
                nxt.append(after)
                if len(parent) > cap:
                    return None, False
        layer = nxt
    return None, True


def _path(parent: Mapping[Hand, tuple[Hand, Step] | None], end: Hand) -> tuple[Step, ...]:
    path: list[Step] = []
    link = parent[end]
    while link is not None:
        path.append(link[1])
        link = parent[link[0]]
    return tuple(reversed(path))


def craft_plan(
    rules: TradecraftRules,
    hand: Mapping[str, Fraction | int],
    target: Mapping[str, int],
    depth: int = 4,
    max_amount: int = 4,
    cap: int = 3000,
) -> tuple[Step, ...] | None:
    """A shortest plan (craft requests in order) that makes `target` from `hand`, or None."""
    return search(rules, hand, target, depth, max_amount, cap)[0]


def search(
    rules: TradecraftRules,
    hand: Mapping[str, Fraction | int],
    target: Mapping[str, int],
    depth: int = 4,
    max_amount: int = 4,
    cap: int = 3000,
) -> Found:
    """`craft_plan` with whether a None is decided (the search ran out of depth, not of `cap`)."""
    goal = tuple(sorted(target.items()))
    return _shortest(rules, _hand(hand), goal, depth, max_amount, cap)


def chain_length(
    rules: TradecraftRules,
    hand: Mapping[str, Fraction | int],
    target: Mapping[str, int],
    depth: int = 4,
    max_amount: int = 4,
    cap: int = 3000,
) -> int | None:
    """Fewest craft operations that make `target` from `hand` (§2.4's chain length), or None."""
    plan = craft_plan(rules, hand, target, depth, max_amount, cap)
    return None if plan is None else len(plan)


def replay(
    rules: TradecraftRules, hand: Mapping[str, Fraction | int], plan: Sequence[Step]
) -> dict[str, Fraction]:
    """Run `plan` through the rules module's full check and apply (§2.3); ValueError if any step
    is refused. The independent validation of a search result."""
    held = {i: Fraction(a) for i, a in hand.items()}
    for inputs, output, amount in plan:
        result = rules.check(held, inputs, {output: amount})
        if not result.ok:
            raise ValueError(f"craft of {amount} {output} refused: {result.reason}")
        held = apply_craft(held, inputs, {output: amount})
    return held


def min_trades(
    rules: TradecraftRules,
    own: Mapping[str, int],
    other: Mapping[str, int],
    target: Mapping[str, int],
    depth: int = 4,
) -> int | None:
    """Fewest item kinds (all the other holds of each) that `own` needs to make `target` (§2.4's
    trading steps, [I] one kind per trade); None if even all of them do not suffice, or if a
    smaller choice went undecided (the state cap), so that the answer is never overstated."""
    useful = relevant(rules, list(target), depth) | {i for i in other if rules.fuel_units(i)}
    kinds = sorted(i for i in other if i in useful)
    for size in range(len(kinds) + 1):
        for chosen in combinations(kinds, size):
            hand = dict(own)
            for item in chosen:
                hand[item] = hand.get(item, 0) + other[item]
            plan, decided = search(rules, hand, target, depth)
            if plan is not None:
                return size
            if not decided:
                return None
    return None


def jointly_craftable(
    rules: TradecraftRules,
    union: Mapping[str, int],
    targets: Sequence[Mapping[str, int]],
    depth: int,
    cap: int = 5000,
) -> bool | None:
    """Whether the union of hands makes every target at once (§2.4: "not guaranteed") within
    `depth` crafts; None when the `cap` of visited states leaves it undecided."""
    goal: dict[str, int] = {}
    for target in targets:
        for item, n in target.items():
            goal[item] = goal.get(item, 0) + n
    plan, decided = search(rules, union, goal, depth, cap=cap)
    return True if plan is not None else (False if decided else None)
