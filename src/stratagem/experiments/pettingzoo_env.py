"""A stratagem game as a PettingZoo AEC environment (`stratagem.env`, docs/pettingzoo.md), so a
reinforcement-learning seat trains on the studies' games and against their bots.

The engine keeps the state: an action reaches it only as a parsed move that its space validates,
as every agent's action does. What a seat observes is what a person in it is told (the human
player's rendering: the same prompts, the same chat) plus the numbers of it; never more.

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

import dataclasses
import math
import random
from collections.abc import Coroutine, Mapping
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from stratagem.agents.base import Decision
from stratagem.agents.human import MAX_LINE_CHARS, HumanPlayer
from stratagem.agents.parsing import ParseError
from stratagem.agents.registry import repeated_matrix_only
from stratagem.agents.strategy_agent import StrategyAgent
from stratagem.errors import StratagemError
from stratagem.experiments.grid import build_game
from stratagem.experiments.limits import MAX_ROUNDS, check_range, check_seed
from stratagem.experiments.pettingzoo_spaces import (
    MAX_VIEW_CHARS,
    Utterance,
    mask,
    structured,
    structured_space,
    vocabulary,
)
from stratagem.games.base import Game, State
from stratagem.games.catalog import get_entry
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.games.spaces import Action, IllegalAction
from stratagem.strategies.registry import get_strategy

ACTION_MODES = ("auto", "discrete", "text")
"""`discrete`: an index into the seat's vocabulary, with a mask; `text`: what a person would
type; `auto`: discrete where the game has a vocabulary."""


class StratagemEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no types
    """One stratagem game, its non-bot seats as PettingZoo agents."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "stratagem_v0",
        "render_modes": ["ansi", "human"],
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
        bots = dict(bots or {})
        modes = self.metadata["render_modes"]
        _check(game, bots, actions, illegal_reward, max_illegal, render_mode, modes)
        self.game, self.render_mode = game, render_mode
        self.illegal_reward, self.max_illegal = float(illegal_reward), max_illegal
        self._bots = {seat: StrategyAgent(get_strategy(spec)) for seat, spec in bots.items()}
        self._seats = {f"player_{s}": s for s in range(game.n_players) if s not in bots}
        self.possible_agents = list(self._seats)
        self._people = {s: HumanPlayer(game, _no_input, _silent) for s in self._seats.values()}
        first = game.initial_state(0)
        self._words = {
            s: vocabulary(game, s) if actions != "text" else None for s in self._seats.values()
        }
        if actions == "discrete" and None in self._words.values():
            raise StratagemError(
                f"game '{game.name}' has free-text moves, so no discrete actions: "
                "use actions='text' (or 'auto')"
            )
        self._action_spaces: dict[str, spaces.Space[Any]] = {}
        self._observation_spaces: dict[str, spaces.Dict] = {}
        for agent, seat in self._seats.items():
            words = self._words[seat]
            fields: dict[str, spaces.Space[Any]] = {
                "observation": structured_space(first.observation(seat)),
                "text": Utterance(MAX_VIEW_CHARS),
            }
            if words is None:
                self._action_spaces[agent] = Utterance(MAX_LINE_CHARS)
            else:
                self._action_spaces[agent] = spaces.Discrete(len(words))
                fields["action_mask"] = spaces.Box(0, 1, shape=(len(words),), dtype=np.int8)
            self._observation_spaces[agent] = spaces.Dict(fields)
        self._rng = random.Random()
        self.episode_seed = 0
        self._state: State = first

    # -- the PettingZoo API ----------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new episode: `seed` is the game's seed (its chance: roles, words, instances), as an
        experiment's `seeds:` entry; without one, the next seed of the last one given."""
        if seed is not None:
            seed = check_seed("seed", _whole(seed))
            self._rng.seed(seed)
        self.episode_seed = self._rng.randrange(2**31) if seed is None else seed
        self._state = self.game.initial_state(self.episode_seed)
        self._payoffs = (0.0,) * self.game.n_players  # rewards sum to the final payoffs
        self._turn = 1
        self._pending: dict[int, Action | None] = {}
        self._refused = 0
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        for bot in self._bots.values():
            bot.reset(seed=self.episode_seed)
        self._advance()

    def observe(self, agent: str) -> dict[str, Any]:
        seat = self._seats[agent]
        observation = dataclasses.replace(self._state.observation(seat), turn=self._turn)
        space = self._observation_spaces[agent]
        out: dict[str, Any] = {
            "observation": structured(space.spaces["observation"], observation),
            "text": self._people[seat].view(observation),
        }
        words = self._words[seat]
        if words is not None:
            out["action_mask"] = mask(words, observation.legal)
        return out

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        seat = self._seats[agent]
        try:
            move = self._move(seat, action)
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

    def _move(self, seat: int, action: Any) -> Action:
        """The move an action stands for, validated by the engine against the seat's space now."""
        legal = self._state.legal(seat)
        words = self._words[seat]
        if words is None:
            if not isinstance(action, str):
                raise IllegalAction(f"illegal action {action!r}: expected text")
            return self._people[seat].read(self._state.observation(seat), action)
        if isinstance(action, bool) or not isinstance(action, int | np.integer):
            raise IllegalAction(f"illegal action {action!r}: expected an index 0..{len(words) - 1}")
        if not 0 <= int(action) < len(words):
            raise IllegalAction(f"illegal action {action}: expected an index 0..{len(words) - 1}")
        return legal.validate(words[int(action)])

    def _refuse(self, agent: str, seat: int, reason: str) -> None:
        self.rewards[agent] += self.illegal_reward
        self.infos[agent] = {"illegal": reason}
        self._refused += 1
        if self._refused >= self.max_illegal:
            self._pending[seat] = None  # the game's rule for a missing move
            self._refused = 0
            self._advance()

    def _advance(self) -> None:
        """Play every step whose moves are all in (bots move at once), until a seat must act or
        the game is over."""
        while not self._state.is_terminal():
            acting = self._state.to_act()
            for seat, bot in self._bots.items():
                if seat in acting and seat not in self._pending:
                    observation = dataclasses.replace(
                        self._state.observation(seat), turn=self._turn
                    )
                    self._pending[seat] = _now(bot.act(observation)).action
            waiting = [s for s in acting if s not in self._pending]
            if waiting:
                self.agent_selection = f"player_{waiting[0]}"
                return
            if not self._play():
                return
        self.terminations = {a: True for a in self.agents}
        self.agent_selection = self.agents[0]

    def _play(self) -> bool:
        """Apply the moves in; False (the episode truncated) where a move is missing and the game
        has no rule for that."""
        moves, self._pending = self._pending, {}
        try:
            if None in moves.values():
                self._state, _ = self._state.forfeit(moves)
            else:
                self._state, _ = self._state.apply(
                    {s: m for s, m in moves.items() if m is not None}
                )
        except IllegalAction as exc:
            self.truncations = {a: True for a in self.agents}
            for agent in self.agents:
                self.infos[agent] = {**self.infos[agent], "truncated": str(exc)}
            self.agent_selection = self.agents[0]
            return False
        self._turn += 1
        payoffs = self._state.payoffs()
        for agent, seat in self._seats.items():
            self.rewards[agent] += payoffs[seat] - self._payoffs[seat]
        self._payoffs = payoffs
        return True


