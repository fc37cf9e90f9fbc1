"""Seeded TradeCraft 1v1 task instances beyond the 10 published ones (seed-002 §2.4, §3.3, §12.1).

The paper speaks of 40 predefined 1v1 instances and runs its study on "the first half" (20/40), but
neither set is published (§12.1); the reference code holds 10. This module makes further instances
by §2.4's design rules, each checked with the rules module (`tradecraft_rules`), so a 20- or
40-instance set can be regenerated from a seed:

- the union of the two hands suffices to craft each player's target alone; it need not suffice for
  both at once (shared needs are sometimes pooled by the larger need rather than the sum, so the
  two targets can contend for the same items; the outcome is recorded, not forced);
- the hands are not the exact needs: surplus units and distractor items are added;
- difficulty has two axes, "the length of the crafting chain and the minimum number of trading
  steps". Both are computed here by search (`tradecraft_instances_search`) and stored per player:
  `chain_length` (fewest craft operations that make the target from the union of hands) and
  `min_trades` (fewest item kinds the player must receive from the other, [I] one kind per trade);
  the stored `difficulty` is their product, as the brief asks; `jointly_craftable` says whether
  the union makes both targets at once (None: the search's state cap left it undecided).

Each choice the paper leaves open ([I]) is a field of `GeneratorOptions` with its default.
Instances have the published shape (`{"hands": [...], "targets": [...]}`) plus a `meta` entry with
the difficulty, the seed and the generator's index, which `TradecraftGame` would ignore.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from math import ceil
from typing import Any

from stratagem.games.tradecraft.instances_search import (
    craft_plan,
    jointly_craftable,
    min_trades,
    replay,
)
from stratagem.games.tradecraft.rules import TradecraftRules, load_rules

MC = "minecraft:"

# [I] The raw materials hands are drawn from: every item in the 10 published hands (§2.4 [R]).
DEFAULT_BASE_ITEMS: tuple[str, ...] = tuple(
    MC + name
    for name in [
        "apple",
        "beetroot",
        "brown_mushroom",
        "cherry_planks",
        "coal",
        "cobblestone",
        "flint",
        "flower_pot",
        "gold_ore",
        "iron_ingot",
        "iron_ore",
        "kelp",
        "leather",
        "mangrove_roots",
        "melon_seeds",
        "oak_log",
        "oak_planks",
        "quartz",
        "raw_copper",
        "raw_iron",
        "redstone",
        "redstone_block",
        "stick",
        "string",
        "wheat",
    ]
)
# [I] Targets: the published ones, the §2.2 table's end items, and a few tools of the same kind.
# A target with no plan from the base items within `max_chain` crafts is skipped.
DEFAULT_TARGETS: tuple[str, ...] = tuple(
    MC + name
    for name in [
        "shears",
        "torch",
        "bucket",
        "stone_shovel",
        "lever",
        "chain",
        "detector_rail",
        "target",
        "dropper",
        "observer",
        "powered_rail",
        "shield",
        "arrow",
        "comparator",
        "lantern",
        "lightning_rod",
        "stone_pressure_plate",
        "iron_pickaxe",
        "stone_pickaxe",
        "iron_sword",
        "tripwire_hook",
        "fishing_rod",
        "rail",
        "compass",
    ]
)
# [I] Fuel a generated plan burns: coal or a plank, as in the published instance 0 (§2.4).
DEFAULT_FUELS: tuple[str, ...] = (MC + "coal", MC + "oak_planks", MC + "cherry_planks")


@dataclass(frozen=True)
class GeneratorOptions:
    """The [I] choices of instance generation (seed-002 §2.4 gives only the design rules).

    base_items: raw materials a plan may start from (default: the published hands' items).
    targets: the target pool (default above); two distinct targets are drawn per instance.
    fuels: fuel a plan burns for cooking (§2.2), drawn from these.
    max_chain: the most craft operations one target's plan may take (search depth cap too).
    max_craft_amount: the largest output amount of one craft op tried by the search.
    p_raw: chance a base item that also has a recipe is taken raw instead of crafted.
    p_pool_max: chance two players' needs of one item are pooled as the larger need, not the
        sum (makes "not guaranteed that all targets can be crafted simultaneously", §2.4).
    p_surplus: chance each held item gets one surplus unit ("not set to the exact amounts").
    distractors: (least, most) distractor item kinds added, 1-3 units each, to random hands.
    min_trades_at_least: every player must need at least this many item kinds from the other
        (default 1: nobody crafts alone, so each instance needs trade).
    max_attempts: candidate draws per instance before giving up (a ValueError).
    """

    base_items: tuple[str, ...] = DEFAULT_BASE_ITEMS
    targets: tuple[str, ...] = DEFAULT_TARGETS
    fuels: tuple[str, ...] = DEFAULT_FUELS
    max_chain: int = 4
    max_craft_amount: int = 4
    p_raw: float = 0.5
    p_pool_max: float = 0.5
    p_surplus: float = 0.3
    distractors: tuple[int, int] = (1, 3)
    min_trades_at_least: int = 1
    max_attempts: int = 200


Needs = dict[str, Fraction]


def _merge(into: Needs, more: Mapping[str, Fraction]) -> None:
    for item, amount in more.items():
        into[item] = into.get(item, Fraction(0)) + amount


def _plan(
    rules: TradecraftRules,
    item: str,
    amount: Fraction,
    depth: int,
    rng: random.Random,
    opts: GeneratorOptions,
) -> tuple[Needs, int] | None:
    """Raw needs (and craft ops) of one random plan for `amount` of `item` within `depth` ops.

    A plan is only a proposal for the hands: the search later recomputes what the hands allow.
    """
    base = item in opts.base_items
    if base and (depth == 0 or not rules.recipes_for(item) or rng.random() < opts.p_raw):
        return {item: amount}, 0
    if depth == 0:
        return None
    recipes = list(rules.recipes_for(item))
    rng.shuffle(recipes)
    for recipe in recipes[:4]:
        k = max(1, ceil(amount))
        if k > opts.max_craft_amount:
            continue
        scale = Fraction(k, recipe.count)
        needs: Needs = {}
        ops = 1
        for slot in recipe.slots:
            members = sorted(slot.items)
            rng.shuffle(members)
            members.sort(key=lambda m: m not in opts.base_items)  # raw first, shuffled
            for member in members[:3]:
                sub = _plan(rules, member, slot.count * scale, depth - ops, rng, opts)
                if sub is not None:
                    _merge(needs, sub[0])
                    ops += sub[1]
                    break
            else:
                break
        else:
            if recipe.fuel:
                fuel = rng.choice(opts.fuels)
                _merge(needs, {fuel: rules.options.fuel_per_craft * scale / rules.fuel_units(fuel)})
            if ops <= depth:
                return needs, ops
    return None


def _hands(
    needs: list[dict[str, int]], rng: random.Random, opts: GeneratorOptions
) -> list[dict[str, int]]:
    """Split each player's needs so the other holds at least one needed kind, pool them, and add
    surplus and distractors (§2.4)."""
    owner: list[dict[str, int]] = []  # per player: item -> who holds what this target needs
    for p, need in enumerate(needs):
        items = sorted(need)
        away = set(rng.sample(items, rng.randint(1, max(1, len(items) - 1))))
        owner.append({i: (1 - p if i in away else p) for i in items})
    hands: list[dict[str, int]] = [{}, {}]
    for p, need in enumerate(needs):
        for item, amount in sorted(need.items()):
            hand = hands[owner[p][item]]
            if item in hand and rng.random() < opts.p_pool_max:
                hand[item] = max(hand[item], amount)
            else:
                hand[item] = hand.get(item, 0) + amount
    for hand in hands:
        for item in sorted(hand):
            if rng.random() < opts.p_surplus:
                hand[item] += 1
    held = set(hands[0]) | set(hands[1])
    spare = sorted(set(opts.base_items) - held)
    for item in rng.sample(spare, min(len(spare), rng.randint(*opts.distractors))):
        rng.choice(hands)[item] = rng.randint(1, 3)
    return [dict(sorted(h.items())) for h in hands]


def describe_difficulty(
    instance: Mapping[str, Any], rules: TradecraftRules | None = None, max_chain: int = 4
) -> dict[str, Any] | None:
    """Both §2.4 difficulty axes per player, by search; None if a target is not craftable from
    the union of hands within `max_chain` ops (the design rule fails)."""
    rules = rules or load_rules()
    hands = [dict(h) for h in instance["hands"]]
    union: dict[str, int] = {}
    for hand in hands:
        for item, amount in hand.items():
            union[item] = union.get(item, 0) + amount
    chains, trades = [], []
    for p, target in enumerate(instance["targets"]):
        plan = craft_plan(rules, union, target, max_chain)
        if plan is None:
            return None
        made = replay(rules, union, plan)  # the rules module's own check, step by step
        if any(made.get(i, 0) < n for i, n in target.items()):
            raise AssertionError(f"plan for {target} does not make it")  # a search bug
        chains.append(len(plan))
        trade = min_trades(rules, hands[p], hands[1 - p], target, max_chain)
        if trade is None:  # only if the search's state cap cut it short
            return None
        trades.append(trade)
    return {
        "chain_length": chains,
        "min_trades": trades,
        "difficulty": [c * t for c, t in zip(chains, trades, strict=True)],
        "jointly_craftable": jointly_craftable(rules, union, instance["targets"], sum(chains)),
    }


def generate_instances(
    n: int, seed: int = 0, options: GeneratorOptions = GeneratorOptions()
) -> list[dict[str, Any]]:
    """`n` 1v1 instances by §2.4's design rules, deterministic given `seed` and `options`.

    Each is validated by search with the rules module: both targets craftable from the union of
    hands, each player needing at least `min_trades_at_least` kinds from the other. Duplicates
    (same hands and targets) are redrawn. Raises ValueError if `max_attempts` draws fail.
    """
    rules = load_rules()
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(out) < n:
        for _ in range(max(1, options.max_attempts)):
            instance = _candidate(rules, rng, options)
            if instance is None or repr(instance) in seen:
                continue
            meta = describe_difficulty(instance, rules, options.max_chain)
            if meta is None or min(meta["min_trades"]) < options.min_trades_at_least:
                continue
            seen.add(repr(instance))
            instance["meta"] = {"seed": seed, "index": len(out), **meta}
            out.append(instance)
            break
        else:
            raise ValueError(f"no valid instance in {options.max_attempts} draws (seed {seed})")
    return out


def _candidate(
    rules: TradecraftRules, rng: random.Random, opts: GeneratorOptions
) -> dict[str, Any] | None:
    targets = rng.sample(sorted(opts.targets), 2)
    needs = []
    for target in targets:
        plan = _plan(rules, target, Fraction(1), opts.max_chain, rng, opts)
        if plan is None or not plan[0]:
            return None
        needs.append({i: ceil(a) for i, a in plan[0].items()})
    return {"hands": _hands(needs, rng, opts), "targets": [{t: 1} for t in targets]}


# --- the study's sets (§3.3, §12.1) ----------------------------------------------------------

STUDY_SIZES = (20, 40)


def study_set(
    size: int = 20, seed: int = 0, options: GeneratorOptions = GeneratorOptions()
) -> list[dict[str, Any]]:
    """The study's instance set: the 10 published instances first, verbatim, then generated ones
    up to `size`.

    §2.4/§12.1: the paper's 40 are unpublished and their order unknown; the study runs the "first
    half" (20/40). [I] The published 10 lead so every set contains them, and the 40-set begins
    with the 20-set for the same seed (the generator is sequential), so "first half of 40" and
    "the 20-set" agree.
    """
    published = load_rules().instances_1v1()
    if size < len(published):
        raise ValueError(f"a study set holds at least the {len(published)} published instances")
    return published + generate_instances(size - len(published), seed, options)
