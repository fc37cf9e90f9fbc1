"""`stratagem run` as a user of a paid API meets it: the plan first, --dry-run, confirmation above
the file's bounds (refused without a terminal unless --yes), honest exit codes with the reasons of
failed episodes, and Ctrl-C that leaves a store the next run continues."""

from __future__ import annotations

import logging
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


def interruptible() -> None:
    """In a child before it runs: SIGINT's default action, whatever the test process had."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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
        # As when the suite itself runs as a background job (`make test &`), which starts with
        # SIGINT ignored: the child must not inherit that, or Ctrl-C would never reach it.
        inherited = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            proc = subprocess.Popen(
                [COMMAND, "run", str(path), "--no-progress"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                preexec_fn=interruptible,
            )  # fmt: skip
        finally:
            signal.signal(signal.SIGINT, inherited)
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
        # Nobody writes the directory now: its unfinished episode is not "running".
        for command in ("status", "show"):
            shown = subprocess.run(
                [COMMAND, command, str(tmp_path / "out")], capture_output=True, text=True,
                env={**env, "COLUMNS": "200"}, timeout=60,
            )  # fmt: skip
            assert shown.returncode == 0 and "interrupted" in shown.stdout, shown.stdout
            assert "running" not in shown.stdout
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


def test_the_plan_counts_the_episodes_of_this_grid_not_the_experiments(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flaky: list[Request],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A free run, then the same file with a priced model under the same name: its episodes are
    new ones, so the plan, --dry-run and the confirmation bound count all of them."""
    free = write(tmp_path, models=[{"id": "m", "model": "scripted/flaky"}], seeds=[0, 1, 2])
    code, out, _ = cli(capsys, "run", str(free), "--no-progress")
    assert code == 0 and "3 played" in out
    monkeypatch.setenv("K", "sk-not-a-key")
    with SlowOpenAIServer(0.0) as server:
        priced = {"id": "m", "model": "openai/priced", "base_url": server.base_url,
                  "api_key_env": "K", "price": {"input": 100_000, "output": 100_000}}  # fmt: skip
        path = write(tmp_path, models=[priced], seeds=[0, 1, 2])
        code, out, _ = cli(capsys, "run", str(path), "--dry-run")
        assert code == 0
        assert out.startswith("plan: 3 episodes to play (0 already finished), about 3 model calls")
        code, out, err = cli(capsys, "run", str(path), "--no-progress")
        assert code == 2 and server.count == 0
        assert "plan: 3 episodes to play (0 already finished)" in out
        assert "needs a confirmation (more than $1.00 (confirm.usd))" in err
        # Growing the grid plans only what is not played yet: the three free episodes are not.
        more = write(tmp_path, models=[{"id": "m", "model": "scripted/flaky"}], seeds=[0, 1, 2, 3])
        code, out, _ = cli(capsys, "run", str(more), "--dry-run")
        assert out.startswith("plan: 1 episode to play (3 already finished), about 1 model call")


def test_a_run_above_the_calls_bound_asks_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flaky: list[Request]
) -> None:
    """A free model's run is bounded by its size too: `confirm.calls`, 100,000 by default."""
    path = write(tmp_path, seeds=[0, 1, 2], rounds=[4], confirm={"calls": 11})
    code, _, err = cli(capsys, "run", str(path), "--no-progress")
    assert code == 2 and flaky == []
    assert "needs a confirmation (more than 11 model calls (confirm.calls))" in err
    huge = write(tmp_path, seeds=list(range(10_000)), rounds=[20], confirm={"episodes": 10**6})
    code, _, err = cli(capsys, "run", str(huge), "--no-progress")
    assert code == 2 and flaky == []
    assert "more than 100,000 model calls (confirm.calls)" in err  # 200,000 calls


