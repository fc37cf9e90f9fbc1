"""docs/dataframes.md's code runs: its Python blocks in order, its `stratagem` commands through the
CLI, on results/quickstart as examples/quickstart.yaml leaves it (played here by a scripted
model), so the page cannot drift from the code."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.scripted_run import run_scripted

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "dataframes.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    return [(m[1], m[2]) for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]


def test_the_page_has_python_a_command_and_a_duckdb_query() -> None:
    kinds = [kind for kind, _ in blocks()]
    assert kinds.count("python") >= 3 and "sh" in kinds
    assert any("duckdb.sql" in code for _, code in blocks())


def test_every_block_of_the_page_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    example = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text(encoding="utf-8"))
    grid = {k: example[k] for k in ("games", "opponents", "rounds", "seeds", "agents")}
    summary = run_scripted(
        tmp_path / "results" / "quickstart", example["name"], lambda r, s: r.choices[s % 2], **grid
    )
    assert summary.finished == 9, summary.errors
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    printed = ""
    for kind, code in blocks():
        if kind == "python":
            exec(compile(code, str(PAGE), "exec"), namespace)
            printed += capsys.readouterr().out
        elif kind == "sh":
            for line in code.splitlines():
                status, _, err = cli(capsys, *shlex.split(line)[1:])
                assert status == 0, f"{line}: {err}"
    assert "TitForTat" in printed and "CR" in printed  # the groupbys had rows to show
    assert len(namespace["table"]) == 9
