"""Per-game metrics of seed-003 ("counterfactual strategic reasoning"), from player 0's seat.

seed-003 §5 computes every metric per game from the LLM's perspective (player 0) and reports cells
as mean ± sample sd over runs. The paper's five metrics (`PAPER_METRICS`) follow the authors'
code where it differs from the prose: m is an existential suffix rule with the failure value N+1,
the PD-family flag compares with mirroring the opponent (§9 ambiguity 11), and efficiency divides
by the largest per-round token count (gotcha 4). The other metrics (`OUR_METRICS`) are NOT from
the paper (§5.7 lists them as recommended extensions); their docstrings say so.

Everything is a pure function of a `CounterfactualGame`, so the metrics can be recomputed on any
stored or imported episode. Ceilings against the bots are computed from the bots' own code and the
stage game, never typed in.
"""

from __future__ import annotations

import functools
import math
import random
import statistics
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np

from stratagem.errors import StratagemError, unknown_name
from stratagem.experiments.store import EpisodeRecord, RoundRecord
from stratagem.games.catalog import get_stage
from stratagem.games.normal_form import NormalFormGame
from stratagem.games.solution import symmetric_equilibria
from stratagem.strategies.counterfactual_bots import (
    BestResponseToLast,
    BestResponseToMode,
    Pattern,
    SingleRoundEquilibrium,
    best_responses,
)
from stratagem.strategies.registry import get_strategy

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

_State = TypeVar("_State", bound=Hashable)


# -- the game record ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CounterfactualGame:
    """One finished repeated game from player 0's seat (the LLM under test, seed-003 §5).

    `table[i][j]` is (u0, u1) when player 0 plays i and player 1 plays j. A missing move is None;
    a round with a missing move is invalid and scores (0, 0) (seed-003 §3.2 step 4).
    """

    labels: tuple[str, ...]
    table: tuple[tuple[tuple[float, float], ...], ...]
    moves: tuple[tuple[int | None, int | None], ...]
    payoffs: tuple[tuple[float, float], ...]
    valid: tuple[bool, ...]
    tokens: tuple[int | None, ...]

    def __post_init__(self) -> None:
        # Checked once here so that every metric can trust the shapes.
        k0 = len(self.labels)
        if k0 < 1 or len(self.table) != k0:
            raise StratagemError(
                f"the payoff table has {len(self.table)} rows for {k0} labels: they must match"
            )
        k1 = len(self.table[0])
        if k1 < 1 or any(len(row) != k1 for row in self.table):
            raise StratagemError("the payoff table's rows must all have the same, non-zero length")
        if any(len(cell) != 2 for row in self.table for cell in row):
            raise StratagemError("every payoff-table cell must be a pair (u0, u1)")
        n = len(self.moves)
        for what, seq in (
            ("payoffs", self.payoffs),
            ("valid", self.valid),
            ("tokens", self.tokens),
        ):
            if len(seq) != n:
                raise StratagemError(f"{n} rounds of moves but {len(seq)} of {what}")
        for t, ((a, b), pay, ok) in enumerate(
            zip(self.moves, self.payoffs, self.valid, strict=True)
        ):
            for who, move, size in ((0, a, k0), (1, b, k1)):
                if move is not None and not 0 <= move < size:
                    raise StratagemError(
                        f"round {t + 1}: player {who}'s move {move} is not an index 0..{size - 1}"
                    )
            if ok and (a is None or b is None):
                raise StratagemError(f"round {t + 1} is marked valid but a move is missing")
            # seed-003 §3.2 step 4: an invalid round scores (0, 0).
            if not ok and tuple(pay) != (0.0, 0.0):
                raise StratagemError(f"round {t + 1} is invalid, so it must pay (0, 0), not {pay}")

    @property
    def rounds(self) -> int:
        """N, the number of rounds played, invalid ones included."""
        return len(self.moves)

    @property
    def n_actions(self) -> tuple[int, int]:
        """Number of actions of player 0 and of player 1."""
        return len(self.labels), len(self.table[0])

    @classmethod
    def from_records(
        cls, episode: EpisodeRecord, rounds: Sequence[RoundRecord]
    ) -> CounterfactualGame:
        """Build the game from a stored episode and its rounds (the store is the source of truth).

        Labels and payoffs come from the episode, or from the catalog game of the same name when
        it did not store them. Actions are labels and become indices; a missing move (None) makes
        the round invalid. Missing round payoffs are read off the table; missing tokens are None.
        """
        where = f"episode '{episode.id}'"
        labels, tensor = _episode_game(episode)
        index = [{label: i for i, label in enumerate(ls)} for ls in labels]
        table = tuple(
            tuple((float(tensor[i][j][0]), float(tensor[i][j][1])) for j in range(len(labels[1])))
            for i in range(len(labels[0]))
        )
        moves: list[tuple[int | None, int | None]] = []
        payoffs: list[tuple[float, float]] = []
        valid: list[bool] = []
        tokens: list[int | None] = []
        for r in sorted(rounds, key=lambda r: r.round):
            at = f"{where} round {r.round}"
            if r.episode_id != episode.id:
                raise StratagemError(f"{at}: the round belongs to episode '{r.episode_id}'")
            if len(r.actions) != 2:
                raise StratagemError(f"{at}: expected 2 actions, got {len(r.actions)}")
            move: list[int | None] = []
            for p, action in enumerate(r.actions):
                if action is None:
                    move.append(None)
                elif isinstance(action, str) and action in index[p]:
                    move.append(index[p][action])
                else:
                    raise StratagemError(
                        f"{at}: {action!r} is not an action of player {p} ({', '.join(labels[p])})"
                    )
            a, b = move
            ok = bool(r.valid) and a is not None and b is not None
            if not ok:
                pay = (0.0, 0.0)  # seed-003 §3.2 step 4: an invalid round scores (0, 0)
            elif r.payoffs is not None:
                if len(r.payoffs) != 2:
                    raise StratagemError(f"{at}: expected 2 payoffs, got {len(r.payoffs)}")
                pay = (float(r.payoffs[0]), float(r.payoffs[1]))
            else:
                assert a is not None and b is not None  # ok implies both moves
                pay = table[a][b]
            moves.append((a, b))
            payoffs.append(pay)
            valid.append(ok)
            tokens.append(r.tokens[0] if r.tokens else None)
        return cls(
            labels=tuple(labels[0]),
            table=table,
            moves=tuple(moves),
            payoffs=tuple(payoffs),
            valid=tuple(valid),
            tokens=tuple(tokens),
        )


