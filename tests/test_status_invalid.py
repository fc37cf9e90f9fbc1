"""`stratagem status`'s invalid column counts the moves of every LLM seat of a cell, wherever it
sits: a rule-based seat 0 does not hide its LLM opponent's invalid replies (issue 33 N6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import cli
from support.scripted_run import run_scripted


def _row(out: str, first: str) -> list[str]:
    """The cells of the results table's row whose first cell is `first`."""
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row starts with {first!r} in:\n{out}")


def test_status_counts_the_invalid_replies_of_an_llm_in_any_seat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    summary = run_scripted(
        out, "seats", lambda r, s: "banana", opponents=[], rounds=[2],
        agents=[{"name": "a", "max_reasks": 0}],
        lineups=[["TitForTat", "a"], ["a", "AlwaysDefect"]],
    )  # fmt: skip
    assert summary.finished == 2, summary.errors
    monkeypatch.setenv("COLUMNS", "200")
    code, text, err = cli(capsys, "status", str(out))
    assert code == 0, err
    # TitForTat in seat 0 made no invalid move, the LLM beside it made nothing else.
    assert _row(text, "TitForTat")[-1] == "1.00"
    assert _row(text, "scripted/seats")[-1] == "1.00"
    assert "invalid: every LLM seat's moves" in text
