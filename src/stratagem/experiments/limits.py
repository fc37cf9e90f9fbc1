"""Upper bounds on every count a user can give, so a typo (an extra zero, `1e20`) is a one-line
error instead of a run that grows until the machine kills it or never stops spending.

The bounds are far above any study's needs (seed-003 plays 24 rounds; the thesis 20; seed-004's
largest grid is a few thousand games) and far below what breaks: SQLite stores integers up to
2^63 - 1, and a grid's size must be computable and its episodes listable.
"""

from __future__ import annotations

from stratagem.errors import StratagemError

MAX_ROUNDS = 10_000
MAX_TURNS = 1_000_000
"""Turns of one tournament match (rule-based play is cheap: a million turns takes seconds)."""
MAX_REPETITIONS = 10_000
MAX_GENERATIONS = 1_000_000
MAX_EPISODES = 1_000_000
"""Episodes of one experiment file."""
MAX_CONCURRENCY = 10_000
MAX_MATCH_ROUNDS = 10_000_000
"""Rounds of rule-based play in one tournament or Moran process: its matches times their turns.
A tournament stores every round (about 70 bytes each, so at most about 700 MB of store) and
plays ten million in about two minutes on a 2-core machine; the README's tournament plays 12,000."""
MAX_POPULATION = 1_000
"""Individuals of one Moran process (`moran --size` times the strategies): every generation
plays each pair of them, so its work grows with the square."""
SQLITE_MAX = 2**63 - 1
SQLITE_MIN = -(2**63)


def check_range(what: str, value: int, low: int, high: int) -> int:
    """`value` if low <= value <= high, else a one-line error naming `what`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise StratagemError(
            f"{what} must be a whole number from {low:,} to {high:,}, got {value!r}"
        )
    return value


def check_storable(what: str, value: int) -> int:
    """An integer the store can hold (SQLite's 64-bit range)."""
    return check_range(what, value, SQLITE_MIN, SQLITE_MAX)


def check_rounds(what: str, matches: int, turns: int, fewer: str) -> int:
    """`matches * turns` if within `MAX_MATCH_ROUNDS`, else a one-line error that gives the
    product and says what to lower (`fewer`: the options that set it)."""
    rounds = matches * turns
    if rounds > MAX_MATCH_ROUNDS:
        raise StratagemError(
            f"{what}: {matches:,} matches x {turns:,} turns = {rounds:,} rounds, more than the "
            f"{MAX_MATCH_ROUNDS:,} one may play; use fewer {fewer}"
        )
    return rounds