def _episode_game(
    episode: EpisodeRecord,
) -> tuple[tuple[tuple[str, ...], ...], list[list[list[float]]]]:
    """Labels and payoff tensor of an episode's stage game: stored, or else from the catalog."""
    where = f"episode '{episode.id}'"
    labels = episode.labels
    tensor = episode.game_payoffs
    if labels is None or tensor is None:
        try:
            stage = get_stage(episode.game)
        except StratagemError as exc:
            raise StratagemError(
                f"{where} stores no labels or payoffs, and its game is not in the catalog: {exc}"
            ) from None
        labels = stage.labels if labels is None else labels
        tensor = stage.payoffs.tolist() if tensor is None else tensor
    if len(labels) != 2:
        raise StratagemError(f"{where}: seed-003 metrics need a 2-player game, not {len(labels)}")
    try:
        array = np.asarray(tensor, dtype=float)
    except (TypeError, ValueError):
        raise StratagemError(f"{where}: the stored payoffs are not a numeric tensor") from None
    shape = (len(labels[0]), len(labels[1]), 2)
    if array.shape != shape:
        raise StratagemError(f"{where}: payoff tensor has shape {array.shape}, labels need {shape}")
    return tuple(tuple(ls) for ls in labels), array.tolist()


@functools.lru_cache(maxsize=64)
def _stage(
    labels: tuple[str, ...], table: tuple[tuple[tuple[float, float], ...], ...]
) -> NormalFormGame:
    """The stage game as a `NormalFormGame`, so the bots and the solver can read it.

    Player 1 gets player 0's labels when the action counts match: every seed-003 game is
    symmetric with the same words for both players (§1.2-1.3).
    """
    k1 = len(table[0])
    other = labels if k1 == len(labels) else tuple(f"action {j}" for j in range(k1))
    return NormalFormGame("counterfactual", [labels, other], [[list(c) for c in r] for r in table])


def _u0(game: CounterfactualGame) -> list[list[float]]:
    return [[cell[0] for cell in row] for row in game.table]


# -- the paper's metrics (seed-003 §5.1-5.5) ------------------------------------------------------


