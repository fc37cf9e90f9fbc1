"""Per-game metrics of seed-003 ("counterfactual strategic reasoning"), from player 0's seat.

seed-003 §5 computes every metric per game from the LLM's perspective (player 0) and reports cells
as mean ± sample sd over runs. The paper's five metrics (`PAPER_METRICS`) follow the authors'
code where it differs from the prose: m is an existential suffix rule with the failure value N+1,
the PD-family flag compares with mirroring the opponent (§9 ambiguity 11), and efficiency divides
by the largest per-round token count (gotcha 4). The other metrics (`OUR_METRICS`) are NOT from
the paper (§5.7 lists them as recommended extensions); their docstrings say so.

Everything is a pure function of a `CounterfactualGame` (`studies.counterfactual.game`), so the
metrics can be recomputed on any stored or imported episode; the bot ceilings behind
exploitability are in `studies.counterfactual.ceilings`.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from typing import Literal

from stratagem.errors import StratagemError, unknown_name
from stratagem.games.matrix.solution import symmetric_equilibria
from stratagem.studies.counterfactual.ceilings import exploitability
from stratagem.studies.counterfactual.game import (
    CounterfactualGame,
    own_payoffs,
    stage_game,
    total_points,
)

FlagRule = Literal["auto", "mirror", "payoff", "nonnegative"]
"""How a round's comprehension flag is decided (seed-003 §5.2 and §9 ambiguity 11)."""

FLAG_RULES: tuple[str, ...] = ("auto", "mirror", "payoff", "nonnegative")

Denominator = Literal["max-round", "total"]
"""Efficiency denominator: the code's largest round (seed-003 gotcha 4) or our token sum."""

DENOMINATORS: tuple[str, ...] = ("max-round", "total")

PAPER_METRICS: tuple[str, ...] = ("points", "m", "cooperation", "efficiency", "validity")
"""The metrics the paper tabulates (seed-003 §5.1-5.5), as keys of `game_metrics`."""

OUR_METRICS: tuple[str, ...] = (
    "win_rate",
    "normalized_payoff",
    "equilibrium_distance",
    "exploitability",
    "efficiency_total",
)
"""Our extensions (seed-003 §5.7: not defined by the paper), as keys of `game_metrics`."""

_EPS = 1e-9
"""Float slack when comparing a count with tp * length."""


# -- the paper's metrics (seed-003 §5.1-5.5) ------------------------------------------------------


def comprehension_flags(game: CounterfactualGame, rule: FlagRule = "auto") -> list[bool]:
    """Per-round "player 0 did at least as well as it should" flags behind m (seed-003 §5.2).

    "mirror" is the code's PD-family rule, "payoff" the paper's wording, "nonnegative" the RPS
    rule; "auto" picks the code's rule for the game's size. They differ under Stag Hunt payoffs
    (§9 ambiguity 11), hence the choice.
    """
    if rule not in FLAG_RULES:
        raise unknown_name("comprehension flag rule", rule, FLAG_RULES)
    if rule == "auto":
        rule = "mirror" if len(game.labels) == 2 else "nonnegative"
    if rule == "payoff":
        # seed-003 §5.2 (paper): A's payoff is no worse than B's; an invalid round is (0, 0).
        return [u0 >= u1 for u0, u1 in game.payoffs]
    if rule == "nonnegative":
        # seed-003 §5.2 (RPS): f_t = [u0 >= 0]; an invalid round scores 0, a tie, so flag 1.
        return [u0 >= 0.0 for u0, _ in game.payoffs]
    k0, k1 = game.n_actions
    if k0 != k1:
        raise StratagemError(
            f"the mirror flag needs the same actions for both players, not {k0} and {k1}"
        )
    u = own_payoffs(game)
    flags = []
    for a, b in game.moves:
        if b is None:
            flags.append(False)  # seed-003 §5.2: an invalid opponent move gives flag 0
            continue
        # seed-003 §5.2 (code): f_t = [u0(a_t, b_t) >= u0(b_t, b_t)]; an invalid own move is
        # scored as the second action (the code's `else` branch).
        own = 1 if a is None else a
        flags.append(u[own][b] >= u[b][b])
    return flags


