"""The engine's side of a stratagem game as a PettingZoo environment, shared by the AEC
(`stratagem.env`) and the parallel API (`stratagem.parallel_env`); docs/pettingzoo.md.

The engine keeps the state: an action reaches it only as a move that the seat's space validates,
as every agent's action does. What a seat observes is what a person in it is told (the human
player's rendering: the same prompts, the same chat) plus the numbers of it; never more. Rewards
are the change of the game's payoffs (from 0) at each step played, so they sum to the final
payoffs. Bot seats are no agents: their moves are asked at once, when their step comes.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Container, Coroutine, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from stratagem.agents.base import Decision
from stratagem.agents.human import MAX_LINE_CHARS, HumanPlayer
from stratagem.agents.registry import repeated_matrix_only
from stratagem.agents.strategy_agent import StrategyAgent
from stratagem.errors import StratagemError
from stratagem.experiments.grid import build_game
from stratagem.experiments.limits import MAX_ROUNDS, check_range, check_seed
from stratagem.experiments.pettingzoo_spaces import (
    MAX_VIEW_CHARS,
    Utterance,
    structured,
    structured_space,
    vocabulary,
)
from stratagem.games.base import Game, Observation, State
from stratagem.games.catalog import get_entry
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.games.spaces import Action, IllegalAction
from stratagem.strategies.registry import get_strategy

ACTION_MODES = ("auto", "discrete", "text")
"""`discrete`: a number in the seat's fixed set of moves, with a mask; `text`: what a person
would type; `auto`: discrete where the game has such a set."""
RENDER_MODES = ["ansi", "human"]


class Table:
    """One game in play: its state, its seats (agents and bots) and their spaces."""

    def __init__(
        self,
        game: Game,
        bots: Mapping[int, str],
        actions: str,
        illegal_reward: float,
        max_illegal: int,
        render_mode: str | None,
    ) -> None:
        _check(game, bots, actions, illegal_reward, max_illegal, render_mode)
        self.game = game
        self.illegal_reward, self.max_illegal = float(illegal_reward), max_illegal
        self.bots = {seat: StrategyAgent(get_strategy(spec)) for seat, spec in bots.items()}
        self.seats = {f"player_{s}": s for s in range(game.n_players) if s not in bots}
        self._people = {s: HumanPlayer(game, _no_input, _silent) for s in self.seats.values()}
        self.words = {s: _words(game, s, actions) for s in self.seats.values()}
        self.state: State = game.initial_state(0)
        self.action_spaces: dict[str, spaces.Space[Any]] = {}
        self.observation_spaces: dict[str, spaces.Dict] = {}
        for agent, seat in self.seats.items():
            words = self.words[seat]
            fields: dict[str, spaces.Space[Any]] = {
                "observation": structured_space(self.state.observation(seat)),
                "text": Utterance(MAX_VIEW_CHARS),
            }
            if words is None:
                self.action_spaces[agent] = Utterance(MAX_LINE_CHARS)
            else:
                self.action_spaces[agent] = spaces.Discrete(len(words))
                fields["action_mask"] = spaces.Box(0, 1, shape=(len(words),), dtype=np.int8)
            self.observation_spaces[agent] = spaces.Dict(fields)
        self._rng = random.Random()
        self.episode_seed = 0
        self.turn = 1
        self._payoffs = (0.0,) * game.n_players
        self._numbered: dict[int, dict[int, Action]] = {}

    def reset(self, seed: int | None) -> None:
        """A new episode: `seed` is the game's seed (its chance: roles, words, instances), as an
        experiment's `seeds:` entry; without one, the next seed of the last one given."""
        if seed is not None:
            seed = check_seed("seed", _whole(seed))
            self._rng.seed(seed)
        self.episode_seed = self._rng.randrange(2**31) if seed is None else seed
        self.state = self.game.initial_state(self.episode_seed)
        self._payoffs = (0.0,) * self.game.n_players
        self.turn = 1
        self._numbered = {}
        for bot in self.bots.values():
            bot.reset(seed=self.episode_seed)

    def observation(self, seat: int) -> Observation:
        return dataclasses.replace(self.state.observation(seat), turn=self.turn)

    def observe(self, agent: str) -> dict[str, Any]:
        """The seat's text, its numbers and, with discrete actions, the mask of its moves."""
        seat = self.seats[agent]
        observation = self.observation(seat)
        space = self.observation_spaces[agent]
        out: dict[str, Any] = {
            "observation": structured(space.spaces["observation"], observation),
            "text": self._people[seat].view(observation),
        }
        words = self.words[seat]
        if words is not None:
            mask = np.zeros(len(words), dtype=np.int8)
            if observation.legal is not None:
                mask[list(self.numbered(seat))] = 1
            out["action_mask"] = mask
        return out

    def numbered(self, seat: int) -> dict[int, Action]:
        """The seat's legal moves now by their number (it must act now); kept for the state."""
        if seat not in self._numbered:
            words = self.words[seat]
            assert words is not None
            self._numbered[seat] = self.state.numbered(seat, words)
        return self._numbered[seat]

    def move(self, seat: int, action: Any) -> Action:
        """The move an action stands for, validated by the engine against the seat's space
        now; `IllegalAction` or `ParseError` says why it is none."""
        words = self.words[seat]
        if words is None:
            if not isinstance(action, str):
                raise IllegalAction(f"illegal action {action!r}: expected text")
            return self._people[seat].read(self.observation(seat), action)
        if isinstance(action, bool) or not isinstance(action, int | np.integer):
            raise IllegalAction(f"illegal action {action!r}: expected an index 0..{len(words) - 1}")
        if not 0 <= int(action) < len(words):
            raise IllegalAction(f"illegal action {action}: expected an index 0..{len(words) - 1}")
        legal = self.numbered(seat)
        if int(action) not in legal:
            raise IllegalAction(f"illegal action {action}: masked out now (legal: {sorted(legal)})")
        return self.state.legal(seat).validate(legal[int(action)])

    def acting(self) -> tuple[int, ...]:
        """The seats to act now that are agents, not bots."""
        return tuple(s for s in self.state.to_act() if s not in self.bots)

    def bot_moves(self, asked: Container[int] = ()) -> dict[int, Action | None]:
        """The moves of the bots that act now, but those `asked` already (a bot may keep count
        of what it is asked)."""
        acting = self.state.to_act()
        return {
            seat: _now(bot.act(self.observation(seat))).action
            for seat, bot in self.bots.items()
            if seat in acting and seat not in asked
        }

    def play(self, moves: Mapping[int, Action | None]) -> dict[int, float]:
        """Apply every acting seat's move (None: its replies stayed invalid, so the game's rule
        for a missing move applies); each seat's reward, the change of its payoff. Raises
        `IllegalAction` where a move is missing and the game has no rule for that."""
        if None in moves.values():
            self.state, _ = self.state.forfeit(moves)
        else:
            self.state, _ = self.state.apply({s: m for s, m in moves.items() if m is not None})
        self.turn += 1
        self._numbered = {}
        payoffs, before = self.state.payoffs(), self._payoffs
        self._payoffs = payoffs
        return {seat: payoffs[seat] - before[seat] for seat in range(self.game.n_players)}


