"""The ToM agent's prompt texts (seed-002 §9).

The paper prints no agent prompt (§9.1), so these are the §9.3 reconstruction [A]: the rules of
§2 in the spirit of the earlier code's `game_init.txt` and default goal (§9.2 [R]), and the
report request of §9.3. Two things are fixed by the paper and kept word for word, because they
define the construct (§9.1): the 0-10 scale ("0 indicates *useless* and 10 indicates *critical
for the secret target*") and the V0/V1/V2 definitions of §3.1, over the items in the players'
publicly observable hands. No sentence says how the reports should be used (§1, §3.3): they are
a measurement interface.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from stratagem.games.tradecraft.actions import PREFIX, describe

INTRO = """\
You are playing TradeCraft, a trade-and-craft game on Minecraft 1.20 recipes, as {me} against \
{other}.

Rules:
- Every player holds a hand of items. All hands are visible to both players.
- Each player has one secret target item to craft, known only to that player. The first player \
to hold its target item wins.
- The game is played in turns, at most {max_turn}. In each turn:
  1. Proposal: the turn's proposer offers some of its items in exchange for some of the other \
player's items, with an optional message. The items could be exchanged between the two players \
in any ratio if both agree to exchange. Players take turns as proposer.
  2. Decision: the other player accepts or rejects the proposal and may send a text message \
back to the proposer secretly. If accepted, the trade is executed; if rejected, nothing is \
exchanged. There is one proposal and one decision per turn.
  3. Craft: both players craft at the same time, as many crafts as they like, then finish \
crafting. Hand changes are revealed when both are done.
- A craft is eligible if it is a valid Minecraft recipe with the exact amount of items (fractions \
are allowed, e.g. 1/2 oak_planks makes 1 stick) and your hand holds enough of each input. The \
output amount must be a whole number. Tags such as #minecraft:planks accept any member item.
- Smelting needs fuel: 1/8 coal (or the equivalent amount of another fuel) per item smelted. A \
crafting table, furnace and the other workstations are always available.
- When you finish crafting, every amount in your hand is rounded down to a whole number: \
fractional leftovers are lost.
- Scoring: {scoring}

Your goal: you should check how your target item is crafted and remember it, then craft the \
target item.
Your secret target: {target}."""

SCORING_TEXT: Mapping[str, str] = {
    # §2.7 [R], the two scoring texts of the earlier code, as options of the game.
    "game_init": "if only one player holds its target item at the end of the game, it gets 3 "
    "points; if both do, each gets 1 point; otherwise nobody gets any point.",
    "game_setting": "a win gets 3 points and a loss 0; if both players craft their items in the "
    "same turn, or neither does within the turns allowed, it is a draw and both get 1 point.",
}

TOOLS_LINE = (
    "You can call the tools item_info (what an item is made from and used for) and "
    "possible_recipes_from_hand (what your hand can craft) at any time."
)

# §9.1 / §3.1-3.2: the construct-defining wording; §9.3: the request around it.
SCALE = (
    "Each score is an item-wise utility score on a 0-10 scale, where 0 indicates useless and "
    "10 indicates critical for the secret target."
)
DEFINITIONS: tuple[str, ...] = (
    '"V0": for every item, its estimated utility for achieving YOUR secret target.',
    '"V1": for every item, its estimated utility for achieving your OPPONENT\'s secret target '
    "(based on your current hypothesis of that target).",
    '"V2": for every item, the utility that your opponent believes YOU assign to it (i.e., your '
    "opponent's estimate of your V0).",
)

PROPOSAL_FORMAT = (
    '"offer": the items you give, as {{"item": count}}; "request": the items you want from '
    '{other}, as {{"item": count}}; "message": an optional text message to {other}.'
)
DECISION_FORMAT = (
    '"decision": "accept" or "reject"; "message": an optional text message sent secretly to '
    "{other}."
)

CRAFT_REQUEST = (
    "Craft phase of turn {turn}. Your hand: {hand}.\n"
    'Use craft_recipe_check with an exact recipe ({{"input": {{item: amount}}, "output": '
    "{{item: count}}}}), then craft_recipe_apply to apply the last recipe that passed the check; "
    "repeat as you like, and call craft_done when you have finished crafting this turn."
)


def bare(item: str) -> str:
    """An item as the prompts name it (`minecraft:coal` -> `coal`)."""
    return item.removeprefix(PREFIX)


def hand_text(hand: Mapping[str, int | Fraction]) -> str:
    return describe(dict(sorted(hand.items())))


def hands_text(names: Sequence[str], hands: Sequence[Mapping[str, int | Fraction]]) -> str:
    return "\n".join(f"- {name}: {hand_text(h)}" for name, h in zip(names, hands, strict=True))


def report_request(order: int, domain: Sequence[str]) -> str:
    """§9.3: the report part of a proposal or decision request, for orders 0..`order`."""
    names = ", ".join(bare(i) for i in domain)
    keys = ", ".join(f'"V{k}"' for k in range(order + 1))
    lines = [
        f"Before acting, report your item valuations as JSON ({keys}), scoring every item "
        f"currently present in any player's hand: {names}. {SCALE}",
        *DEFINITIONS[: order + 1],
    ]
    return "\n".join(lines)


def action_request(phase: str, other: str, reports: bool) -> str:
    """The action part: which keys the JSON reply holds for a proposal or a decision."""
    fmt = PROPOSAL_FORMAT if phase == "proposal" else DECISION_FORMAT
    lead = "Then give your action in the same JSON object: " if reports else "Reply with JSON: "
    return lead + fmt.format(other=other)
