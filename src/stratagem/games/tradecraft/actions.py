"""TradeCraft's structured actions (seed-002 §2.6): a proposal, a decision, a craft phase's crafts.

Each is a JSON text validated against the state it is made in, so an `Action` stays `str | int`
and a stored action reads as itself. The spaces subclass `FreeText` (an agent writes text) but
refuse anything illegal with a one-line `IllegalAction` reason, and `validate` returns the
canonical form (sorted keys, compact separators, "minecraft:" names, amounts as integers or
"p/q" strings), so equal actions compare equal as strings.

- proposal: `{"offer": {item: n}, "request": {item: n}, "message": "..."}`; amounts are positive
  (§2.6: "> 0") whole counts, an integral number such as 1.0 being the count 1 (hands are whole
  at trade time: flooring, §2.3); fractional amounts only under the game's `fractional_amounts`
  option (the spec is silent on them); the proposer holds every offered amount and the partner
  every requested one; empty offer/request allowed ([R], §2.6).
- decision: `{"decision": "accept" | "reject", "message": "..."}` (the bare words also parse).
- crafts: `[{"input": {item: amount}, "output": {item: n}}, ...]`, applied in order, each checked
  by the rules module against the hand the previous ones left (`craft_recipe_check` then
  `craft_recipe_apply`, §2.3); submitting the list is `craft_done` ("[]" crafts nothing).

An empty text is the phase's pass (§2.6 [A]: an empty proposal, a rejection, no crafts): the same
move a player whose replies stay invalid is given, and the one generic stand-ins for free text
("") make, so a plan can play the game through.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from stratagem.games.spaces import Action, FreeText, IllegalAction
from stratagem.games.tradecraft.rules import (
    AmountBound,
    TradecraftRules,
    apply_craft,
    shown_value,
    to_fraction,
)

PREFIX = "minecraft:"
MAX_MESSAGE = 1000
MAX_CRAFTS = 64
MAX_CRAFT_ITEMS = 256
"""The most items one side of a craft may list: a bound on untrusted input, above the widest
request §2.3 accepts (a cooking recipe whose fuel is paid by every fuel there is: 250 items in
the packaged rules), so it never refuses a legal recipe."""
MAX_NAME = 100
ACCEPT, REJECT = "accept", "reject"

Items = tuple[tuple[str, int], ...]
"""A set of items with counts, sorted by name (hashable, so spaces and proposals are)."""
Counts = tuple[tuple[str, int | Fraction], ...]
"""A proposal's items: whole counts as ints, fractions only under `fractional_amounts`."""
Hand = tuple[tuple[str, Fraction], ...]


def item_name(name: object) -> str:
    """An item's full name: bare names get the rule set's prefix ("coal" -> "minecraft:coal")."""
    if not isinstance(name, str) or not name.strip():
        raise IllegalAction(f"illegal item name {name!r}")
    name = name.strip()
    return name if ":" in name else PREFIX + name


def amount_text(amount: Fraction) -> int | str:
    """An amount as the canonical JSON writes it: an integer, else "p/q"."""
    return int(amount) if amount.denominator == 1 else str(amount)


def describe(items: Mapping[str, Fraction | int] | Counts) -> str:
    """Items for a transcript: "1 coal, 2 raw_iron" ("nothing" when empty)."""
    pairs = items.items() if isinstance(items, Mapping) else items
    text = ", ".join(f"{amount_text(Fraction(a))} {i.removeprefix(PREFIX)}" for i, a in pairs)
    return text or "nothing"


def _blank(action: Action) -> bool:
    return isinstance(action, str) and not action.strip()


def _load(action: Action, what: str, example: str) -> Any:
    if not isinstance(action, str):
        raise IllegalAction(f"illegal {what} {action!r}: expected JSON text like {example}")
    try:
        return json.loads(action)
    except json.JSONDecodeError as error:
        raise IllegalAction(
            f"illegal {what}: not JSON ({error.msg}); expected like {example}"
        ) from None


