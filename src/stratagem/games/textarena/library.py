"""TextArena's environments, imported only when a `textarena:` game is named (so stratagem works
without the `textarena` extra and says how to get it), and stepped so that a state never changes:
each step runs on a copy of the environment, with the global random generators TextArena draws
from set to the copy's own (saved after its last step) and given back afterwards, so a game is
the same whatever else runs in the process and replays exactly from its seed and moves."""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from stratagem.errors import StratagemError
from stratagem.games.textarena.offline import no_downloads

PREFIX = "textarena:"
"""How a game name says it is a TextArena environment id: `textarena:TicTacToe-v0`."""

MAX_PLAYERS = 15
"""The most seats a player count is searched up to (SecretMafia takes 6 to 15)."""

GAME_SENDER = -1
"""TextArena's sender id of the game's own messages (`textarena.GAME_ID`)."""


@functools.cache
def library() -> Any:
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # some envs print on import
            import textarena as module
    except ImportError:
        raise StratagemError(
            "TextArena games need the textarena package: pip install 'stratagem[textarena]'"
        ) from None
    return module


def env_ids() -> list[str]:
    """Every environment id TextArena registers."""
    return list(library().envs.registration.ENV_REGISTRY)


@dataclass(frozen=True)
class Message:
    """One line TextArena told a seat: who said it (a seat, or `GAME_SENDER`) and its kind."""

    sender: int
    text: str
    kind: str


@dataclass(frozen=True)
class Stepped:
    """A copy of the environment after one step, its generators' states, and what it said."""

    env: Any
    rng: tuple[Any, Any]
    messages: tuple[tuple[Message, ...], ...]
    """What each seat was told during the step, by seat."""
    invalid: str | None
    """TextArena's reason where it called the move invalid, else None."""


@contextlib.contextmanager
def _own_random(rng: tuple[Any, Any] | None) -> Iterator[list[tuple[Any, Any]]]:
    """Run with the global generators set to `rng` (None: as they are); yields a list that holds
    their states afterwards; restores the caller's generators either way."""
    outer = (random.getstate(), np.random.get_state())
    after: list[tuple[Any, Any]] = []
    try:
        if rng is not None:
            random.setstate(rng[0])
            np.random.set_state(rng[1])
        yield after
        after.append((random.getstate(), np.random.get_state()))
    finally:
        random.setstate(outer[0])
        np.random.set_state(outer[1])


def _drain(env: Any) -> tuple[tuple[Message, ...], ...]:
    """Take what TextArena queued for each seat (its own `get_observation` hands out only the
    acting seat's queue); private lines stay in their seat's queue only."""
    queues = env.state.observations
    out = []
    for seat in range(env.state.num_players):
        lines = queues.get(seat, [])
        out.append(tuple(Message(s, str(t), getattr(k, "name", str(k))) for s, t, k in lines))
        queues[seat] = []
    return tuple(out)


def reset(env_id: str, players: int, seed: int) -> Stepped:
    """A fresh environment of `players` seats, reset with `seed`."""
    ta = library()
    try:
        with (
            no_downloads(env_id),
            _own_random(None) as after,
            contextlib.redirect_stdout(io.StringIO()),
        ):
            random.seed(seed)
            np.random.seed(seed % 2**32)
            env = ta.make(env_id)
            env.reset(num_players=players, seed=seed)
    except StratagemError:
        raise
    except Exception as exc:  # the library's own errors: missing data, wrong player count
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StratagemError(
            f"game '{PREFIX}{env_id}' with {players} players: TextArena says: {first}"
        ) from None
    return Stepped(env, after[0], _drain(env), None)


def step(live: Any, rng: tuple[Any, Any], text: str) -> Stepped:
    """`text` played by the seat to act on a copy of the environment `live`, whose generators'
    states are `rng`; `live` is unchanged."""
    env = copy.deepcopy(live)
    reasons: list[str] = []
    state = env.state
    original = state.set_invalid_move

    def noted(*args: Any, **kwargs: Any) -> Any:
        reasons.append(str(kwargs.get("reason", args[0] if args else "")))
        return original(*args, **kwargs)

    state.set_invalid_move = noted
    try:
        with _own_random(rng) as after, contextlib.redirect_stdout(io.StringIO()):
            env.step(text)
    except Exception as exc:  # a move the environment cannot digest is an invalid move
        return Stepped(env, rng, (), f"TextArena failed on it ({type(exc).__name__}: {exc})")
    finally:
        del state.set_invalid_move
    invalid = (reasons[0] or "an invalid move") if reasons else None
    return Stepped(env, after[0], _drain(env), invalid)
