"""One finished seed-003 game from player 0's seat, as every metric of the study reads it.

seed-003 §5 computes every metric per game from the LLM's perspective (player 0). A
`CounterfactualGame` holds the stage game's labels and payoff table and the game's moves as action
indices; it is built from a stored or imported episode, whose stage game `analysis.games` resolves.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from stratagem.analysis.games import resolve_game
from stratagem.errors import StratagemError
from stratagem.experiments.store import EpisodeRecord, RoundRecord
from stratagem.games.matrix.normal_form import NormalFormGame


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

    @functools.cached_property
    def points(self) -> float:
        """TP (`total_points`), summed once: several metrics and the paired analysis use it."""
        # seed-003 §5.1: TP = sum_t u0(a^t).
        return math.fsum(u0 for u0, _ in self.payoffs)

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
        labels, table, index = _episode_game(episode)
        moves: list[tuple[int | None, int | None]] = []
        payoffs: list[tuple[float, float]] = []
        valid: list[bool] = []
        tokens: list[int | None] = []
        # A game has a handful of distinct action profiles: each is checked and indexed once.
        seen: dict[tuple[object, ...], tuple[int | None, int | None]] = {}
        for r in sorted(rounds, key=lambda r: r.round):
            if r.episode_id != episode.id:
                raise StratagemError(
                    f"{where} round {r.round}: the round belongs to episode '{r.episode_id}'"
                )
            actions = tuple(r.actions)
            try:
                move = seen.get(actions)
            except TypeError:  # a structured action (a dict) is no label anyway
                move = None
            if move is None:
                move = seen[actions] = _indices(actions, labels, index, f"{where} round {r.round}")
            a, b = move
            ok = bool(r.valid) and a is not None and b is not None
            if not ok:
                pay = (0.0, 0.0)  # seed-003 §3.2 step 4: an invalid round scores (0, 0)
            elif r.payoffs is not None:
                if len(r.payoffs) != 2:
                    raise StratagemError(
                        f"{where} round {r.round}: expected 2 payoffs, got {len(r.payoffs)}"
                    )
                u0, u1 = r.payoffs
                # The stored pair itself when it holds floats (shared by every round that
                # scored the same): 200,000 rounds need no 200,000 new pairs.
                pay = (
                    r.payoffs if type(u0) is float and type(u1) is float else (float(u0), float(u1))
                )
            else:
                assert a is not None and b is not None  # ok implies both moves
                pay = table[a][b]
            moves.append(move)
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


def _indices(
    actions: tuple[object, ...],
    labels: Sequence[Sequence[str]],
    index: Sequence[dict[str, int]],
    at: str,
) -> tuple[int | None, int | None]:
    """A round's two moves as action indices (None: no move), or why they are not."""
    if len(actions) != 2:
        raise StratagemError(f"{at}: expected 2 actions, got {len(actions)}")
    move: list[int | None] = []
    for p, action in enumerate(actions):
        if action is None:
            move.append(None)
        elif isinstance(action, str) and action in index[p]:
            move.append(index[p][action])
        else:
            raise StratagemError(
                f"{at}: {action!r} is not an action of player {p} ({', '.join(labels[p])})"
            )
    return move[0], move[1]


Table = tuple[tuple[tuple[float, float], ...], ...]

_TABLES: dict[int, tuple[NormalFormGame, Table, tuple[dict[str, int], ...]]] = {}
"""Per stage game (by identity, the game kept alive with it): its table of pairs and label
indices, built once for the thousands of episodes of the same game."""


def _episode_game(
    episode: EpisodeRecord,
) -> tuple[tuple[tuple[str, ...], ...], Table, tuple[dict[str, int], ...]]:
    """Labels, payoff table and label indices of an episode's stage game, resolved by
    `analysis.games`."""
    where = f"episode '{episode.id}'"
    stage = resolve_game(episode)
    if stage.n_players != 2:
        raise StratagemError(
            f"{where}: seed-003 metrics need a 2-player game, not {stage.n_players}"
        )
    known = _TABLES.get(id(stage))
    if known is None or known[0] is not stage:
        labels, tensor = stage.labels, stage.table
        table = tuple(
            tuple((float(tensor[i][j][0]), float(tensor[i][j][1])) for j in range(len(labels[1])))
            for i in range(len(labels[0]))
        )
        index = tuple({label: i for i, label in enumerate(ls)} for ls in labels)
        if len(_TABLES) >= 256:
            _TABLES.clear()
        known = _TABLES[id(stage)] = (stage, table, index)
    return stage.labels, known[1], known[2]


@functools.lru_cache(maxsize=64)
def stage_game(
    labels: tuple[str, ...], table: tuple[tuple[tuple[float, float], ...], ...]
) -> NormalFormGame:
    """The stage game as a `NormalFormGame`, so the bots and the solver can read it (cached).

    Player 1 gets player 0's labels when the action counts match: every seed-003 game is
    symmetric with the same words for both players (§1.2-1.3).
    """
    k1 = len(table[0])
    other = labels if k1 == len(labels) else tuple(f"action {j}" for j in range(k1))
    return NormalFormGame("counterfactual", [labels, other], [[list(c) for c in r] for r in table])


def own_payoffs(game: CounterfactualGame) -> list[list[float]]:
    return [[cell[0] for cell in row] for row in game.table]


def total_points(game: CounterfactualGame) -> float:
    """TP, player 0's cumulative reward; invalid rounds score 0 (seed-003 §5.1)."""
    return game.points
