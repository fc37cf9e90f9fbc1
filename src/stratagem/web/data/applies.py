"""Which metrics and outcomes apply to a cell, so a page offers only those (issue 36 item 5).

Cooperation (the share of a seat's first-labelled moves, `analysis.cells.move_tally`) means
something only in a matrix game of two actions per seat, a cooperate/defect choice: not in
Rock-Paper-Scissors, where it would count "rock". The spy's outcomes apply where the game's
stored outcome says whether a spy won (MAgIC's social-deduction games), never in a Prisoner's
Dilemma. Both are read from the experiment's own records (one finished episode per game, with
the listing's own outcome conditions), never from a list of game names, so a plugin's game is
treated the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stratagem.analysis.games import try_resolve
from stratagem.analysis.tallies import EpisodeTally
from stratagem.experiments.records import EPISODE_COLUMNS, episode_from_row
from stratagem.experiments.store import ResultStore
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.web.data.listing import OUTCOMES, outcome_values

SPY_OUTCOMES = ("spy won", "spy lost")
METRICS = ("score", "cooperation", "llm_invalid_rate", "cost_usd")
"""A cell row's metrics, in the order a page shows them."""


@dataclass(frozen=True)
class Applies:
    cooperation: bool
    spy: bool


def game_facts(store: ResultStore, experiment: str) -> dict[str, Applies]:
    """What applies to each game of the experiment, from its first finished episode: a few
    indexed look-ups whatever the number of episodes."""
    spy = " OR ".join(f"({OUTCOMES[o]})" for o in SPY_OUTCOMES)
    out = {}
    for (game,) in store._rows(
        "SELECT DISTINCT game FROM episodes WHERE experiment_id = ?", (experiment,)
    ):
        rows = store._rows(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE experiment_id = ? AND game = ? "
            "AND status = 'finished' ORDER BY rowid LIMIT 1",
            (experiment, game),
        )
        if not rows:
            continue
        record = episode_from_row(rows[0])
        stage = try_resolve(record)
        binary = isinstance(stage, NormalFormGame) and all(len(ls) == 2 for ls in stage.labels)
        won = store._rows(f"SELECT 1 FROM episodes e WHERE e.id = ? AND ({spy})", (record.id,))
        out[game] = Applies(cooperation=binary, spy=bool(won))
    return out


def applying(tallies: Sequence[EpisodeTally], facts: Applies | None) -> dict[str, Any]:
    """A cell row's `metrics` and the `outcomes` its episodes can be filtered by."""
    seats = max(len(e.totals) for e in tallies)
    spy = facts is not None and facts.spy
    cooperation = facts is not None and facts.cooperation
    return {
        "metrics": [m for m in METRICS if cooperation or m != "cooperation"],
        "outcomes": [o for o in outcome_values(seats) if spy or o not in SPY_OUTCOMES],
    }
