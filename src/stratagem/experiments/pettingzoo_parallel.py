"""A simultaneous-move stratagem game as a PettingZoo parallel environment
(`stratagem.parallel_env`, docs/pettingzoo.md): every agent acts at every step, as every seat
does in a round of a matrix game. The engine's side is `pettingzoo_table.Table`, as for the AEC
environment, with its conventions: bot seats are no agents, rewards are payoff changes, an
illegal action changes nothing.

A step is played only once every agent's move is legal: an illegal action is refused (the state
unchanged, `illegal_reward`, `infos[agent]["illegal"]`) and the step is asked again of every
agent, so no one plays against a move that was not made; after `max_illegal` refusals in a row
a seat's move is the game's rule for a missing move, and the step is played with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium
from gymnasium import spaces
from pettingzoo import ParallelEnv

from stratagem.agents.parsing import ParseError
from stratagem.errors import StratagemError
from stratagem.experiments.pettingzoo_table import RENDER_MODES, Table, build
from stratagem.games.base import Game
from stratagem.games.spaces import Action, IllegalAction

Dicts = tuple[
    dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]
]
"""What `step` returns: observations, rewards, terminations, truncations, infos by agent."""


class StratagemParallelEnv(ParallelEnv):  # type: ignore[misc]  # pettingzoo ships no types
    """One simultaneous-move stratagem game, its non-bot seats as PettingZoo agents."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "stratagem_parallel_v0",
        "render_modes": RENDER_MODES,
    }

    def __init__(
        self,
        game: Game,
        bots: Mapping[int, str] | None = None,
        actions: str = "auto",
        illegal_reward: float = -1.0,
        max_illegal: int = 3,
        render_mode: str | None = None,
        *,
        label: str | None = None,
    ) -> None:
        """`label`: the game's name in messages (its catalog name); by default its own."""
        self.table = Table(
            game, dict(bots or {}), actions, illegal_reward, max_illegal, render_mode
        )
        asked = self.table.state.to_act()
        if len(asked) < game.n_players:
            name = label or game.name
            raise StratagemError(
                f"game '{name}' is played in turns (its first step asks "
                f"{', '.join(f'player_{s}' for s in asked)} only), so it has no parallel "
                f"environment: use stratagem.env('{name}')"
            )
        self.game, self.render_mode = game, render_mode
        self.possible_agents = list(self.table.seats)
        self.agents: list[str] = []
        self._refused = dict.fromkeys(self.table.seats.values(), 0)

    @property
    def episode_seed(self) -> int:
        return self.table.episode_seed

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.table.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.table.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """A new episode from the game's seed `seed` (`Table.reset`)."""
        self.table.reset(seed)
        self.agents = list(self.possible_agents)
        self._refused = dict.fromkeys(self.table.seats.values(), 0)
        return {a: self.table.observe(a) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions: Mapping[str, Any]) -> Dicts:
        """Every live agent's action: the step is played where all are legal (module docstring).
        An agent missing from `actions` counts as an illegal action; a name that is no live
        agent is a one-line error."""
        unknown = sorted(set(actions) - set(self.agents))
        if unknown:
            raise StratagemError(
                f"actions: {', '.join(map(repr, unknown))} is no live agent; agents: {self.agents}"
            )
        if not self.agents:
            return {}, {}, {}, {}, {}
        agents, table = list(self.agents), self.table
        rewards = dict.fromkeys(agents, 0.0)
        infos: dict[str, dict[str, Any]] = {a: {} for a in agents}
        moves: dict[int, Action | None] = {}
        for agent in agents:
            seat = table.seats[agent]
            try:
                if agent not in actions:
                    raise IllegalAction(f"no action for {agent}")
                moves[seat] = table.move(seat, actions[agent])
                self._refused[seat] = 0
            except (ParseError, IllegalAction) as exc:
                rewards[agent] += table.illegal_reward
                infos[agent]["illegal"] = str(exc)
                self._refused[seat] += 1
        short = [s for s in table.acting() if s not in moves]
        if all(self._refused[s] >= table.max_illegal for s in short):
            for seat in short:  # the game's rule for a missing move
                moves[seat], self._refused[seat] = None, 0
            self._play(moves, rewards, infos)
        return self._answer(agents, rewards, infos)

    def _play(
        self,
        moves: dict[int, Action | None],
        rewards: dict[str, float],
        infos: dict[str, dict[str, Any]],
    ) -> None:
        """Play the step with the bots' moves; end the episode where it is over, or where it
        cannot go on: a missing move without a rule, a next step that is not everyone's."""
        table = self.table
        try:
            paid = table.play({**moves, **table.bot_moves()})
        except IllegalAction as exc:  # a missing move, and the game has no rule for it
            self._truncate(infos, str(exc))
            return
        for agent in rewards:
            rewards[agent] += paid[table.seats[agent]]
        if table.state.is_terminal():
            self.agents = []
            return
        asked = table.state.to_act()
        if len(asked) < self.game.n_players:
            self._truncate(
                infos,
                f"step {table.turn} asks {', '.join(f'player_{s}' for s in asked)} only: "
                "a turn, which the parallel API cannot take (use stratagem.env)",
            )

    def _truncate(self, infos: dict[str, dict[str, Any]], reason: str) -> None:
        for info in infos.values():
            info["truncated"] = reason
        self.agents = []

    def _answer(
        self, agents: list[str], rewards: dict[str, float], infos: dict[str, dict[str, Any]]
    ) -> Dicts:
        over = not self.agents
        truncated = over and any("truncated" in info for info in infos.values())
        return (
            {a: self.table.observe(a) for a in agents},
            rewards,
            {a: over and not truncated for a in agents},
            {a: truncated for a in agents},
            infos,
        )

    def render(self) -> str | None:
        """Every agent's text observation, each under its name: returned (`ansi`) or printed
        (`human`)."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called with no render_mode: stratagem.parallel_env(render_mode=)"
            )
            return None
        text = "\n\n".join(f"[{a}]\n{self.table.observe(a)['text']}" for a in self.agents)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release: the game is in memory."""


def make_parallel_env(
    game: str,
    *,
    rounds: int | None = None,
    bots: Mapping[int | str, str] | None = None,
    actions: str = "auto",
    illegal_reward: float = -1.0,
    max_illegal: int = 3,
    render_mode: str | None = None,
    **options: Any,
) -> StratagemParallelEnv:
    """The parallel environment of catalog game `game` (`dilemma`, `public-good/0`), built as
    an experiment builds it (`pettingzoo_table.build`)."""
    built, seats = build(game, rounds, bots, options)
    return StratagemParallelEnv(
        built, seats, actions, illegal_reward, max_illegal, render_mode, label=game
    )
