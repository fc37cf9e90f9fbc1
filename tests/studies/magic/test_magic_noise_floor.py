"""The MAgIC comparisons show the noise floor of their win rates (issue 35, item 2): with
`replicates: 1` every game is played again under new sampling seeds, and the floor printed under
the comparisons is `analysis.noise_floor` over those copies' challenger win shares."""

from __future__ import annotations

import html
import re
from pathlib import Path

from conftest import run_magic

from stratagem.analysis.noise_floor import noise_floor, without_copies
from stratagem.analysis.report_data import ReportData
from stratagem.experiments.store import ResultStore
from stratagem.studies import build_report
from stratagem.studies.magic.comparison_section import win_share_values
from stratagem.studies.magic.extract import magic_data
from stratagem.studies.magic.options import MagicAnalysis

FLOOR = re.compile(r"Noise floor of the win share: ±([\d.]+)")


def test_the_comparisons_show_the_noise_floor_of_the_win_rates(
    scripted_players: None, tmp_path: Path
) -> None:
    db = run_magic(tmp_path / "copies", replicates=1)
    (shown,) = FLOOR.findall(html.unescape(build_report(db).read_text(encoding="utf-8")))
    with ResultStore(db) as store:
        data = without_copies(ReportData.load(store, store.experiment("magic")))
        games = magic_data(store, data.config, data.episodes).games
        copies = magic_data(store, data.config, data.replicates).games
    assert copies and len(copies) == len(games)  # every game copied once
    values = win_share_values([*games, *copies], MagicAnalysis())
    floor = noise_floor(data, "win share", values={k: 100 * v for k, v in values.items()})
    assert floor is not None and abs(float(shown) - floor.floor) <= 0.05  # printed to 1 decimal


def test_no_copies_no_floor(magic_store: Path) -> None:
    assert not FLOOR.findall(html.unescape(build_report(magic_store).read_text(encoding="utf-8")))
