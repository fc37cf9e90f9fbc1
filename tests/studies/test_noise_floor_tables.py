"""The counterfactual and MAgIC comparison tables show the noise floor their differences must
beat (issue 35, item 2): with `replicates: 1` each cell is played again under new sampling
seeds, and the floor under each table is the one `analysis.noise_floor` computes from those
copies; without copies there is no floor line."""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path

from stratagem.analysis.noise_floor import noise_floor
from stratagem.analysis.report_data import ReportData
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.studies import build_report

FLOOR = re.compile(r"Noise floor of the ([\w ]+): ±([\d.]+)")


def run(folder: Path, **settings: object) -> Path:
    data = {
        "name": "floor",
        "output": str(folder),
        "models": [{"model": "scripted/random:5"}],
        "agents": [{"name": "zs", "output": "choice"}],
        "games": ["pd", "pd-alt"],
        "opponents": ["TitForTat", "AlwaysDefect"],
        "rounds": [4],
        "seeds": [0, 1, 2, 3],
        "retry": {"base_delay": 0},
        **settings,
    }
    summary = asyncio.run(Runner(config_from_dict(data, "test"), show_progress=False).run())
    assert summary.failed == 0, summary.errors
    return folder / STORE_FILE


def floors(report: Path) -> dict[str, float]:
    text = html.unescape(report.read_text(encoding="utf-8"))
    return {m[1]: float(m[2]) for m in FLOOR.finditer(text)}


def test_the_counterfactual_paired_tables_show_the_noise_floor(tmp_path: Path) -> None:
    db = run(tmp_path / "copies", replicates=1)
    shown = floors(build_report(db))
    family = ["pd", "pd-alt", "sh", "sh-alt"]
    with ResultStore(db) as store:
        data = ReportData.load(store, store.experiment("floor"))
        expected = {}
        for metric in ("score", "cooperation"):
            floor = noise_floor(data, metric, where=lambda key: key[2] in family)
            assert floor is not None and floor.cells == 4  # 2 games x 2 opponents, each copied
            expected[metric] = floor.floor
    # Each paired table (points, cooperation) prints the floor computed from the copies.
    assert set(shown) == {"score", "cooperation rate"}, shown
    assert abs(shown["score"] - expected["score"]) <= 0.05  # printed with the table's 1 decimal
    assert abs(shown["cooperation rate"] - expected["cooperation"]) <= 0.005  # and 2 decimals
    assert not floors(build_report(run(tmp_path / "none")))  # no copies, no floor line
