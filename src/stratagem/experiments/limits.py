"""Upper bounds on every count a user can give, so a typo (an extra zero, `1e20`) is a one-line
error instead of a run that grows until the machine kills it or never stops spending.

The bounds are far above any study's needs (seed-003 plays 24 rounds; the thesis 20; seed-004's
largest grid is a few thousand games) and far below what breaks: SQLite stores integers up to
2^63 - 1, and a grid's size must be computable and its episodes listable.
"""

from __future__ import annotations

from stratagem.errors import StratagemError
from stratagem.games.bounds import MAX_ROUNDS as MAX_ROUNDS  # a game's own bound, declared there

MAX_TURNS = 1_000_000
"""Turns of one tournament match (rule-based play is cheap: a million turns takes seconds)."""
MAX_REPETITIONS = 10_000
MAX_GENERATIONS = 1_000_000
MAX_EPISODES = 1_000_000
"""Episodes of one experiment file."""
MAX_CONCURRENCY = 10_000
MAX_ENDPOINTS = 1_024
"""Servers in one model's pool (`endpoints:` or an `endpoints_file`): a thousand GPUs, each its
own server. Each one is health-checked, routed over for every call and shown in the plan and
the progress lines, so a runaway file (a job appending its hosts on every restart) stops here."""
MAX_MATCH_ROUNDS = 10_000_000
"""Rounds of rule-based play in one tournament or Moran process: its matches times their turns.
A tournament stores every round (about 70 bytes each, so at most about 700 MB of store) and
plays ten million in about two minutes on a 2-core machine; the README's tournament plays 12,000."""
MAX_POPULATION = 1_000
"""Individuals of one Moran process (`moran --size` times the strategies): every generation
plays each pair of them, so its work grows with the square."""
SQLITE_MAX = 2**63 - 1
SQLITE_MIN = -(2**63)
MAX_SEED = SQLITE_MAX
"""Seeds are whole numbers from 0 to this: any of them can be an experiment's `seeds:` entry and
be stored; NumPy and Gymnasium refuse negative seeds."""
MAX_BOOTSTRAP = 100_000
"""Bootstrap replicates of one interval: 50 times the studies' 2,000. Each replicate is kept,
so a billion (an extra zero or three) filled 5 GB within a minute."""
MAX_FOLDS = 100
"""Cross-validation folds: each refits a model on a grid of parameters."""
MAX_OPTION_ITEMS = 100
"""Values of one list-valued analysis option (a sensitivity table's rows)."""
MAX_PER_DECISION = 100
"""Model calls one agent setting may ask for in one decision (self-consistency samples, re-asks,
debate turns, tool calls): the studies use at most 10, and each call is paid for."""


def check_range(what: str, value: int, low: int, high: int) -> int:
    """`value` if low <= value <= high, else a one-line error naming `what`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise StratagemError(
            f"{what} must be a whole number from {low:,} to {high:,}, got {value!r}"
        )
    return value


def check_seed(what: str, value: object) -> int:
    """A seed: a whole number from 0 to `MAX_SEED` (not a bool, a float or a string)."""
    return check_range(what, value, 0, MAX_SEED)  # type: ignore[arg-type]  # checked there


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