def comprehension_round(flags: Sequence[bool], tp: float = 0.9) -> int:
    """m, the first round from which player 0 holds its own in >= tp of the rest (seed-003 §5.2).

    A later suffix may fall below tp (existential suffix rule); N+1 means it never did.
    """
    if isinstance(tp, bool) or not isinstance(tp, int | float) or not 0.0 < tp <= 1.0:
        raise StratagemError(f"tp must be a share in (0, 1], got {tp!r}")
    n = len(flags)
    # seed-003 §5.2: m = min{s : mean(f_s..f_N) >= tp}, N+1 if none. Suffix sums from the end;
    # counts are compared with tp * length so 9 of 10 meets tp = 0.9 despite float rounding.
    suffix_hits = [0] * (n + 1)
    for t in range(n - 1, -1, -1):
        suffix_hits[t] = suffix_hits[t + 1] + int(bool(flags[t]))
    for s in range(1, n + 1):
        if suffix_hits[s - 1] >= tp * (n - s + 1) - _EPS:
            return s
    return n + 1


def cooperation_rate(game: CounterfactualGame) -> float | None:
    """Share of rounds in which player 0 chose the first (cooperative) action (seed-003 §5.3).

    The denominator counts invalid rounds, as the code does; None outside 2-action games, where
    the paper defines no cooperation.
    """
    if len(game.labels) != 2 or game.rounds == 0:
        return None
    # seed-003 §5.3: (#rounds with move == a) / T, T including invalid rounds.
    return sum(1 for a, _ in game.moves if a == 0) / game.rounds


def action_distribution(game: CounterfactualGame, player: int = 0) -> tuple[float, ...] | None:
    """Empirical share of each action over the moves `player` made (seed-003 §5.3, RPS).

    Missing moves are left out; None if the player made none.
    """
    if player not in (0, 1):
        raise StratagemError(f"player must be 0 or 1, got {player!r}")
    size = game.n_actions[player]
    counts = [0] * size
    for move in game.moves:
        m = move[player]
        if m is not None:
            counts[m] += 1
    total = sum(counts)
    if total == 0:
        return None
    return tuple(c / total for c in counts)


def efficiency(game: CounterfactualGame, denominator: Denominator = "max-round") -> float | None:
    """Points per thousand tokens (seed-003 §5.4).

    "max-round" is the code's (and the tables') denominator, the largest per-round token count
    (gotcha 4); "total" is our cumulative variant, points per kilo-token actually spent. None when
    a token count is unknown or the denominator is 0.
    """
    if denominator not in DENOMINATORS:
        raise unknown_name("efficiency denominator", denominator, DENOMINATORS)
    tokens = [t for t in game.tokens if t is not None]
    if len(tokens) != game.rounds or not tokens:
        return None
    # seed-003 §5.4: eff = TP / max_t(tokens_t) * 1000; ours: TP / sum_t(tokens_t) * 1000.
    tokens_used = max(tokens) if denominator == "max-round" else sum(tokens)
    if tokens_used == 0:
        return None
    return total_points(game) / tokens_used * 1000.0


def validity(game: CounterfactualGame) -> float:
    """Valid-outcome rate in percent (seed-003 §5.5); a game with no rounds is fully valid."""
    if game.rounds == 0:
        return 100.0
    # seed-003 §5.5: 100 * mean(valid_outcomes).
    return 100.0 * sum(game.valid) / game.rounds


# -- our extensions (seed-003 §5.7: NOT defined by the paper) ------------------------------------


def win_rate(game: CounterfactualGame) -> float | None:
    """Share of rounds player 0 scored more than player 1. Ours, not the paper's (seed-003 §5.7).

    Invalid rounds (0, 0) count as non-wins. None for a game with no rounds.
    """
    if game.rounds == 0:
        return None
    # seed-003 §5.7 (ours): #{t : u0_t > u1_t} / N, like the code's stored win rate.
    return sum(1 for u0, u1 in game.payoffs if u0 > u1) / game.rounds


