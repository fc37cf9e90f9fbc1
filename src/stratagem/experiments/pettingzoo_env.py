"""A stratagem game as a PettingZoo AEC environment (`stratagem.env`, docs/pettingzoo.md), so a
reinforcement-learning seat trains on the studies' games and against their bots. The engine's
side (state, seats, spaces, moves, rewards) is `pettingzoo_table.Table`.

Conventions (documented in docs/pettingzoo.md):
- agents are `player_<seat>` (0-based), bot seats left out; simultaneous moves are asked one seat
  after the other, and no seat sees another's move before the step is played;
- an illegal action is refused: the state is unchanged, the seat's reward is `illegal_reward`,
  `infos[agent]["illegal"]` says why, and the same seat acts again; after `max_illegal` refusals
  in a row the game's own rule for a missing move applies (as the episode loop's after its
  re-asks), and where the game has none the episode is truncated;
- rewards are the change of the game's payoffs (from 0) at each step played, so they sum to the
  final payoffs: per round in a repeated game, at the end in a game that pays only then.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium
from gymnasium import spaces
from pettingzoo import AECEnv

from stratagem.agents.parsing import ParseError
from stratagem.experiments.pettingzoo_table import RENDER_MODES, Table, build
from stratagem.games.base import Game
from stratagem.games.spaces import Action, IllegalAction


class StratagemEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no types
    """One stratagem game, its non-bot seats as PettingZoo agents."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "stratagem_v0",
        "render_modes": RENDER_MODES,
        "is_parallelizable": False,
    }

    def __init__(
        self,
        game: Game,
        bots: Mapping[int, str] | None = None,
        actions: str = "auto",
        illegal_reward: float = -1.0,
        max_illegal: int = 3,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.table = Table(
            game, dict(bots or {}), actions, illegal_reward, max_illegal, render_mode
        )
        self.game, self.render_mode = game, render_mode
        self.possible_agents = list(self.table.seats)

    @property
    def episode_seed(self) -> int:
        return self.table.episode_seed

    # -- the PettingZoo API ----------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.table.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.table.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new episode from the game's seed `seed` (`Table.reset`)."""
        self.table.reset(seed)
        self._pending: dict[int, Action | None] = {}
        self._refused = 0
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._advance()

    def observe(self, agent: str) -> dict[str, Any]:
        return self.table.observe(agent)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        seat = self.table.seats[agent]
        try:
            move = self.table.move(seat, action)
        except (ParseError, IllegalAction) as exc:
            self._refuse(agent, seat, str(exc))
        else:
            self.infos[agent] = {}
            self._pending[seat] = move
            self._refused = 0
            self._advance()
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The selected seat's text observation: returned (`ansi`) or printed (`human`)."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called with no render_mode: stratagem.env(render_mode=)"
            )
            return None
        text = str(self.observe(self.agent_selection)["text"]) if self.agents else ""
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release: the game is in memory."""

    # -- the engine's side -----------------------------------------------------------------------

    def _refuse(self, agent: str, seat: int, reason: str) -> None:
        self.rewards[agent] += self.table.illegal_reward
        self.infos[agent] = {"illegal": reason}
        self._refused += 1
        if self._refused >= self.table.max_illegal:
            self._pending[seat] = None  # the game's rule for a missing move
            self._refused = 0
            self._advance()

    def _advance(self) -> None:
        """Play every step whose moves are all in (bots move at once), until a seat must act or
        the game is over."""
        table = self.table
        while not table.state.is_terminal():
            self._pending.update(table.bot_moves(asked=self._pending))
            waiting = [s for s in table.acting() if s not in self._pending]
            if waiting:
                self.agent_selection = f"player_{waiting[0]}"
                return
            moves, self._pending = self._pending, {}
            try:
                rewards = table.play(moves)
            except IllegalAction as exc:  # a missing move, and the game has no rule for it
                self.truncations = {a: True for a in self.agents}
                for agent in self.agents:
                    self.infos[agent] = {**self.infos[agent], "truncated": str(exc)}
                self.agent_selection = self.agents[0]
                return
            for agent, seat in table.seats.items():
                self.rewards[agent] += rewards[seat]
        self.terminations = {a: True for a in self.agents}
        self.agent_selection = self.agents[0]


def make_env(
    game: str,
    *,
    rounds: int | None = None,
    bots: Mapping[int | str, str] | None = None,
    actions: str = "auto",
    illegal_reward: float = -1.0,
    max_illegal: int = 3,
    render_mode: str | None = None,
    **options: Any,
) -> StratagemEnv:
    """The AEC environment of catalog game `game` (`chameleon/0`, `dilemma`), built as an
    experiment builds it (`pettingzoo_table.build`)."""
    built, seats = build(game, rounds, bots, options)
    return StratagemEnv(built, seats, actions, illegal_reward, max_illegal, render_mode)