def _words(game: Game, seat: int, actions: str) -> Sequence[Action] | None:
    """The seat's fixed set of moves where it takes discrete actions, else None (text)."""
    words = None if actions == "text" else vocabulary(game, seat)
    if actions == "discrete" and words is None:
        raise StratagemError(
            f"game '{game.name}': player {seat}'s moves are not a fixed set (free text), so no "
            "discrete actions: use actions='text' (or 'auto')"
        )
    return words


def _check(
    game: Game,
    bots: Mapping[int, str],
    actions: str,
    illegal_reward: float,
    max_illegal: int,
    render_mode: str | None,
) -> None:
    """One-line errors for options that cannot work, naming the option."""
    if actions not in ACTION_MODES:
        raise StratagemError(f"actions: expected one of {list(ACTION_MODES)}, got {actions!r}")
    number = not isinstance(illegal_reward, bool) and isinstance(illegal_reward, int | float)
    if not number or not math.isfinite(illegal_reward):  # a NaN poisons every sum of rewards
        raise StratagemError(f"illegal_reward must be a finite number, got {illegal_reward!r}")
    if isinstance(max_illegal, bool) or not isinstance(max_illegal, int) or max_illegal < 1:
        raise StratagemError(f"max_illegal: expected a whole number >= 1, got {max_illegal!r}")
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise StratagemError(f"render_mode: expected one of {RENDER_MODES}, got {render_mode!r}")
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


def build(
    game: str,
    rounds: int | None,
    bots: Mapping[int | str, str] | None,
    options: Mapping[str, Any],
) -> tuple[Game, dict[int, str]]:
    """Catalog game `game` (`chameleon/0`, `dilemma`) built as an experiment builds it:
    `rounds` as its `rounds:` (a matrix game's default: its study's first round count),
    `options` as its `game_options`; and `bots` by seat (0-based) from a seat or agent name."""
    entry = get_entry(game)
    matrix = isinstance(entry.factory(), NormalFormGame)
    if rounds is not None and not matrix and "rounds" not in entry.options():
        raise StratagemError(f"rounds: game '{game}' takes no round count")
    if rounds is not None:  # the experiment file's bound (`rounds:`)
        rounds = check_range("rounds", _whole(rounds), 1, MAX_ROUNDS)  # type: ignore[arg-type]
    if rounds is None and matrix:
        rounds = entry.rounds[0] if entry.rounds else 1
    built = build_game(game, None, rounds, options)
    return built, {_seat(key, built.n_players): spec for key, spec in (bots or {}).items()}


def _seat(key: int | str, n_players: int) -> int:
    """A bot's seat from its index or its agent name (`player_1`)."""
    text = str(key).removeprefix("player_")
    if isinstance(key, bool) or not text.isdigit() or int(text) >= n_players:
        raise StratagemError(
            f"bots: {key!r} names no seat; expected 0..{n_players - 1} or player_0..player_"
            f"{n_players - 1}"
        )
    return int(text)
