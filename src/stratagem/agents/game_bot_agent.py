"""A game bot (`strategies.game_bots`) seated as an agent, so the runner treats it as any seat."""

from __future__ import annotations

import random

from stratagem.agents.base import Agent, Decision
from stratagem.games.base import Observation
from stratagem.strategies.game_bots import GameBot


class GameBotAgent(Agent):
    def __init__(self, bot: GameBot, name: str | None = None) -> None:
        self.bot = bot
        self.name = name or bot.label
        self._seed = 0
        self._rngs: dict[int, random.Random] = {}

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        """The seat's seed, from the episode (`experiments.seating`), so a seed replays exactly;
        each seat draws from its own stream (rule-based seats share the episode's seed)."""
        self._seed = seed
        self._rngs = {}

    async def act(self, observation: Observation) -> Decision:
        seat = observation.player
        rng = self._rngs.setdefault(seat, random.Random(f"{self._seed}:{seat}"))
        return Decision(action=self.bot.act(observation, rng), valid=True, attempts=0)