def _keys(data: Any, what: str, allowed: set[str], example: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise IllegalAction(f"illegal {what}: expected a JSON object like {example}")
    extra = sorted(set(data) - allowed)
    if extra:
        raise IllegalAction(f"illegal {what}: unknown keys {extra}; allowed {sorted(allowed)}")
    return data


def _message(data: Mapping[str, Any], what: str) -> str:
    message = data.get("message", "")
    if not isinstance(message, str):
        raise IllegalAction(f"illegal {what}: the message must be text")
    if len(message) > MAX_MESSAGE:
        raise IllegalAction(f"illegal {what}: message over {MAX_MESSAGE} characters")
    return message


def _counts(raw: Any, what: str, fractional: bool) -> Counts:
    """Positive amounts by item (a proposal's offer or request, §2.6 "each listed amount > 0"),
    read by the one amount parser: an integral amount is a whole count (1.0 and "1" are 1); a
    fractional one is refused unless the game allows `fractional_amounts`."""
    if not isinstance(raw, dict):
        raise IllegalAction(f"illegal {what}: expected an object of item: count")
    out: dict[str, int | Fraction] = {}
    for name, value in raw.items():
        item = item_name(name)
        try:
            amount = to_fraction(value)
        except ValueError as error:
            raise IllegalAction(f"illegal {what}: {item} count: {error}") from None
        if amount <= 0:
            raise IllegalAction(f"illegal {what}: {item} count {amount_text(amount)} is not > 0")
        if amount.denominator != 1 and not fractional:
            raise IllegalAction(
                f"illegal {what}: {item} count {amount_text(amount)} is not a whole number "
                "(this game does not allow fractional_amounts)"
            )
        if item in out:
            raise IllegalAction(f"illegal {what}: {item} listed twice")
        out[item] = int(amount) if amount.denominator == 1 else amount
    return tuple(sorted(out.items()))


def counts_json(items: Counts) -> dict[str, int | str]:
    """A proposal's items as JSON holds them (events, the canonical action): `amount_text`."""
    return {item: amount_text(Fraction(n)) for item, n in items}


@dataclass(frozen=True)
class Proposal:
    """A parsed proposal: what the proposer gives (`offer`) and wants (`request`), §2.5."""

    offer: Counts
    request: Counts
    message: str = ""

    def canonical(self) -> str:
        return json.dumps(
            {
                "message": self.message,
                "offer": counts_json(self.offer),
                "request": counts_json(self.request),
            },
            sort_keys=True,
            separators=(",", ":"),
        )


EMPTY_PROPOSAL = Proposal((), (), "")
PROPOSAL_EXAMPLE = '{"offer": {"coal": 1}, "request": {"raw_iron": 1}, "message": "..."}'


@dataclass(frozen=True)
class ProposalSpace(FreeText):
    """The proposer's move (§2.6 submit_proposal): legal against both hands of this turn."""

    FORMAT_HINT: ClassVar[str] = (
        'a proposal as JSON, e.g. {"offer": {"coal": 1}, "request": {"raw_iron": 1}, '
        '"message": "..."}; an empty line proposes nothing'
    )
    own: Items = ()
    partner: Items = ()
    fractional: bool = False
    """The game's `fractional_amounts`: amounts such as "1/2" allowed (default: whole only)."""

    def parse(self, action: Action) -> Proposal:
        FreeText.validate(self, action)
        if _blank(action):
            return EMPTY_PROPOSAL
        what = "proposal"
        data = _keys(
            _load(action, what, PROPOSAL_EXAMPLE),
            what,
            {"offer", "request", "message"},
            PROPOSAL_EXAMPLE,
        )
        offer = _counts(data.get("offer", {}), "offer", self.fractional)
        request = _counts(data.get("request", {}), "request", self.fractional)
        for label, items, hand in (
            ("you", offer, self.own),
            ("your partner", request, self.partner),
        ):
            held = dict(hand)
            for item, n in items:
                if held.get(item, 0) < n:
                    raise IllegalAction(
                        f"illegal proposal: {label} hold {held.get(item, 0)} {item}, not {n}"
                    )
        return Proposal(offer, request, _message(data, what))

    def validate(self, action: Action) -> str:
        return self.parse(action).canonical()


@dataclass(frozen=True)
class Decision:
    accept: bool
    message: str = ""

    def canonical(self) -> str:
        word = ACCEPT if self.accept else REJECT
        return json.dumps(
            {"decision": word, "message": self.message}, sort_keys=True, separators=(",", ":")
        )


DECISION_EXAMPLE = '{"decision": "accept", "message": "..."}'


@dataclass(frozen=True)
class DecisionSpace(FreeText):
    """The partner's move (§2.6 submit decision): accept or reject, with a private reply."""

    FORMAT_HINT: ClassVar[str] = (
        'accept or reject, or JSON {"decision": "accept", "message": "..."}'
    )

    def parse(self, action: Action) -> Decision:
        FreeText.validate(self, action)
        assert isinstance(action, str)
        if _blank(action):
            return Decision(False)
        if action.strip().lower() in (ACCEPT, REJECT):
            return Decision(action.strip().lower() == ACCEPT)
        what = "decision"
        data = _keys(
            _load(action, what, DECISION_EXAMPLE), what, {"decision", "message"}, DECISION_EXAMPLE
        )
        word = data.get("decision")
        if word not in (ACCEPT, REJECT):
            raise IllegalAction(f'illegal decision {word!r}: expected "accept" or "reject"')
        return Decision(word == ACCEPT, _message(data, what))

    def validate(self, action: Action) -> str:
        return self.parse(action).canonical()


@dataclass(frozen=True)
class Craft:
    """One craft: exact inputs for an integer output (§2.3)."""

    inputs: tuple[tuple[str, Fraction], ...]
    output: tuple[tuple[str, int], ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "input": {i: amount_text(a) for i, a in self.inputs},
            "output": {i: n for i, n in self.output},
        }


CRAFTS_EXAMPLE = '[{"input": {"raw_iron": 1, "coal": "1/8"}, "output": {"iron_ingot": 1}}]'


class OverBound(IllegalAction):
    """A craft refused by a size bound on its input, not by the rules: the tools answer it as a
    bound, never as "code 1 (invalid recipe)" (§2.3's codes judge recipes)."""


def craft_items(raw: Any, what: str) -> tuple[tuple[str, Fraction], ...]:
    """One side ("input" or "output") of a craft, sorted by item: the one reading that the
    engine's craft move and the agents' craft tool share (the recipe is the rules' check)."""
    if not isinstance(raw, Mapping) or not raw:
        raise IllegalAction(f"illegal craft: the {what} must be a non-empty object of item: amount")
    if len(raw) > MAX_CRAFT_ITEMS:
        raise OverBound(f"size bound: a craft's {what} lists at most {MAX_CRAFT_ITEMS} items")
    out: dict[str, Fraction] = {}
    for name, value in raw.items():
        item = item_name(name)
        if len(item) > MAX_NAME:
            raise OverBound(f"size bound: item names have at most {MAX_NAME} characters")
        if item in out:
            raise IllegalAction(f"illegal craft: {item} listed twice in the {what}")
        try:
            out[item] = to_fraction(value)
        except AmountBound as error:
            raise OverBound(f"size bound: {item} {error}") from None
        except ValueError:
            shown = shown_value(value)
            raise IllegalAction(f"illegal craft: {item} amount {shown} is not a number") from None
    return tuple(sorted(out.items()))


@dataclass(frozen=True)
class CraftSpace(FreeText):
    """A player's craft phase (§2.6 craft_recipe_check/apply, then craft_done): the crafts made,
    each legal for the hand the earlier ones left."""

    FORMAT_HINT: ClassVar[str] = (
        'your crafts as a JSON list, e.g. [{"input": {"oak_planks": "1/2"}, "output": '
        '{"stick": 1}}]; an empty line ends your crafting'
    )

    hand: Hand = ()
    rules: TradecraftRules | None = field(default=None, compare=False, repr=False)

    def run(self, action: Action) -> tuple[tuple[Craft, ...], dict[str, Fraction]]:
        """The crafts and the hand after them (not floored), or `IllegalAction` saying why."""
        FreeText.validate(self, action)
        assert self.rules is not None
        data = [] if _blank(action) else _load(action, "crafts", CRAFTS_EXAMPLE)
        if not isinstance(data, list):
            raise IllegalAction(f"illegal crafts: expected a JSON list like {CRAFTS_EXAMPLE}")
        if len(data) > MAX_CRAFTS:
            raise IllegalAction(f"illegal crafts: more than {MAX_CRAFTS} in one craft phase")
        hand = dict(self.hand)
        crafts: list[Craft] = []
        for k, raw in enumerate(data, 1):
            entry = _keys(raw, f"craft {k}", {"input", "output"}, CRAFTS_EXAMPLE)
            inputs = craft_items(entry.get("input"), "input")
            output = craft_items(entry.get("output"), "output")
            check = self.rules.check(hand, dict(inputs), dict(output))
            if not check.ok:
                raise IllegalAction(f"illegal craft {k} (code {check.code}): {check.reason}")
            whole = tuple((i, int(a)) for i, a in output)
            hand = apply_craft(hand, dict(inputs), dict(whole))
            crafts.append(Craft(inputs, whole))
        return tuple(crafts), hand

    def validate(self, action: Action) -> str:
        crafts, _ = self.run(action)
        return json.dumps([c.as_json() for c in crafts], sort_keys=True, separators=(",", ":"))
