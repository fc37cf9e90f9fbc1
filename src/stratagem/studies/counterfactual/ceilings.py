"""The best any policy can score against seed-003's bots, and how far a game fell short of it.

Ours, not the paper's (seed-003 §5.7 asks for "the opponent-specific ceiling"). Ceilings are
computed from the bots' own code and the stage game, never typed in. A ceiling depends only on the
stage game, the bot, the number of rounds and (for the best responders) the bot's realised
opening, so it is computed once per such key and shared by the thousands of games that have it.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Hashable
from typing import TypeVar

from stratagem.errors import StratagemError
from stratagem.strategies.counterfactual_bots import (
    BestResponseToLast,
    BestResponseToMode,
    Pattern,
    SingleRoundEquilibrium,
    best_responses,
)
from stratagem.strategies.registry import get_strategy
from stratagem.studies.counterfactual.game import CounterfactualGame, stage_game, total_points

_State = TypeVar("_State", bound=Hashable)


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
    opening = game.moves[0][1] if game.moves else None
    return _ceiling(opponent, game.labels, game.table, game.rounds, opening)


@functools.lru_cache(maxsize=4096)
def _ceiling(
    opponent: str,
    labels: tuple[str, ...],
    table: tuple[tuple[tuple[float, float], ...], ...],
    n: int,
    opening: int | None,
) -> float | None:
    """`bot_ceiling` by its key: the stage game, the bot, N and the bot's realised opening."""
    try:
        bot = get_strategy(opponent)
        stage = stage_game(labels, table)
        bot.reset(stage, 1)
    except StratagemError:
        return None
    k0 = len(labels)
    u0 = [[cell[0] for cell in row] for row in table]
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
    if n == 0 or opening is None:
        return None
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
