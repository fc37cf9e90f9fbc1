"""Reading a ToM agent's reply: the V0/V1/V2 reports and the action, from one JSON object.

§3.2 [A]: scores are whole numbers 0..10 over the report's domain (the items in any hand). A
score out of range is clipped, a fractional one rounded, a missing item set to 0, an item outside
the domain dropped, and every such repair is logged (`scores`, shared with the study, which
applies the same repairs to every stored report); an order that is missing or not an object is
a parse failure, logged and stored as missing, never filled in as if reported. The action part is
validated by the game's own action space, so an illegal proposal is refused with the engine's
reason and re-asked; the reports never affect the game.

`reply_schema` is the JSON schema sent with the request when the agent constrains its output
(structured output where the provider allows, a grammar for the embedded model): report keys fixed
to the domain, and the proposal's items limited to what each hand holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stratagem.agents.parsing import ParseError
from stratagem.agents.tom.scores import SCORE_MAX, SCORE_MIN, repair_values
from stratagem.agents.tom.texts import bare
from stratagem.games.spaces import IllegalAction
from stratagem.games.tradecraft.actions import DecisionSpace, ProposalSpace

ACTION_KEYS = {"proposal": ("offer", "request", "message"), "decision": ("decision", "message")}


@dataclass
class Reports:
    """The reports read from one reply: scores by order, and what had to be repaired."""

    values: dict[int, dict[str, int]] = field(default_factory=dict)
    failed: list[int] = field(default_factory=list)
    """Orders asked for whose report could not be read."""
    errors: list[str] = field(default_factory=list)


def first_object(text: str) -> dict[str, Any]:
    """The JSON object a reply starts at its first "{" (models wrap JSON in prose or code
    fences). Control characters inside strings are let through (a small model writes raw
    newlines in its message); an object that does not close is an error, never mistaken for the
    first complete object nested inside it."""
    start = text.find("{")
    if start == -1:
        raise ParseError("no JSON object found in the reply")
    try:
        value, _ = json.JSONDecoder(strict=False).raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise ParseError(f"the reply's JSON is not valid or not complete ({exc.msg})") from None
    if not isinstance(value, dict):
        raise ParseError("the reply's JSON is not an object")
    return value


def read_reports(data: Mapping[str, Any], order: int, domain: Sequence[str]) -> Reports:
    """Orders 0..`order` of a reply's reports over `domain` (full item names), §3.2 [A]."""
    out = Reports()
    for k in range(order + 1):
        key = f"V{k}"
        raw = data.get(key)
        if not isinstance(raw, Mapping):
            out.failed.append(k)
            out.errors.append(f"{key} missing" if raw is None else f"{key} is not an object")
            continue
        out.values[k], notes = repair_values(raw, domain, key)
        out.errors += notes
    return out


def read_action(data: Mapping[str, Any], phase: str, space: Any) -> str:
    """The action part of a reply as the game's canonical action text; `ParseError` with the
    engine's reason when it is missing or illegal (an illegal proposal is re-asked)."""
    action = {key: data[key] for key in ACTION_KEYS[phase] if key in data}
    if phase == "decision" and "decision" not in action:
        raise ParseError('the reply has no "decision" ("accept" or "reject")')
    if phase == "proposal" and not ({"offer", "request"} & set(action)):
        raise ParseError('the reply has no "offer" or "request"')
    try:
        return str(space.validate(json.dumps(action)))
    except IllegalAction as exc:
        raise ParseError(str(exc)) from None


def _scores_schema(domain: Sequence[str]) -> dict[str, Any]:
    # Enumerated, not minimum/maximum: llama.cpp's schema grammar ignores integer bounds.
    score = {"enum": list(range(SCORE_MIN, SCORE_MAX + 1))}
    names = [bare(i) for i in domain]
    return {
        "type": "object",
        "properties": {name: score for name in names},
        "required": names,
        "additionalProperties": False,
    }


def _items_schema(hand: Sequence[tuple[str, int]]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {bare(item): {"enum": list(range(1, n + 1))} for item, n in hand},
        "additionalProperties": False,
    }


def reply_schema(
    order: int | None, domain: Sequence[str], phase: str | None, space: Any, message_chars: int
) -> dict[str, Any]:
    """The JSON schema of a reply: reports of orders 0..`order` (None: no reports), then the
    action of `phase` (None: reports only, the `separate` report call)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    if order is not None:
        for k in range(order + 1):
            properties[f"V{k}"] = _scores_schema(domain)
            required.append(f"V{k}")
    message = {"type": "string", "maxLength": message_chars}
    if phase == "proposal":
        assert isinstance(space, ProposalSpace)
        properties |= {
            "offer": _items_schema(space.own),
            "request": _items_schema(space.partner),
            "message": message,
        }
        required += ["offer", "request"]
    elif phase == "decision":
        assert isinstance(space, DecisionSpace)
        properties |= {"decision": {"enum": ["accept", "reject"]}, "message": message}
        required.append("decision")
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
