"""Invalid LLM output is counted as invalid everywhere: `stratagem status`, the report's
per-setting table and the viewer's cells count every LLM seat's moves (`Cell.llm_invalid_rate`),
so an LLM in seat 1 beside a rule-based seat 0 does not show 0 invalid (issue 33 N6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import cli
from support.report_html import tables
from support.scripted_run import run_scripted

from stratagem.analysis.report import build_report
from stratagem.experiments.runner import STORE_FILE
from stratagem.web.data import Sources


@pytest.fixture(scope="module")
def seats(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An LLM that only ever replies "banana", in seat 1 (beside TitForTat) and in seat 0."""
    out = tmp_path_factory.mktemp("llm-invalid") / "out"
    summary = run_scripted(
        out, "seats", lambda r, s: "banana", opponents=[], rounds=[2],
        agents=[{"name": "a", "max_reasks": 0}],
        lineups=[["TitForTat", "a"], ["a", "AlwaysDefect"]],
    )  # fmt: skip
    assert summary.finished == 2, summary.errors
    return out


def _row(out: str, first: str) -> list[str]:
    """The cells of the results table's row whose first cell is `first`."""
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row starts with {first!r} in:\n{out}")


def test_status_counts_the_invalid_replies_of_an_llm_in_any_seat(
    seats: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, text, err = cli(capsys, "status", str(seats))
    assert code == 0, err
    # TitForTat in seat 0 made no invalid move, the LLM beside it made nothing else.
    assert _row(text, "TitForTat")[-1] == "1.00"
    assert _row(text, "scripted/seats")[-1] == "1.00"
    assert "invalid: every LLM seat's moves" in text


def test_report_cells_table_counts_an_llm_in_seat_1(seats: Path) -> None:
    html = build_report(seats / STORE_FILE, out_path=seats / "r.html").read_text("utf-8")
    header, *rows = tables(html)["Score, cooperation and invalid outputs per setting"]
    column = header.index("LLM invalid rate")
    assert len(rows) == 2
    # TitForTat in seat 0 made no invalid move; the LLM beside it made nothing else.
    assert [r[column] for r in rows] == ["1.00", "1.00"]


def test_viewer_cells_count_an_llm_in_seat_1(seats: Path) -> None:
    cells = Sources([seats]).cells(seats.name, "seats")
    by_seat0 = {c["lineup"][0].split(":")[0]: c for c in cells}
    assert set(by_seat0) == {"TitForTat", "a"}
    assert by_seat0["TitForTat"]["invalid_rate"] == 0.0  # seat 0's own moves, kept as they are
    assert by_seat0["TitForTat"]["llm_invalid_rate"] == 1.0
    assert by_seat0["a"]["llm_invalid_rate"] == 1.0
