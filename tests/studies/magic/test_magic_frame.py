"""`stratagem.open(...).study("magic")`: one row per competition game with the counts every MAgIC
metric pools, so a metric recomputed from the frame is the report's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import CHALLENGER_ID

import stratagem
from stratagem.analysis.episodes import load_episodes
from stratagem.experiments.store import ResultStore
from stratagem.studies.magic.extract import magic_data
from stratagem.studies.magic.metrics import METRICS, metric_values, metrics_of_tallies
from stratagem.studies.magic.options import MetricOptions
from stratagem.studies.magic.tallies import COLUMNS


def test_the_metrics_of_the_frame_are_the_reports(magic_store: Path) -> None:
    with ResultStore(magic_store) as store:
        experiment = store.experiments()[0]
        games = magic_data(store, experiment.config, load_episodes(store, experiment.id)).games
    with stratagem.open(magic_store) as results:
        table = results.study("magic")
        assert list(table["episode_id"]) == [g.episode_id for g in games]
        assert len(table) == 26 and set(table["competition"]) == {
            "chameleon", "non-chameleon", "undercover", "civilian", "cost-sharing", "pd", "pg"
        }  # fmt: skip
        assert any(CHALLENGER_ID in c for c in table["challenger"])
        for challenger, rows in table.groupby("challenger"):
            tallies = rows[list(COLUMNS)].to_numpy(dtype=np.float64)
            mine = [g for g in games if g.challenger == challenger]
            assert mine
            got = metrics_of_tallies(tallies, MetricOptions())
            want = metric_values(mine, MetricOptions())
            assert got == want and any(got[m] is not None for m in METRICS)
        code = results.study("magic", {"magic": {"code_compat": True}})
        assert not code[list(COLUMNS)].equals(table[list(COLUMNS)])  # the options apply