def test_the_budget_line_says_what_was_paid_once_the_calls_in_flight_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two episodes at once, $0.30 a call, a $1.00 cap: one model answers in 10 ms, the other
    in 2 s. The fast one reaches the cap on its 4th call ($1.20) while the slow one's first call
    is under way; that call is paid too, and the last line says $1.50, as the store does."""
    monkeypatch.setenv("K", "sk-not-a-key")
    price = {"input": 0, "output": 300_000}  # each reply is 1 output token: $0.30
    with SlowOpenAIServer(0.01) as fast, SlowOpenAIServer(2.0) as slow:
        models = [{"id": name, "model": "openai/m", "base_url": server.base_url,
                   "api_key_env": "K", "price": price}
                  for name, server in (("fast", fast), ("slow", slow))]  # fmt: skip
        path = write(tmp_path, models=models, rounds=[10], concurrency=2, budget={"max_usd": 1.0})
        code, out, err = cli(capsys, "run", str(path), "--no-progress", "--yes")
        assert (code, fast.count, slow.count) == (3, 4, 1)
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        assert store.call_totals("cmd")["paid_usd"] == pytest.approx(1.5)
    (line,) = err.strip().splitlines()
    assert line.startswith("stopped: budget reached: spent $1.5000 of the $1.0000 USD cap")
    assert "(calls already under way when it was reached were paid too)" in line
    assert "$1.5000, " in out  # the run's summary line: the same figure


def test_status_says_running_only_while_a_process_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run under way holds the directory's writer lock; `status` and `show` probe it (and a
    run that starts during the probe still gets the lock)."""
    from stratagem.experiments.lock import WriterLock, writer_active

    folder = tmp_path / "out"
    with ResultStore(folder / STORE_FILE) as store:
        store.create_experiment("e", "e", {"name": "e"})
        store.add_episode("ep1", "e", "dilemma", [{"name": "a"}, {"name": "b"}], seed=0)
        store.start_episode("ep1")
    assert not writer_active(folder)
    with WriterLock(folder):
        assert writer_active(folder)
        code, out, _ = cli(capsys, "status", str(folder))
        assert code == 0 and "1 running" in out
    code, out, _ = cli(capsys, "status", str(folder))
    assert code == 0 and "1 interrupted" in out and "running" not in out


def test_unreadable_answers_are_counted_in_the_summary_not_logged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """A PGM Undercover seat whose self-diagnoses cannot be read: each is stored as unreadable
    and the run's summary counts them, instead of an unlabelled stderr line per answer."""
    register_script("unread", lambda request, sample: "I have no idea.")
    try:
        path = write(
            tmp_path,
            models=[{"model": "scripted/unread"}],
            agents=[
                {"name": "pgm", "kind": "pgm", "max_reasks": 0},
                {"name": "magic", "kind": "magic", "max_reasks": 0},
            ],
            games=["undercover/0"],
            opponents=[],
            lineups=[{"challenger": "pgm", "defenders": "magic"}],
        )
        code, out, err = cli(capsys, "run", str(path), "--no-progress")
    finally:
        _REGISTERED.pop("unread", None)
    assert code == 0, err
    assert err == "" and not [r for r in caplog.records if r.levelno >= logging.WARNING]
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        unread = sum(
            a.parsed == {"value": None, "relevant": False}
            for e in store.episodes()
            for a in store.answers(e.id)
        )
    assert unread > 0
    assert f"\n{unread} answers (questions, probes, analyses) could not be read" in out


def test_a_run_written_to_a_file_says_how_far_it_is_while_it_runs(tmp_path: Path) -> None:
    """Issue 33 (N7): with its output in a file (no terminal), the bar showed only at the end;
    now a plain line comes at least every STRATAGEM_PROGRESS_EVERY seconds while it runs."""
    episodes = 6
    with SlowOpenAIServer(0.25) as server:
        path = write(
            tmp_path,
            models=[{"model": "openai/slow", "base_url": server.base_url, "api_key_env": "K",
                     "max_concurrency": 1}],
            seeds=list(range(episodes)), rounds=[2], concurrency=1,
        )  # fmt: skip
        env = {**os.environ, "K": "sk-not-a-key", "STRATAGEM_PROGRESS_EVERY": "0.2"}
        log = tmp_path / "run.log"
        with log.open("w") as sink:
            proc = subprocess.Popen(
                [COMMAND, "run", str(path)], stdout=sink, stderr=sink, text=True, env=env
            )
            try:
                deadline = time.monotonic() + 60
                while server.count < 6:  # three of the six episodes played
                    assert time.monotonic() < deadline and proc.poll() is None
                    time.sleep(0.01)
                time.sleep(0.1)
                assert proc.poll() is None, "the run ended before its log was read"
                so_far = re.findall(r"^cmd: (\d+)/6 episodes", log.read_text(), re.MULTILINE)
                assert so_far and 0 < int(so_far[-1]) < episodes, log.read_text()
            finally:
                assert proc.wait(timeout=60) == 0, log.read_text()
    done = [int(n) for n in re.findall(r"^cmd: (\d+)/6 episodes", log.read_text(), re.MULTILINE)]
    assert done == sorted(done) and done[0] == 0 and done[-1] == episodes
    assert "━" not in log.read_text().split("experiment cmd:")[0]  # no bar drawn into the file


def test_a_bad_progress_interval_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRATAGEM_PROGRESS_EVERY", "soon")
    code, _, err = cli(capsys, "run", str(write(tmp_path, models=[{"model": "scripted/echo"}])))
    assert code == 2
    assert err.strip() == (
        "error: STRATAGEM_PROGRESS_EVERY='soon': give the seconds between two progress lines, "
        "a number >= 0"
    )
