"""`stratagem.open(...).study("tom")`: one row per TradeCraft game with a focal ToM agent, as the
report section reads it."""

from __future__ import annotations

from pathlib import Path

from support.tom_games import new_store, play

import stratagem
from stratagem.experiments.runner import STORE_FILE


def test_one_row_per_tom_game_with_its_outcome_and_counts(tmp_path: Path) -> None:
    with new_store(tmp_path / STORE_FILE) as store:
        play(store, "g0", seed=0, group="V1")
        play(store, "g1", seed=1, group="V2", invalid_first_proposal=True)
        play(store, "g2", seed=2, group="V0", baseline=(False, False))  # seat 0 taken as focal
        play(store, "g3", seed=3, baseline=(True, True))  # two baselines: no focal, no row
    with stratagem.open(tmp_path) as results:
        table = results.study("tom")
        assert list(table["episode_id"]) == ["g0", "g1", "g2"]
        assert list(table["group"]) == ["V1", "V2", "V0"]
        assert list(table["baseline_focal"]) == [False, False, True]
        seats = results.seats[results.seats["episode_id"] != "g3"].pivot(
            index="episode_id", columns="seat", values="payoff"
        )
        assert list(table["payoff_0"]) == list(seats[0]) and list(table["payoff_1"]) == list(
            seats[1]
        )
        assert table.loc[1, "invalid_decisions_0"] + table.loc[1, "invalid_decisions_1"] >= 1
        beliefs = results.beliefs.groupby("episode_id").size()
        assert (table["reports"] > 0).all() and beliefs["g1"] > 0
