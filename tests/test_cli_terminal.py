"""What the terminal shows (issue 11, items 13-15): data never read as markup, 80 columns without a
name cut short, and the basics a user tries first (--version, -h, the names to type)."""

from __future__ import annotations

import asyncio
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from support.cli import cli

from stratagem.experiments.config import load_config
from stratagem.experiments.runner import Runner

COMMAND = str(Path(sys.executable).with_name("stratagem"))
LOUD = "[/x] [bold red]loud[/] [redacted]"


def piped(*argv: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([COMMAND, *argv], capture_output=True, text=True, env=env)


def experiment(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "exp.yaml"
    data = {
        "name": name,
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/cooperate"}],
        "agents": [{"name": "plain"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat", "Random(0.5)"],
        "rounds": [2],
        "seeds": [0, 1],
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_names_and_errors_are_printed_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = experiment(tmp_path, LOUD)
    code, out, err = cli(capsys, "run", str(path), "--no-progress")
    assert code == 0, err
    assert f"experiment {LOUD}: 4 episodes" in out
    code, out, err = cli(capsys, "status", str(tmp_path / "out"))
    assert code == 0, err
    assert f"{LOUD} ({LOUD}): 4 finished" in out
    code, _, err = cli(capsys, "import", str(tmp_path / "no[/x]where[bold].jsonl"))
    assert code == 2
    assert err.strip() == f"error: file '{tmp_path / 'no[/x]where[bold].jsonl'}' does not exist"


def test_server_text_does_not_restyle_the_terminal(tmp_path: Path) -> None:
    """Through a real terminal driver (forced colour), data brings no escape codes of its own."""
    path = experiment(tmp_path, "[bold red]LOUD[/]")
    env = {**os.environ, "COLUMNS": "200", "FORCE_COLOR": "1", "TTY_COMPATIBLE": "1"}
    done = subprocess.run([COMMAND, "run", str(path), "--no-progress"], capture_output=True,
                          text=True, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "experiment [bold red]LOUD[/]: 4 episodes" in done.stdout


def test_tables_fit_80_columns_without_cutting_names(tmp_path: Path) -> None:
    path = experiment(tmp_path, "local-experiment-with-a-long-name")
    assert piped("run", str(path), "--no-progress").returncode == 0
    for argv in (["status", str(tmp_path / "out")], ["strategies"], ["games"]):
        done = piped(*argv)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert max(len(line) for line in lines) <= 80, (argv, done.stdout)
        assert "…" not in done.stdout
    strategies = piped("strategies").stdout
    for name in ("TitForTat", "TFT", "srep", "pp", "mf", "tft-br", "Random(p)",
                 "SingleRoundEquilibrium", "BestResponseToLast", "tit-for-tat-player"):  # fmt: skip
        assert re.search(rf"(^|[\s│]){re.escape(name)}([\s│,.]|$)", strategies, re.M), name
    wide = piped("status", str(tmp_path / "out"), columns=200).stdout
    assert "local-experiment-with-a-long-name" in wide and "invalid" in wide


def test_the_progress_line_fits_80_columns(tmp_path: Path) -> None:
    buffer = io.StringIO()
    console = Console(width=80, force_terminal=True, file=buffer, color_system=None)
    config = load_config(experiment(tmp_path, "a [/x] name long enough to need cutting down"))
    asyncio.run(Runner(config, console=console, show_progress=True).run())
    lines = [s for s in re.split(r"[\r\n]|\x1b\[[0-9;?]*[A-Za-z]", buffer.getvalue()) if s.strip()]
    last = lines[-1]
    assert len(last) <= 80
    assert re.search(r"4/4 \d+:\d\d 8 calls \(0 cached\), [\d,]+ tokens, \$0\.0000$", last), last


def test_version_short_help_and_plain_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "--version")
    assert code == 0 and re.fullmatch(r"stratagem \S+\n", out)
    code, out, _ = cli(capsys, "run", "-h")
    assert code == 0 and "--dry-run" in out and "<bool>" not in out
    assert "-h, --help" in out


def test_games_says_which_commands_play_them(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "games")
    assert code == 0
    assert re.search(r"dilemma\s.*│ yes\s+│ yes\s", out)
    assert re.search(r"ultimatum\s.*│ yes\s+│ no\s", out)
    assert re.search(r"npd3\s.*│ yes\s+│ no\s", out)
    assert "tournament and moran: 2-player matrix games" in out
