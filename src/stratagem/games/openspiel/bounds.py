"""What OpenSpiel game strings stratagem accepts, checked before OpenSpiel sees them (issue 33).

OpenSpiel trusts its parameters: `goofspiel(num_cards=100000000)` took 18.7 GB, a negative size
is a C++ traceback or a segfault, `efg_game(filename=...)` reads any file and prints its lines.
So every parameter is checked against the game's own parameter specification, whose defaults say
what a sensible value looks like: its kind, its sign, and a bound relative to the default, so no
single parameter can make a game's states or moves explode. What parameters do together (every
split of 100 coins over 30 fields) is bounded afterwards, on the loaded game's sizes (`sizes`),
measured in a throwaway process (`sandbox`). The bounds are documented in docs/games.md.
"""

from __future__ import annotations

import difflib
import functools
import math
from collections.abc import Mapping
from typing import Any

from stratagem.errors import StratagemError
from stratagem.games.openspiel.loader import PREFIX, pyspiel, quiet

PARAMETER_GROWTH = 10
"""A whole-number parameter whose default is positive may be 1 to this many times the default."""
PARAMETER_FLOOR = 10
"""A whole-number parameter whose default is 0 or negative (a sentinel: "as the rules say") may
be its default or 0 to this."""
TEXT_FLOOR = 256
"""A text parameter (a board drawn as text) may be this long, or 10 times its default."""

MAX_ACTIONS = 100_000
"""Distinct moves of a game (OpenSpiel's games by default: at most 93,123, colored_trails)."""
MAX_GAME_LENGTH = 100_000
"""Moves in the longest game (by default at most 72,922, cursor_go)."""
MAX_PLAYERS = 16
"""Seats (by default at most 15, crazy_eights)."""
MAX_CHANCE_OUTCOMES = 10_000
"""Outcomes of one chance node (by default at most 7,776, yacht's five dice)."""
MAX_TENSOR_SIZE = 100_000
"""Numbers in an observation or information-state tensor (by default at most 7,440)."""

SIZES: dict[str, tuple[str, str]] = {
    "actions": ("MAX_ACTIONS", "{n} distinct moves"),
    "length": ("MAX_GAME_LENGTH", "a game {n} moves long"),
    "players": ("MAX_PLAYERS", "{n} players"),
    "chance": ("MAX_CHANCE_OUTCOMES", "{n} outcomes of a chance node"),
    "observation": ("MAX_TENSOR_SIZE", "an observation tensor of {n} numbers"),
    "information": ("MAX_TENSOR_SIZE", "an information-state tensor of {n} numbers"),
}
"""A loaded game's size (as `sandbox` measures it) -> the bound's name here, and how to say it.
The bound is looked up when checked, so a test may lower it."""


def bound(size: str) -> int:
    """The current bound on a size of `SIZES`."""
    value: int = globals()[SIZES[size][0]]
    return value


def _error(game_string: str, why: str) -> StratagemError:
    return StratagemError(f"game '{PREFIX}{game_string}': {why}")


@functools.cache
def game_types() -> dict[str, Any]:
    """OpenSpiel's registered games by name: their type, parameters and defaults included."""
    return {t.short_name: t for t in pyspiel().registered_games()}


def check_parameters(game_string: str) -> None:
    """Refuse, in one line, a game string OpenSpiel should not load: an unknown game or
    parameter, a value of the wrong kind, sign or size (module docstring)."""
    try:
        with quiet():
            parsed = pyspiel().game_parameters_from_string(game_string)
    except Exception as exc:  # pyspiel's SpielError: a bracket missing, a number too large
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise _error(game_string, f"the game string cannot be read ({first})") from None
    _check_game(game_string, dict(parsed))


def _check_game(game_string: str, parsed: dict[str, Any]) -> None:
    name = str(parsed.pop("name", ""))
    kind = game_types().get(name)
    if kind is None:
        close = difflib.get_close_matches(name, sorted(game_types()), n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(close)}?" if close else "stratagem games lists some"
        raise _error(game_string, f"OpenSpiel has no game '{name}': {hint}")
    spec = dict(kind.parameter_specification)
    for key, value in parsed.items():
        if key not in spec:
            known = f"parameters: {', '.join(sorted(spec))}" if spec else "it takes none"
            raise _error(game_string, f"OpenSpiel's {name} has no parameter '{key}' ({known})")
        why = _check_value(key, value, spec[key])
        if (
            why is None
            and key == "players"
            and not (kind.min_num_players <= value <= kind.max_num_players)
        ):
            why = (
                f": OpenSpiel's {name} takes {kind.min_num_players} to {kind.max_num_players} "
                "players"
            )
        if why is not None:
            raise _error(game_string, f"parameter {key}={value!r}{why}")
        if isinstance(value, Mapping):
            _check_game(game_string, dict(value))


def _check_value(key: str, value: Any, default: Any) -> str | None:
    """Why `value` is refused for the parameter `key` whose default is `default` (the text that
    follows "parameter key=value"), or None."""
    if isinstance(default, Mapping):  # a game in a game: turn_based_simultaneous_game(game=...)
        return None if isinstance(value, Mapping) else " must be a game (name(parameters))"
    if "file" in key.lower() or key.lower().endswith("root"):
        return " names a file to read, which a game string may not (OpenSpiel prints its lines)"
    if isinstance(default, bool):
        return None if isinstance(value, bool) else " must be True or False"
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            return " must be a whole number"
        return _check_integer(key, value, default)
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return " must be a number"
        return None if math.isfinite(value) else " must be a finite number"
    if not isinstance(value, str):
        return " must be text"
    most = max(PARAMETER_GROWTH * len(default), TEXT_FLOOR)
    return None if len(value) <= most else f" is longer than {most} characters"


def _check_integer(key: str, value: int, default: int) -> str | None:
    """Sign and size of a whole-number parameter (module docstring); a seed is any number."""
    if "seed" in key.lower() or value == default:
        return None if abs(value) < 2**31 else " is over the bound of 2**31"
    if default > 0:
        most = PARAMETER_GROWTH * default
        if value < 1:
            return " must be at least 1"
        if value > most:
            return (
                f" is over the bound of {most} ({PARAMETER_GROWTH} x its default {default}; "
                "bounds: docs/games.md)"
            )
        return None
    if 0 <= value <= PARAMETER_FLOOR:
        return None
    return f" must be {default} (its default) or 0 to {PARAMETER_FLOOR}"


def check_sizes(game_string: str, sizes: Mapping[str, int]) -> None:
    """Refuse a loaded game whose sizes (`SIZES`, as `sandbox` measured them) are out of bounds:
    too large to play, or not a game at all (no move, no player)."""
    for size, (_, said) in SIZES.items():
        n = sizes.get(size)
        if n is None:
            continue
        if n > bound(size):
            raise _error(
                game_string,
                f"{said.format(n=n)} is over the bound of {bound(size)} (bounds: docs/games.md); "
                "choose smaller parameters",
            )
        if n < (0 if size == "chance" else 1):
            raise _error(game_string, f"{said.format(n=n)}: that is no game to play")
