"""Per-cell summary of an experiment: score, cooperation and invalid rates of one seat.

A cell is one combination of the grid (model, agent, game, opponent, rounds); its episodes (seeds,
repetitions) are averaged. Invalid moves are shown, never hidden: the cooperation rate is over the
seat's valid moves and the invalid rate over all its moves (`analysis.invalid` defines invalid).
The cooperative action is the first action of the episode's resolved stage game
(`analysis.games`), so an imported episode that names its game only is read like any other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import mean

from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.experiments.store import ResultStore


@dataclass(frozen=True)
class Cell:
    model: str
    agent: str
    game: str
    opponent: str
    rounds: int
    episodes: int
    score: float
    """Mean total payoff of the seat per episode."""
    opponent_score: float
    cooperation: float | None
    """Share of the seat's valid moves that were the first (cooperative) action; None if it made
    no valid move or the game is not a resolved matrix game."""
    invalid_rate: float
    """Share of the seat's moves that were invalid."""


def cell_table(store: ResultStore, experiment_id: str, player: int = 0) -> list[Cell]:
    """One row per grid cell, over the finished episodes of an experiment."""
    return cells_of(
        load_episodes(store, experiment_id, event_kinds=("invalid", "decision")), player
    )


def _totals(e: EpisodeData, player: int) -> tuple[float, float]:
    """The seat's and its opponents' totals: summed from the rounds, or the stored payoffs."""
    n = len(e.seats)
    totals = [0.0] * n
    if e.rounds:
        for r in e.rounds:
            if r.payoffs is not None:
                for i, p in enumerate(r.payoffs[:n]):
                    totals[i] += p
    elif e.record.payoffs is not None:
        totals = [float(p) for p in e.record.payoffs[:n]]
    others = [t for i, t in enumerate(totals) if i != player]
    return totals[player], mean(others) if others else 0.0


def _opponent(e: EpisodeData, player: int) -> str:
    spec_opponent = e.spec.get("opponent")
    if spec_opponent is not None:
        return str(spec_opponent)
    others = [s.name for i, s in enumerate(e.seats) if i != player]
    return ", ".join(others)


def cells_of(episodes: Iterable[EpisodeData], player: int = 0) -> list[Cell]:
    """`cell_table` over episodes already loaded (the report shares one load)."""
    groups: dict[tuple[str, str, str, str, int], list[tuple[float, float, int, int, int]]]
    groups = defaultdict(list)
    for e in episodes:
        if player >= len(e.seats):
            continue
        spec = e.spec
        seat = e.seats[player]
        rounds = spec.get("rounds")
        key = (
            str(spec.get("model") or seat.model or seat.name) if player == 0 else seat.name,
            e.agent_name if player == 0 else seat.agent,
            e.record.game,
            _opponent(e, player),
            int(rounds) if isinstance(rounds, int | float) else len(e.rounds),
        )
        stage = e.stage
        first = stage.labels[player][0] if stage is not None and e.rounds else None
        failed = e.invalid_rounds(player)
        decisions, invalid = e.decisions(player)
        cooperative = 0
        for r in e.rounds:
            move = r.actions[player]
            if move is not None and r.round not in failed and move == first:
                cooperative += 1
        own, opp = _totals(e, player)
        valid = decisions - invalid
        groups[key].append((own, opp, cooperative if first is not None else -1, valid, invalid))
    table = []
    for (model, agent, game, opponent, rounds), rows in sorted(groups.items()):
        valid = sum(r[3] for r in rows)
        moves = valid + sum(r[4] for r in rows)
        known = all(r[2] >= 0 for r in rows)
        table.append(
            Cell(
                model, agent, game, opponent, rounds, len(rows),
                score=mean(r[0] for r in rows),
                opponent_score=mean(r[1] for r in rows),
                cooperation=sum(r[2] for r in rows) / valid if valid and known else None,
                invalid_rate=sum(r[4] for r in rows) / moves if moves else 0.0,
            )
        )  # fmt: skip
    return table
