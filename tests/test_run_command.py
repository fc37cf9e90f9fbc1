"""`stratagem run` as a user of a paid API meets it: the plan first, --dry-run, confirmation above
the file's bounds (refused without a terminal unless --yes), honest exit codes with the reasons of
failed episodes, and Ctrl-C that leaves a store the next run continues."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.slow_openai import SlowOpenAIServer

from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.llm.errors import TransientError
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

COMMAND = str(Path(sys.executable).with_name("stratagem"))


@pytest.fixture
def flaky() -> Iterator[list[Request]]:
    """`scripted/flaky`: answers, except for requests of seed 1's episode, which always fail."""
    calls: list[Request] = []

    def reply(request: Request, sample: int) -> str:
        calls.append(request)
        if "round 2" in request.messages[-1].content.lower():
            raise TransientError("503 the service is overloaded [/x] [bold red]now[/]")
        return request.choices[0]

    register_script("flaky", reply)
    yield calls
    _REGISTERED.pop("flaky", None)


def write(tmp_path: Path, **settings: Any) -> Path:
    data: dict[str, Any] = {
        "name": "cmd",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/flaky"}],
        "agents": [{"name": "plain"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [1],
        "seeds": [0],
        "retry": {"base_delay": 0, "max_attempts": 2},
        **settings,
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_dry_run_prints_the_plan_and_calls_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flaky: list[Request]
) -> None:
    code, out, _ = cli(capsys, "run", str(write(tmp_path, seeds=[0, 1, 2])), "--dry-run")
    assert code == 0 and flaky == []
    assert out.strip() == (
        "plan: 3 episodes to play (0 already finished), about 3 model calls, about 1,800 tokens, "
        "about $0.00 at the listed prices"
    )
    assert not (tmp_path / "out" / STORE_FILE).exists()


def test_a_run_above_the_bounds_needs_yes_without_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flaky: list[Request]
) -> None:
    path = write(tmp_path, seeds=[0, 1, 2], confirm={"episodes": 2})
    code, _, err = cli(capsys, "run", str(path), "--no-progress")
    assert code == 2 and flaky == []
    (line,) = err.strip().splitlines()
    assert line.endswith(
        "this run needs a confirmation (more than 2 episodes (confirm.episodes)) and there is no "
        "terminal to ask; pass --yes to start it"
    )
    code, out, _ = cli(capsys, "run", str(path), "--no-progress", "--yes")
    assert code == 0 and "3 played, 0 failed" in out


def test_failed_episodes_exit_1_and_say_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flaky: list[Request]
) -> None:
    path = write(tmp_path, rounds=[2], seeds=[0, 1])
    code, out, err = cli(capsys, "run", str(path), "--no-progress")
    assert code == 1
    assert "0 played, 2 failed" in out
    # Every call is counted, the failed ones too (each after its 2 attempts, as one record).
    assert "4 model calls (0 cached, 2 failed)" in out and len(flaky) == 2 + 2 * 2
    (line,) = err.strip().splitlines()
    assert line.startswith("failed: 2 of 2 episodes (2 x ")
    assert "[/x] [bold red]now[/]" in line  # the server's text, printed as written
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        assert store.status_counts("cmd")["failed"] == 2
        assert store.call_totals("cmd")["calls"] == 4


def test_ctrl_c_stops_with_one_line_and_the_next_run_continues(tmp_path: Path) -> None:
    episodes = 6
    with SlowOpenAIServer(0.15) as server:
        path = write(
            tmp_path,
            models=[{"model": "openai/slow", "base_url": server.base_url, "api_key_env": "K",
                     "max_concurrency": 1}],
            seeds=list(range(episodes)), rounds=[2], concurrency=1,
        )  # fmt: skip
        env = {**os.environ, "K": "sk-not-a-key"}
        proc = subprocess.Popen(
            [COMMAND, "run", str(path), "--no-progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while server.count < 5:  # two episodes done, the third under way
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130
        (line,) = err.strip().splitlines()
        assert line.startswith("interrupted: ") and line.endswith(
            f"of {episodes} episodes finished; re-run the same command to continue"
        )
        done = subprocess.run(
            [COMMAND, "run", str(path), "--no-progress"],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        # The episodes finished before the interruption are not played again.
        counts = re.search(r"(\d+) already finished, (\d+) played, 0 failed", done.stdout)
        assert counts is not None, done.stdout
        assert int(counts[1]) >= 2 and int(counts[1]) + int(counts[2]) == episodes
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        assert store.status_counts("cmd")["finished"] == episodes
