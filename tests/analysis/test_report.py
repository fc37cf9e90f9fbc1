"""The HTML report: built from the store alone, self-contained, with the thesis' numbers for the
imported Appendix A, invalid outputs shown for a played experiment, and the `report` command."""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.report_html import row, tables

from stratagem.analysis.report import build_report
from stratagem.errors import StratagemError
from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request
from stratagem.studies.thesis.importer import import_thesis_csv

GARBAGE = "I would rather not say."


def assert_self_contained(html: str) -> None:
    assert "<script" not in html.lower()
    # Nothing is loaded from anywhere: every src is a data URI, no stylesheet link, no @import.
    for source in re.findall(r'\bsrc="([^"]*)"', html):
        assert source.startswith("data:image/png;base64,")
    assert "<link" not in html and "@import" not in html and "url(" not in html
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    for image in images:
        assert base64.b64decode(image).startswith(b"\x89PNG\r\n\x1a\n")


# -- (a) the thesis' Appendix A, imported: per-game summaries, no rounds ---------------------------


@pytest.fixture(scope="module")
def thesis_html(appendix_a: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("thesis-report")
    with ResultStore(folder / STORE_FILE) as store:
        import_thesis_csv(store, appendix_a)
    path = build_report(folder)
    assert path == folder / "report-seed-001-appendix-A.html"
    return path.read_text(encoding="utf-8")


def test_thesis_report_has_the_thesis_numbers(thesis_html: str) -> None:
    found = tables(thesis_html)
    # Table 3.4 (Tool behaviour) and 3.2 (Plain behaviour), per model, as the thesis prints them.
    tool = found["Average behaviour scores, Tool-based agent"]
    assert tool[0] == ["", "CR", "N", "TM", "Ret", "For", "Em"]
    assert row(tool, "gpt-4o-mini")[1:3] == ["0.49", "0.44"]
    assert row(tool, "ministral-8b")[1] == "0.46"
    plain = found["Average behaviour scores, Plain LLM agent"]
    assert row(plain, "gpt-4o-mini")[1:4] == ["0.73", "1.00", "0.00"]
    # Table 3.1: comprehension of the Plain agent.
    comprehension = found["Average comprehension scores, Plain LLM agent"]
    assert row(comprehension, "Avg. Correct Rate")[1:] == ["0.79", "0.99", "0.92", "0.64", "0.46"]
    # Tables 3.5 / 3.8: without rounds, the Always-Defect match is what the aggregates give.
    sfem = found["SFEM strategies assigned to Tool-based agents"]
    assert row(sfem, "gpt-4o-mini")[1:] == ["Always Defect", "0.66"]
    assert row(sfem, "ministral-8b")[1:] == ["Always Defect", "0.71"]
    assert "(as Table 3.4 of the study)" in thesis_html
    # The per-game data is there, folded: all 252 games.
    data = found["Per-game data (252 games) — 252 rows (click to show)"]
    assert len(data) == 253 and data[0][:3] == ["idx", "Model", "Arch"]


def test_thesis_report_is_self_contained_with_plots_and_methods(thesis_html: str) -> None:
    assert_self_contained(thesis_html)
    images = re.findall(r'src="data:image/png;base64,', thesis_html)
    # 3 architectures' cooperation plots, 2 comparisons, SHAP bar + violin per arch x model.
    assert len(images) >= 15
    assert "Tool-based: cooperation by attitude and game" in thesis_html
    assert "Comprehension: correct answers per question" in thesis_html
    assert 'id="methods"' in thesis_html and "What the metrics mean" in thesis_html
    assert "Retaliation (Ret)" in thesis_html
    assert "gpt-4o-mini, ministral-8b" in thesis_html  # the models, in the settings list
    assert "cooperate, defect, compute" in thesis_html  # the attitudes of the Tool agent
    # No rounds: what cannot be computed says so in one line instead of failing.
    assert "Invalid outputs: not available" in thesis_html
    assert "SFEM is not possible here" in thesis_html
    assert "The most influential setting per metric" in thesis_html
    importance = tables(thesis_html)["The most influential setting per metric"]
    assert row(importance, "Tool-based")[2].startswith("attitude")  # CR: the attitude drives it


# -- (b) a played experiment with invalid outputs --------------------------------------------------


def _odd_rounds_garbage(request: Request, sample: int) -> str:
    """Garbage in odd rounds (re-asks included), a legal tagged move in even rounds."""
    first_user = next(m.content for m in request.messages if m.role == "user")
    rounds = re.findall(r"Round (\d+)(?: of \d+)?: choose your action", first_user)
    if int(rounds[-1]) % 2:
        return GARBAGE
    return "[move] (let us see) cooperate"


@pytest.fixture
def played(tmp_path: Path) -> Iterator[Path]:
    register_script("report-odd", _odd_rounds_garbage)
    data: dict[str, Any] = {
        "name": "small grid",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/report-odd"}],
        "agents": [{"name": "tagged", "output": "tag", "max_reasks": 1, "invalid": "forfeit"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat", "AlwaysDefect"],
        "rounds": [4],
        "concurrency": 2,
        "retry": {"base_delay": 0},
    }
    file = tmp_path / "exp.yaml"
    file.write_text(yaml.safe_dump(data), encoding="utf-8")
    try:
        summary = asyncio.run(Runner(load_config(file), show_progress=False).run())
    finally:
        _REGISTERED.pop("report-odd", None)
    assert (summary.finished, summary.failed) == (2, 0)
    yield tmp_path / "out"


def test_played_report_shows_invalid_outputs_cells_and_sfem(played: Path) -> None:
    html = build_report(played / STORE_FILE, out_path=played / "r.html").read_text("utf-8")
    assert_self_contained(html)
    found = tables(html)
    # Rounds 1 and 3 of both games: 4 invalid decisions out of 8, forfeited, never hidden.
    invalid = found["Invalid outputs per model and agent"]
    assert invalid[0][2:6] == ["Decisions", "Invalid", "Invalid rate", "Forfeited moves"]
    assert invalid[1][:8] == [
        "scripted/report-odd", "tagged", "8", "4", "0.50", "4", "forfeit", f"“{GARBAGE}”",
    ]  # fmt: skip
    assert "4 of 8" in html  # the headline figure
    cells = found["Score, cooperation and invalid outputs per setting"]
    assert [r[3] for r in cells[1:]] == ["AlwaysDefect", "TitForTat"]
    for r in cells[1:]:
        assert r[8:10] == ["1.00", "0.50"]  # cooperation over valid moves, invalid rate
    # SFEM on the two Dilemma games, invalid moves counted as not cooperating.
    assigned = found["Assigned strategies"]
    assert assigned[0][:5] == ["Architecture", "Model", "Games", "Rounds", "Assigned strategy"]
    assert assigned[1][:4] == ["Plain LLM", "report-odd", "2", "8"]
    assert any(title.endswith("most frequent strategies") for title in found)
    # Two games cannot feed a random forest: one line instead.
    assert "Feature importance skipped" in html
    assert "No comprehension answers are stored" in html
    assert "Plain LLM: cooperation by opponent and game" in html


def test_played_report_names_the_agent_and_settings(played: Path) -> None:
    html = build_report(played).read_text("utf-8")
    agents = tables(html)["Agents"]
    assert agents[1][:5] == ["tagged", "plain (Plain LLM)", "neutral", "tag", "prompt"]
    assert "forfeit, up to 1 re-asks" in agents[1]
    assert "TitForTat (cooperate first, then copy the opponent&#39;s last move)" in html


def test_experiment_choice_and_user_errors(tmp_path: Path) -> None:
    db = tmp_path / "two.db"
    with ResultStore(db) as store:
        store.create_experiment("a", "first", {})
        store.create_experiment("b", "second <b>", {})
    with pytest.raises(StratagemError, match="choose one with --experiment"):
        build_report(db)
    with pytest.raises(StratagemError, match="unknown experiment 'c'"):
        build_report(db, experiment_id="c")
    # An experiment without games still gives a report, with notes instead of sections.
    html = build_report(db, experiment_id="b").read_text("utf-8")
    assert "second &lt;b&gt;" in html and "second <b>" not in html
    assert "No finished games yet" in html
    with pytest.raises(StratagemError, match="no such directory"):
        build_report(tmp_path / "missing")
    assert not (tmp_path / "missing").exists()  # nothing created on the way
    with ResultStore() as memory, pytest.raises(StratagemError, match="in-memory"):
        memory.create_experiment("m", "m", {})
        build_report(memory)


# -- (c) the command -------------------------------------------------------------------------------


def test_report_command(played: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "report", str(played))
    assert (code, err) == (0, "")
    written = Path(out.strip())
    assert written == played / "report-small_grid.html" and written.is_file()
    target = tmp_path / "elsewhere" / "r.html"
    code, out, _ = cli(capsys, "report", str(played / STORE_FILE), "--out", str(target))
    assert code == 0 and Path(out.strip()) == target and target.is_file()
    code, out, err = cli(capsys, "report", str(tmp_path / "nowhere"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "nowhere" in err and "Traceback" not in err
    empty = tmp_path / "empty-dir"
    empty.mkdir()
    code, _, err = cli(capsys, "report", str(empty))
    assert code == 2 and "no result store" in err and err.count("\n") == 1


def test_agents_differing_only_in_attitude_are_one_architecture(tmp_path: Path) -> None:
    """As in the thesis, the attitude is a setting of the Tool architecture (Table 3.4 pools
    it); configurations that differ in anything else are named apart."""
    register_script("report-json", lambda request, sample: "{'DECISION': 'Cooperate'}")
    tool = {"kind": "tool", "framing": "prisoner"}
    debate = {"kind": "debate", "framing": "prisoner", "attitude": "defect"}
    data: dict[str, Any] = {
        "name": "attitudes",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/report-json"}],
        "agents": [
            {**tool, "name": "tool-c", "attitude": "cooperate"},
            {**tool, "name": "tool-d", "attitude": "defect"},
            {**debate, "name": "debate-2", "max_turns": 2},
            {**debate, "name": "debate-4", "max_turns": 4},
        ],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
    }
    file = tmp_path / "exp.yaml"
    file.write_text(yaml.safe_dump(data), encoding="utf-8")
    try:
        summary = asyncio.run(Runner(load_config(file), show_progress=False).run())
    finally:
        _REGISTERED.pop("report-json", None)
    assert summary.finished == 4
    found = tables(build_report(tmp_path / "out").read_text("utf-8"))
    assert "Average behaviour scores, Tool-based agent" in found
    assert "Average behaviour scores, Debate-based “debate-2” agent" in found
    assert "Average behaviour scores, Debate-based “debate-4” agent" in found
