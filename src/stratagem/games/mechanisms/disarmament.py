"""Disarmament: before play, each player may commit to remove one of its actions for the whole
game, both at once and then in public; the engine enforces the commitment: a removed action is
no longer a legal move, so a reply that plays it is refused like any illegal move (committing
to give up strategies can make cooperation credible: Deng and Conitzer, "Disarmament Games",
AAAI 2017).

A player may also keep every action ("keep all"), and a commitment that stays invalid keeps
them all. In a game of two actions, removing one is committing to the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stratagem.games.base import Event
from stratagem.games.mechanisms.base import (
    MOVE,
    MechanismGame,
    MechanismObservation,
    MechanismState,
)
from stratagem.games.spaces import Action, ActionSpace, Choice

DISARM = "disarm"
"""The phase before the first round in which both players commit."""
KEEP = "keep all"
REMOVE = "remove "
"""A commitment's label: `remove <action>`."""
DISARMAMENT = "disarmament"
"""The public event of the commitments: each seat's removed action, or None."""


class DisarmamentGame(MechanismGame):
    mechanism = "disarmament"

    def description(self) -> str:
        return (
            f"{self.stage.description()}, {self.rounds} rounds after each player may commit to "
            "remove one of its actions"
        )

    def decisions(self, seat: int) -> tuple[str, ...]:
        return (KEEP, *(REMOVE + label for label in self.stage.labels[seat]))

    def initial_state(self, seed: int = 0) -> DisarmamentState:
        return DisarmamentState(self)


@dataclass(frozen=True)
class DisarmamentObservation(MechanismObservation):
    removed: tuple[str | None, ...] = ()
    """Each seat's removed action (None: it kept all); empty until both have committed."""


@dataclass(frozen=True)
class DisarmamentState(MechanismState):
    game: DisarmamentGame
    removed: tuple[int | None, ...] | None = None
    """Each seat's removed action index; None until the commitments are made."""

    @property
    def phase(self) -> str:
        return DISARM if self.removed is None else MOVE

    def space(self, player: int) -> ActionSpace:
        return Choice(self.game.decisions(player))

    def playable(self, player: int) -> Choice:
        own = self.game.stage.labels[player]
        gone = None if self.removed is None else self.removed[player]
        return Choice(tuple(label for i, label in enumerate(own) if i != gone))

    def fallback(self, player: int) -> Action:
        """A commitment that stays invalid removes nothing."""
        return KEEP

    def decide(self, actions: Mapping[int, Action]) -> tuple[DisarmamentState, list[Event]]:
        labels = self.game.stage.labels
        removed = tuple(
            None if actions[p] == KEEP else labels[p].index(str(actions[p]).removeprefix(REMOVE))
            for p in (0, 1)
        )
        shown = [None if r is None else labels[p][r] for p, r in enumerate(removed)]
        return self.then([Event(DISARMAMENT, {"removed": shown})], removed=removed)

    def observation(self, player: int) -> DisarmamentObservation:
        labels = self.game.stage.labels
        return DisarmamentObservation(
            **self.fields(player),
            removed=()
            if self.removed is None
            else tuple(None if r is None else labels[p][r] for p, r in enumerate(self.removed)),
        )
