"""A toy game for the conformance checks' tests (`tests/test_conformance.py`): High Card, correct
by default, and broken one way per option, so that each check is shown to fail on what it checks.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, replace

from stratagem.games.base import Event, Game, Observation, State, chance
from stratagem.games.spaces import Action, Choice

CARDS = ("Deuce", "Seven", "Nine", "Queen", "King")
"""Words of at least four letters: the private-information rule looks for such words."""


@dataclass(frozen=True)
class HandObservation(Observation):
    card: str = ""
    opponent_card: str = ""


@dataclass(frozen=True)
class HandState(State):
    """Each seat holds a private card; both bet or fold at once; the higher card wins a bet."""

    game: HighCard
    cards: tuple[str, str]
    moves: tuple[str, ...] = ()

    def to_act(self) -> tuple[int, ...]:
        return () if self.moves else (0, 1)

    def legal(self, player: int) -> Choice:
        return Choice(("bet", "fold"))

    def observation(self, player: int) -> Observation:
        leak = self.cards[1 - player] if self.game.leak else ""
        return HandObservation(
            player,
            None if self.is_terminal() else self.legal(player),
            card=self.cards[player],
            opponent_card=leak,
        )

    def is_terminal(self) -> bool:
        return bool(self.moves)

    def payoffs(self) -> tuple[float, ...]:
        if not self.moves:
            return (0.0, 0.0)
        if "fold" in self.moves:
            return (0.0, math.nan if self.game.nan else 0.0)
        high = CARDS.index(self.cards[0]) > CARDS.index(self.cards[1])
        return (1.0, -1.0) if high else (-1.0, 1.0)

    def opening(self) -> tuple[Event, ...]:
        if self.moves:
            return ()
        return tuple(Event("deal", {"card": c}, frozenset({p})) for p, c in enumerate(self.cards))

    def apply(self, actions: Mapping[int, Action]) -> tuple[State, list[Event]]:
        if self.game.lenient:  # skips the validation every State gets from the base class
            return self._next(actions)
        return super().apply(actions)

    def _next(self, actions: Mapping[int, Action]) -> tuple[State, list[Event]]:
        moves = (str(actions[0]), str(actions[1]))
        return replace(self, moves=moves), [Event("moves", {"moves": list(moves)})]


class HighCard(Game):
    """`leak`: each observation shows the other seat's card; `lenient`: actions are not
    validated; `nan`: a fold pays NaN; `fickle`: the deal ignores the seed."""

    n_players = 2

    def __init__(
        self, *, leak: bool = False, lenient: bool = False, nan: bool = False, fickle: bool = False
    ) -> None:
        self.name = "high-card"
        self.leak, self.lenient, self.nan, self.fickle = leak, lenient, nan, fickle

    def initial_state(self, seed: int = 0) -> HandState:
        rng = random.Random() if self.fickle else chance(seed, "deal")
        first, second = rng.sample(CARDS, 2)
        return HandState(self, (first, second))
