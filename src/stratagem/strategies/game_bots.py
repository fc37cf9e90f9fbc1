"""Rule-based players of whole games (not repeated matrix games): a bot acts on the observation
of its seat, as an LLM does, and says before a game is played whether it can play it."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod

from stratagem.games.base import Game, Observation
from stratagem.games.spaces import Action


class GameBot(ABC):
    name: str

    @property
    def label(self) -> str:
        """The display name, parameters included (`openspiel-mcts(200)`)."""
        return self.name

    @abstractmethod
    def check(self, game: Game, seat: int) -> None:
        """Refuse (`StratagemError`) a game or seat this bot cannot play, before any is played."""

    @abstractmethod
    def act(self, observation: Observation, rng: random.Random) -> Action:
        """A legal action of the observation's space; randomness only from `rng`."""