def total_points(game: CounterfactualGame) -> float:
    """TP, player 0's cumulative reward; invalid rounds score 0 (seed-003 §5.1)."""
    # seed-003 §5.1: TP = sum_t u0(a^t).
    return math.fsum(u0 for u0, _ in game.payoffs)


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
    u = _u0(game)
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
    values = [u for row in _u0(game) for u in row]
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
        found = symmetric_equilibria(_stage(labels, table))
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


def _best_total(
    rounds: int,
    actions: int,
    u0: list[list[float]],
    opening: int,
    start: _State,
    reply: Callable[[_State], int],
    advance: Callable[[_State, int], _State],
) -> float:
    """Best total of player 0 against a deterministic bot whose move is a function of a state.

    Exact dynamic programming: value(t, state) = max_a u0(a, b_t) + value(t + 1, advance(state, a)),
    with b_1 = the bot's realised opening and b_t = reply(state) afterwards.
    """

    @functools.cache
    def value(t: int, state: _State) -> float:
        if t == rounds:
            return 0.0
        b = opening if t == 0 else reply(state)
        return max(u0[a][b] + value(t + 1, advance(state, a)) for a in range(actions))

    return value(0, start)


def bot_ceiling(opponent: str, game: CounterfactualGame) -> float | None:
    """The best total any policy of player 0 could score against a seed-003 bot over N rounds.

    Ours, not the paper's (seed-003 §5.7 asks for "the opponent-specific ceiling"; the §1.2-1.3
    values are checked in the tests, not used here). SREP: the best expectation, since it draws
    every round. PP: the best reply to each round's pattern move. The best responders: exact
    dynamic programming from the realised round-1 move, their only random one. None for any other
    opponent (an LLM, classic TitForTat, an unknown name) or a missing opening.
    """
    try:
        bot = get_strategy(opponent)
        stage = _stage(game.labels, game.table)
        bot.reset(stage, 1)
    except StratagemError:
        return None
    n = game.rounds
    k0 = len(game.labels)
    u0 = _u0(game)
    if isinstance(bot, SingleRoundEquilibrium):
        sigma = bot.probabilities
        # seed-003 §5.7 via §1.2-1.3: N * max_a sum_b sigma(b) u0(a, b), an expectation.
        per_round = max(math.fsum(s * u0[a][b] for b, s in enumerate(sigma)) for a in range(k0))
        # Rounded so that the RPS value is 0, not the 1e-16 left by the drawn probabilities.
        return n * round(per_round, 12)
    if isinstance(bot, Pattern):
        rng = random.Random(0)  # unused: the pattern player is deterministic
        # seed-003 §5.7 via §1.3: sum_t max_a u0(a, pattern[t mod period]).
        return math.fsum(
            max(u0[a][bot.act([0] * t, [0] * t, rng)] for a in range(k0)) for t in range(n)
        )
    if not isinstance(bot, BestResponseToLast | BestResponseToMode):
        return None
    if n == 0 or game.moves[0][1] is None:
        return None
    opening = game.moves[0][1]
    assert opening is not None
    replies = best_responses(stage, 1)
    if isinstance(bot, BestResponseToLast):
        # seed-003 §2.2: from round 2 the bot best-responds to player 0's last move.
        return _best_total(n, k0, u0, opening, -1, lambda last: replies[last], lambda _, a: a)

    # seed-003 §2.2: from round 2 the bot best-responds to player 0's modal move, ties to the
    # lowest index (list.index returns the first maximum).
    def mode_reply(counts: tuple[int, ...]) -> int:
        return replies[counts.index(max(counts))]

    def count(counts: tuple[int, ...], a: int) -> tuple[int, ...]:
        return (*counts[:a], counts[a] + 1, *counts[a + 1 :])

    return _best_total(n, k0, u0, opening, (0,) * k0, mode_reply, count)


def exploitability(opponent: str, game: CounterfactualGame) -> float | None:
    """TP minus the bot-specific ceiling. Ours, not the paper's (seed-003 §5.7).

    0 is perfect exploitation and negative values are points left on the table. Against SREP the
    ceiling is an expectation, so a lucky game can be positive. None where `bot_ceiling` is.
    """
    ceiling = bot_ceiling(opponent, game)
    if ceiling is None:
        return None
    # seed-003 §5.7: exploitability = TP - the opponent-specific ceiling.
    return total_points(game) - ceiling


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