def _check(
    game: Game,
    bots: Mapping[int, str],
    actions: str,
    illegal_reward: float,
    max_illegal: int,
    render_mode: str | None,
    render_modes: list[str],
) -> None:
    """One-line errors for options that cannot work, naming the option."""
    if actions not in ACTION_MODES:
        raise StratagemError(f"actions: expected one of {list(ACTION_MODES)}, got {actions!r}")
    number = not isinstance(illegal_reward, bool) and isinstance(illegal_reward, int | float)
    if not number or not math.isfinite(illegal_reward):  # a NaN poisons every sum of rewards
        raise StratagemError(f"illegal_reward must be a finite number, got {illegal_reward!r}")
    if isinstance(max_illegal, bool) or not isinstance(max_illegal, int) or max_illegal < 1:
        raise StratagemError(f"max_illegal: expected a whole number >= 1, got {max_illegal!r}")
    if render_mode is not None and render_mode not in render_modes:
        raise StratagemError(f"render_mode: expected one of {render_modes}, got {render_mode!r}")
    if len(bots) >= game.n_players:
        raise StratagemError(f"bots: every seat of '{game.name}' is a bot; leave one to train")
    for seat, spec in bots.items():
        why = repeated_matrix_only(game)
        if why is not None:
            raise StratagemError(f"bots: strategy '{spec}' {why}, not '{game.name}'")
        assert isinstance(game, RepeatedGame)
        get_strategy(spec).reset(game.stage, player=seat)


def _whole(value: object) -> object:
    """A NumPy integer as the int it is (a training loop's seeds often are); anything else as
    given, for the range check to judge."""
    return int(value) if isinstance(value, np.integer) else value


def _now(coroutine: Coroutine[Any, Any, Decision]) -> Decision:
    """The decision of a rule-based agent, whose `act` never waits."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise StratagemError("a bot waited for input; bots of stratagem.env must decide at once")


async def _no_input(prompt: str) -> str | None:
    return None


def _silent(text: str) -> None:
    return None


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
    """The environment of catalog game `game` (`chameleon/0`, `dilemma`), built as an experiment
    builds it: `rounds` as its `rounds:` (a matrix game's default: its study's first round count),
    `options` as its `game_options`; `bots` seats strategies by seat (0-based) or agent name."""
    entry = get_entry(game)
    matrix = isinstance(entry.factory(), NormalFormGame)
    if rounds is not None and not matrix and "rounds" not in entry.options():
        raise StratagemError(f"rounds: game '{game}' takes no round count")
    if rounds is not None:  # the experiment file's bound (`rounds:`)
        rounds = check_range("rounds", _whole(rounds), 1, MAX_ROUNDS)  # type: ignore[arg-type]
    if rounds is None and matrix:
        rounds = entry.rounds[0] if entry.rounds else 1
    built = build_game(game, None, rounds, options)
    seats = {_seat(key, built.n_players): spec for key, spec in (bots or {}).items()}
    return StratagemEnv(built, seats, actions, illegal_reward, max_illegal, render_mode)


def _seat(key: int | str, n_players: int) -> int:
    """A bot's seat from its index or its agent name (`player_1`)."""
    text = str(key).removeprefix("player_")
    if isinstance(key, bool) or not text.isdigit() or int(text) >= n_players:
        raise StratagemError(
            f"bots: {key!r} names no seat; expected 0..{n_players - 1} or player_0..player_"
            f"{n_players - 1}"
        )
    return int(text)
