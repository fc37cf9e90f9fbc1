"""A rule-based strategy seated as an agent, so the runner treats bots and LLMs alike."""

from __future__ import annotations

import random

from stratagem.agents.base import Agent, Decision
from stratagem.errors import StratagemError
from stratagem.games.base import Observation
from stratagem.games.matrix.repeated import FORFEIT, RepeatedObservation
from stratagem.strategies.base import Strategy


class StrategyAgent(Agent):
    """Plays a `Strategy` in a repeated 2-player matrix game.

    Strategies act on action indices, so the agent rebuilds both index histories from the
    observation (the engine's record, not anything the agent remembers) and maps the chosen index
    back to the player's label. Forfeited rounds are not shown to the strategy.
    """

    def __init__(self, strategy: Strategy, name: str | None = None) -> None:
        self.strategy = strategy
        self.name = name or strategy.label
        self._rng = random.Random(0)
        self._match: tuple[int, int] | None = None
        """(id of the stage game, player) the strategy was last reset for."""

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        self._rng = random.Random(seed)
        self._match = None

    async def act(self, observation: Observation) -> Decision:
        if not isinstance(observation, RepeatedObservation) or observation.stage is None:
            raise StratagemError(
                f"agent '{self.name}' plays repeated matrix games; "
                f"got a {type(observation).__name__}"
            )
        stage, player = observation.stage, observation.player
        if stage.n_players != 2:
            raise StratagemError(
                f"agent '{self.name}' needs a 2-player game; '{stage.name}' has {stage.n_players}"
            )
        match = (id(stage), player)
        # A new match: after reset, on a different game or seat, or back at round 1.
        if self._match != match or observation.round == 1:
            self.strategy.reset(stage, player)
            self._match = match
        # Strategies know only legal indices, so rounds someone forfeited (FORFEIT, -1) are left
        # out: the strategy reacts to the moves actually played.
        played = [r for r in observation.history if FORFEIT not in r.actions]
        own = [r.actions[player] for r in played]
        opponent = [r.actions[1 - player] for r in played]
        index = self.strategy.act(own, opponent, self._rng)
        return Decision(action=stage.labels[player][index], valid=True, attempts=0)
