"""seed-002's ToM agent played for real: the embedded Gemma 3 270M on TradeCraft instance 0 for
one turn, through `stratagem run` and `stratagem report`: the reports come back through the
grammar, are stored as beliefs, and the ToM section is written from them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.cli import cli

from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore


def test_embedded_model_plays_a_tom_turn_and_the_report_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = {"max_tool_calls": 1, "max_craft_calls": 1, "message_chars": 40}
    focal = {"name": "tom-v1", "kind": "tom", "max_tokens": 200, "max_reasks": 1,
             "options": {"order": 1, **options}}  # fmt: skip
    baseline = {"name": "base", "kind": "tom", "max_tokens": 160, "max_reasks": 1,
                "options": {"baseline": True, **options}}  # fmt: skip
    file = tmp_path / "tom.yaml"
    config = {
        "name": "tom-tiny",
        "output": str(tmp_path / "out"),
        "models": [{"model": "local/gemma-3-270m", "max_concurrency": 1}],
        "agents": [focal, baseline],
        "games": ["tradecraft/0"],
        "rounds": [1],
        "lineups": [["tom-v1", "base"]],
    }
    file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    code, out, _ = cli(capsys, "run", str(file), "--no-progress")
    assert code == 0, out
    assert "1 played, 0 failed" in out
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        (episode,) = store.episodes()
        beliefs = store.beliefs(episode.id)
        notes = store.events(episode.id, "tom")
    # Seat 0 proposes (V0 and V1), seat 1 decides (V0 only); the grammar holds the keys.
    assert {(b.player, b.order) for b in beliefs} == {(0, 0), (0, 1), (1, 0)}
    for b in beliefs:
        assert b.content["turn"] == 1 and set(b.content["values"]) >= {"minecraft:coal"}
        assert all(0 <= v <= 10 for v in b.content["values"].values())
    assert {n.data["phase"] for n in notes} >= {"proposal", "decision", "craft"}
    assert {n.data["group"] for n in notes if n.player == 0} == {"V1"}

    report = tmp_path / "report.html"
    code, out, _ = cli(capsys, "report", str(tmp_path / "out"), "--out", str(report))
    assert code == 0, out
    html = report.read_text(encoding="utf-8")
    assert "Theory of mind" in html and "KL" in html