def normalized_payoff(game: CounterfactualGame) -> float | None:
    """TP rescaled to [0, 1] between its stage-game bounds. Ours, not the paper's (seed-003 §5.7).

    The bounds are N times player 0's smallest and largest stage payoff (PD family 16..96, eq1
    -24..24, ba3 -72..72, §1.2-1.3), so variants with different magnitudes compare. Invalid rounds
    can push it below 0 where the smallest payoff is positive (§9 ambiguity 14).
    """
    values = [u for row in own_payoffs(game) for u in row]
    low, high = min(values), max(values)
    n = game.rounds
    if n == 0 or high == low:
        return None
    # seed-003 §5.7 (ours): (TP - min) / (max - min) with the bounds of §1.2-1.3.
    return (total_points(game) - n * low) / (n * high - n * low)


@functools.lru_cache(maxsize=64)
def _symmetric_equilibria(
    labels: tuple[str, ...], table: tuple[tuple[tuple[float, float], ...], ...]
) -> tuple[tuple[float, ...], ...] | None:
    """The symmetric equilibria of a stage game, cached: many games share one stage."""
    try:
        found = symmetric_equilibria(stage_game(labels, table))
    except StratagemError:
        return None  # not a symmetric game
    return tuple(tuple(float(x) for x in sigma) for sigma in found)


def equilibria(game: CounterfactualGame) -> tuple[tuple[float, ...], ...]:
    """The stage game's symmetric Nash equilibria (computed); () if it is not symmetric."""
    return _symmetric_equilibria(game.labels, game.table) or ()


def equilibrium_distance(game: CounterfactualGame) -> float | None:
    """Total-variation distance from player 0's play to the nearest symmetric Nash equilibrium.

    Ours, not the paper's (seed-003 §5.7). It measures the "equilibrium rigidity" the paper claims
    in words (§7.7 claim 4), e.g. uniform play in ba3, whose NE is (0.2, 0.2, 0.6). None without
    a valid move or for a stage game that is not symmetric.
    """
    p = action_distribution(game, 0)
    if p is None:
        return None
    equilibria = _symmetric_equilibria(game.labels, game.table)
    if not equilibria:
        return None
    # seed-003 §5.7 (ours): TV(p, sigma*) = 0.5 * sum_a |p(a) - sigma*(a)|, nearest sigma*.
    return min(
        0.5 * math.fsum(abs(x - y) for x, y in zip(p, sigma, strict=True)) for sigma in equilibria
    )


# -- aggregation ----------------------------------------------------------------------------------


def mean_sd(values: Sequence[float]) -> tuple[float, float | None, int]:
    """Mean, sample sd (ddof = 1, None below 2 values) and n of a cell (seed-003 §5, §5.8)."""
    if not values:
        raise StratagemError("mean_sd needs at least one value")
    xs = [float(v) for v in values]
    # seed-003 §5: cells are mean ± np.std(ddof=1) over runs.
    sd = statistics.stdev(xs) if len(xs) >= 2 else None
    return statistics.fmean(xs), sd, len(xs)


def game_metrics(
    game: CounterfactualGame,
    opponent: str | None = None,
    *,
    tp: float = 0.9,
    flag: FlagRule = "auto",
) -> dict[str, float | None]:
    """Every per-game metric by name: the paper's five, then ours (see the module docstring)."""
    return {
        "points": total_points(game),
        "m": float(comprehension_round(comprehension_flags(game, flag), tp)),
        "cooperation": cooperation_rate(game),
        "efficiency": efficiency(game, "max-round"),
        "efficiency_total": efficiency(game, "total"),
        "validity": validity(game),
        "win_rate": win_rate(game),
        "normalized_payoff": normalized_payoff(game),
        "equilibrium_distance": equilibrium_distance(game),
        "exploitability": None if opponent is None else exploitability(opponent, game),
    }
