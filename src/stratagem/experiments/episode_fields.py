"""The checks every field of an episode line goes through: types, ranges, seats and payoff tensors,
each failure an `EpisodeFormatError` naming the field's JSON path (docs/episode-format.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments.limits import SQLITE_MAX, SQLITE_MIN


class EpisodeFormatError(StratagemError):
    """A line that does not follow the format; `field` is a JSON path such as rounds[3].payoffs."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) <= 40 else "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def bad_value(path: str, expected: str, value: Any) -> EpisodeFormatError:
    return EpisodeFormatError(path, f"expected {expected}, got {kind_of(value)}")


def as_object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad_value(path, "an object", value)
    return value


def as_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise bad_value(path, "a list", value)
    return value


def as_str(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise bad_value(path, "a non-empty string", value)
    return value


def opt_str(value: Any, path: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise bad_value(path, "a string or null", value)
    return value


def as_int(value: Any, path: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_value(path, "an integer", value)
    if minimum is not None and value < minimum:
        raise EpisodeFormatError(path, f"expected an integer >= {minimum}, got {value}")
    return storable(value, path)


def storable(value: int, path: str) -> int:
    """An integer the store can hold: SQLite's are 64-bit."""
    if not SQLITE_MIN <= value <= SQLITE_MAX:
        raise EpisodeFormatError(
            path, f"{value} is beyond the 64-bit integers the store holds (|x| < 2^63)"
        )
    return value


def opt_int(value: Any, path: str, minimum: int | None = None) -> int | None:
    return None if value is None else as_int(value, path, minimum)


def as_number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise bad_value(path, "a finite number", value)
    return float(value)


def opt_number(value: Any, path: str) -> float | None:
    return None if value is None else as_number(value, path)


def as_bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise bad_value(path, "true or false", value)
    return value


def opt_bool(value: Any, path: str) -> bool | None:
    return None if value is None else as_bool(value, path)


def as_player(value: Any, path: str, n: int) -> int:
    p = as_int(value, path, 0)
    if p >= n:
        raise EpisodeFormatError(path, f"player {p} does not exist (players are 0..{n - 1})")
    return p


def opt_player(value: Any, path: str, n: int) -> int | None:
    return None if value is None else as_player(value, path, n)


def as_numbers(value: Any, path: str, n: int) -> tuple[float, ...]:
    values = as_list(value, path)
    if len(values) != n:
        raise EpisodeFormatError(path, f"expected {n} numbers, got {len(values)}")
    return tuple(as_number(x, f"{path}[{i}]") for i, x in enumerate(values))


def check_tensor(value: Any, path: str, sizes: Sequence[int], n: int) -> None:
    """A payoff tensor: nested lists of shape (sizes..., n) holding finite numbers."""
    if not sizes:
        as_numbers(value, path, n)
        return
    rows = as_list(value, path)
    if len(rows) != sizes[0]:
        raise EpisodeFormatError(path, f"expected {sizes[0]} entries, got {len(rows)}")
    for i, row in enumerate(rows):
        check_tensor(row, f"{path}[{i}]", sizes[1:], n)
