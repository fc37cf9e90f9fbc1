"""The bounds of a game's size-like options (rounds, players, points, characters), declared where
the option is: `pie: Annotated[int, Bounds(1, MAX_PIE)] = 100` in the signature of the game's
factory or constructor, and checked on every call by `@bounded("ultimatum")` (issue 33).

A game's options are its factory's keyword parameters (`CatalogEntry.options`), so the bound sits
in the same declaration: wherever a game is built (an experiment file's `game_options`, `stratagem
play`, `stratagem.env`, the viewer's play page, a plugin calling the class), a value out of range
is a one-line error naming the game, the option and the range, instead of a game that builds
a billion offers or never finishes a round. The bounds are far above what the studies use and
far below what breaks; each says why where it is declared.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ParamSpec, TypeVar

from stratagem.errors import StratagemError

P = ParamSpec("P")
R = TypeVar("R")

MAX_ROUNDS = 10_000
"""Rounds (turns, clue rounds) of one game: the experiment file's own bound on `rounds:`. Every
game keeps its whole history in each observation, so its work grows with the square of its
length; at this bound the slowest catalog game (npd3) plays in about two minutes without a
model, and no model's context holds the history of one."""
MAX_CHARS = 10_000
"""Longest free-text move (a clue, a message): ten times the largest default (1,000). Agents
ask for max_chars / 3 tokens, which stays under every provider's output cap."""


@dataclass(frozen=True)
class Bounds:
    """The range of an integer option: a whole number from `low` to `high`, `what` says what
    it is in the error ("an integer", "a seat")."""

    low: int
    high: int
    what: str = "an integer"

    def check(self, where: str, value: object) -> int:
        """`value` if it is an int (not a bool) in range, else a one-line error at `where`."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise StratagemError(f"{where} must be {self.what} from {self._range()}, got {value!r}")
        if not self.low <= value <= self.high:
            raise StratagemError(f"{where} must be {self.what} from {self._range()}, got {value}")
        return value

    def _range(self) -> str:
        return f"{self.low:,} to {self.high:,}"


Rounds = Annotated[int, Bounds(1, MAX_ROUNDS)]
"""A game's length in rounds or turns, as an option declares it."""
Chars = Annotated[int, Bounds(1, MAX_CHARS)]
"""A free-text move's longest length, as an option declares it."""


def declared(factory: Callable[..., Any]) -> dict[str, Bounds]:
    """The bounded options of a game's factory (a function or a class), by name."""
    if isinstance(factory, type):  # the constructor it runs, its own or inherited
        factory = next(vars(c)["__init__"] for c in factory.__mro__ if "__init__" in vars(c))
    return {name: bounds for name, (bounds, _) in _declared(factory).items()}


@functools.cache
def _declared(function: Callable[..., Any]) -> dict[str, tuple[Bounds, tuple[type, ...]]]:
    """Each bounded parameter's `Bounds` and the other kinds of value it takes unchecked (None,
    a seat's name): those are their own option's rules. Resolved on first use, once every name
    of the annotations is defined."""
    hints = typing.get_type_hints(function, include_extras=True)
    out = {}
    for name, hint in hints.items():
        if typing.get_origin(hint) is not typing.Annotated:
            continue
        found = [m for m in hint.__metadata__ if isinstance(m, Bounds)]
        if found:
            bare = typing.get_args(hint)[0]
            kinds = typing.get_args(bare) if _is_union(bare) else (bare,)
            out[name] = (found[0], tuple(k for k in kinds if isinstance(k, type) and k is not int))
    return out


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def check_options(game: str, function: Callable[..., Any], arguments: Mapping[str, Any]) -> None:
    """A one-line error for the first argument out of its declared bounds."""
    for name, (bounds, others) in _declared(function).items():
        if name not in arguments:
            continue
        value = arguments[name]
        if isinstance(value, others) and not isinstance(value, bool):
            continue  # None, or a name: the option's own rules judge it
        bounds.check(f"{game}: {name}", value)


def bounded(game: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Check a factory's or constructor's declared `Bounds` on every call; `game` names the game
    in the error. The signature is kept, so the options a catalog entry lists stay the same."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                arguments = signature.bind(*args, **kwargs).arguments
            except TypeError:
                return function(*args, **kwargs)  # the call's own error, as Python words it
            check_options(game, function, arguments)
            return function(*args, **kwargs)

        return checked

    return decorate
