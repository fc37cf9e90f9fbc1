"""Per-cell summary of an experiment: score, cooperation and invalid rates of the LLM player.

A cell is one combination of the grid (model, agent, game, opponent, rounds); its episodes (seeds,
repetitions) are averaged. Invalid moves are shown, never hidden: the cooperation rate is over the
player's valid moves and the invalid rate over all its moves.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from statistics import mean

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
    """Mean total payoff of player 0 per episode."""
    opponent_score: float
    cooperation: float | None
    """Share of player 0's valid moves that were the first (cooperative) action; None if it made
    no valid move."""
    invalid_rate: float
    """Share of player 0's moves that were invalid."""


def cell_table(store: ResultStore, experiment_id: str, player: int = 0) -> list[Cell]:
    """One row per grid cell, over the finished episodes of an experiment."""
    groups: dict[tuple[str, str, str, str, int], list[tuple[float, float, int, int, int]]]
    groups = defaultdict(list)
    for episode in store.episodes(experiment_id, status="finished"):
        spec = episode.spec or {}
        agent = spec.get("agent", {})
        key = (
            str(spec.get("model", episode.player_names[player])),
            str(agent.get("name", "") if isinstance(agent, dict) else agent),
            episode.game,
            str(spec.get("opponent", episode.player_names[1 - player])),
            int(spec.get("rounds", 0)),
        )
        first = episode.labels[player][0] if episode.labels else None
        # The runner writes an "invalid" event for every invalid decision, whether the round was
        # forfeited or a default move was played in its place.
        failed = {e.round for e in store.events(episode.id, "invalid") if e.player == player}
        own = opp = 0.0
        cooperative = valid = invalid = 0
        for r in store.rounds(episode.id):
            if r.payoffs is not None:
                own += r.payoffs[player]
                opp += r.payoffs[1 - player]
            move = r.actions[player]
            if move is None or r.round in failed:
                invalid += 1
            else:
                valid += 1
                cooperative += int(move == first)
        groups[key].append((own, opp, cooperative, valid, invalid))
    table = []
    for (model, agent, game, opponent, rounds), rows in sorted(groups.items()):
        valid = sum(r[3] for r in rows)
        moves = valid + sum(r[4] for r in rows)
        table.append(
            Cell(
                model, agent, game, opponent, rounds, len(rows),
                score=mean(r[0] for r in rows),
                opponent_score=mean(r[1] for r in rows),
                cooperation=sum(r[2] for r in rows) / valid if valid else None,
                invalid_rate=sum(r[4] for r in rows) / moves if moves else 0.0,
            )
        )  # fmt: skip
    return table
