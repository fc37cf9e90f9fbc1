"""Play one repeated match between two strategies, as fast as plain Python allows.

It plays the matches that `lockstep.play_matches` cannot play on arrays, and is the reference the
lockstep engine is tested against, so it works on action indices and the stage game's nested-list
payoff table instead of building `State` objects. A test checks it against the generic engine
(`RepeatedGame`) move for move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from stratagem.errors import StratagemError
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.base import Strategy


@dataclass(frozen=True)
class MatchResult:
    actions: tuple[tuple[int, ...], tuple[int, ...]]
    """Each player's action indices, round by round."""
    scores: tuple[float, float]
    """Each player's total payoff."""

    @property
    def turns(self) -> int:
        return len(self.actions[0])

    def cooperation(self, player: int) -> float:
        """Share of rounds in which `player` took action 0 (the cooperative role)."""
        moves = self.actions[player]
        return moves.count(0) / len(moves) if moves else 0.0


def play_match(
    first: Strategy,
    second: Strategy,
    stage: NormalFormGame,
    turns: int,
    rng: random.Random,
    noise: float = 0.0,
) -> MatchResult:
    """Play `turns` rounds; with `noise`, each chosen action is flipped with that probability.

    As in the Axelrod library, a flipped action is what both players see in the history.
    """
    check_match(stage, turns, noise)
    first.reset(stage, 0)
    second.reset(stage, 1)
    table = stage.table
    a_moves: list[int] = []
    b_moves: list[int] = []
    a_total = b_total = 0.0
    act_a, act_b = first.act, second.act
    if noise:
        a_n, b_n = stage.sizes
    for _ in range(turns):
        a = act_a(a_moves, b_moves, rng)
        b = act_b(b_moves, a_moves, rng)
        if noise:
            if rng.random() < noise:
                a = _flip(a, a_n, rng)
            if rng.random() < noise:
                b = _flip(b, b_n, rng)
        a_moves.append(a)
        b_moves.append(b)
        pa, pb = table[a][b]
        a_total += pa
        b_total += pb
    return MatchResult((tuple(a_moves), tuple(b_moves)), (a_total, b_total))


def check_match(stage: NormalFormGame, turns: int, noise: float) -> None:
    """Refuse what no match can be: not 2 players, no turns, noise outside [0, 1]."""
    if stage.n_players != 2:
        raise StratagemError(f"matches need a 2-player game; '{stage.name}' has {stage.n_players}")
    if turns < 1:
        raise StratagemError(f"turns must be >= 1, got {turns}")
    if not 0.0 <= noise <= 1.0:
        raise StratagemError(f"noise must be in [0, 1], got {noise}")


def _flip(action: int, n_actions: int, rng: random.Random) -> int:
    """The other action of a 2-action game; a uniformly drawn different one otherwise."""
    if n_actions == 2:
        return 1 - action
    other = rng.randrange(n_actions - 1)
    return other if other < action else other + 1
