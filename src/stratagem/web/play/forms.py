"""The controls a seat's page draws for a move, described as JSON from the move's action space.

A form only helps a person compose the line they would type in `stratagem play`: the page sends
that line, and the human player reads it and the engine validates it exactly as it does a typed
one. So a form never decides what is legal; it mirrors the space's own bounds (a range's ends, a
text's limit, the shares' step and total, the hands a TradeCraft proposal may draw on) so the page
can check an input before sending it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stratagem.games.base import Game, Observation
from stratagem.games.spaces import ActionSpace, Choice, FreeText, IntegerRange, Shares
from stratagem.games.tradecraft.actions import (
    PREFIX,
    CraftSpace,
    DecisionSpace,
    ProposalSpace,
    amount_text,
)
from stratagem.games.tradecraft.game import TradecraftGame

Form = dict[str, Any]


def _choice(space: Choice, game: Game) -> Form:
    return {"kind": "choice", "labels": list(space.labels)}


def _integer(space: IntegerRange, game: Game) -> Form:
    return {"kind": "integer", "low": space.low, "high": space.high}


def _shares(space: Shares, game: Game) -> Form:
    return {"kind": "shares", "parties": list(space.parties), "step": space.step,
            "total": space.total}  # fmt: skip


def _text(space: FreeText, game: Game) -> Form:
    return {"kind": "text", "max_chars": space.max_chars}


def _proposal(space: ProposalSpace, game: Game) -> Form:
    """seed-002 §2.5: what the proposer may offer (their hand) and request (the partner's)."""
    return {
        "kind": "proposal",
        "max_chars": space.max_chars,
        "own": [[_short(item), n] for item, n in space.own],
        "partner": [[_short(item), n] for item, n in space.partner],
        "fractional": space.fractional,
    }


def _decision(space: DecisionSpace, game: Game) -> Form:
    return {"kind": "decision", "max_chars": space.max_chars}


def _craft(space: CraftSpace, game: Game) -> Form:
    """seed-002 §2.6's craft tools: the hand to draw inputs from, and the items a craft may make."""
    rules = space.rules or (game.rules if isinstance(game, TradecraftGame) else None)
    return {
        "kind": "craft",
        "max_chars": space.max_chars,
        "hand": [[_short(item), amount_text(n)] for item, n in space.hand],
        "items": sorted(_short(item) for item in rules.by_output) if rules is not None else [],
    }


def _short(item: str) -> str:
    """An item as a person types it ("coal"); the game reads it back with its prefix."""
    return item.removeprefix(PREFIX)


FORMS: list[tuple[type, Callable[[Any, Game], Form]]] = [
    # the most specific first: TradeCraft's moves are FreeText subclasses
    (ProposalSpace, _proposal),
    (DecisionSpace, _decision),
    (CraftSpace, _craft),
    (Choice, _choice),
    (IntegerRange, _integer),
    (Shares, _shares),
    (FreeText, _text),
]
"""Action space type -> its form; a new space type adds a row (and the page a control)."""


def move_form(game: Game, observation: Observation) -> Form:
    """The form of the move this observation asks for; a space without one gets a text line."""
    space: ActionSpace | None = observation.legal
    for kind, build in FORMS:
        if isinstance(space, kind):
            return build(space, game)
    return {"kind": "text", "max_chars": None}


def tools_of(game: Game) -> bool:
    """Whether the seat's page offers TradeCraft's lookup tools (`?item`, `?recipes`)."""
    return isinstance(game, TradecraftGame)
