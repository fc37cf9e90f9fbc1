"""Kill `stratagem run` with SIGKILL at random points, then let it finish: the store ends up equal
to an uninterrupted run's, and no call is paid twice beyond those in flight at each kill.

The model is an OpenAI-compatible server in this process with real per-call latency, so the kills
land while calls are in flight, and it counts every request it receives: what an API would bill,
including requests whose answer never reached the killed process.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.slow_openai import SlowOpenAIServer

from stratagem.experiments.config import load_config
from stratagem.experiments.runner import CACHE_FILE, STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.cache import ResponseCache

KEY_ENV = "STRATAGEM_CRASH_TEST_KEY"
KEY = "sk-crash-test-not-a-key"
LATENCY_S = 0.06
CONCURRENCY = 2
"""Episodes at once, and the model's max_concurrency: at most this many calls in flight."""
EPISODES, ROUNDS = 8, 4
KILLS = 4


def write_config(directory: Path, base_url: str) -> Path:
    # One opponent and one seed per episode: no two episodes ever send the same request, so even
    # concurrent episodes never pay twice for one answer and the counts below are exact.
    data: dict[str, Any] = {
        "name": "crash",
        "output": str(directory / "out"),
        "models": [
            {
                "model": "openai/slow-model",
                "base_url": base_url,
                "api_key_env": KEY_ENV,
                "max_concurrency": CONCURRENCY,
                "timeout_s": 30,
            }
        ],
        "agents": [{"name": "plain", "framing": "prisoner", "output": "choice"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [ROUNDS],
        "seeds": list(range(EPISODES)),
        "concurrency": CONCURRENCY,
    }
    directory.mkdir(parents=True, exist_ok=True)
    file = directory / "exp.yaml"
    file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return file


def spawn(file: Path, log: Path) -> subprocess.Popen[bytes]:
    script = Path(sys.executable).with_name("stratagem")
    command = (
        [str(script)]
        if script.exists()
        else [sys.executable, "-c", "from stratagem.cli import main; main()"]
    )
    env = {**os.environ, KEY_ENV: KEY}
    with log.open("ab") as out:
        return subprocess.Popen(
            [*command, "run", str(file), "--no-progress"], stdout=out, stderr=out, env=env
        )


def finish(file: Path, log: Path) -> None:
    proc = spawn(file, log)
    assert proc.wait(timeout=60) == 0, log.read_text(errors="replace")


def rounds_by_episode(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with ResultStore(db) as store:
        episodes = store.episodes("crash")
        assert [e.status for e in episodes] == ["finished"] * EPISODES
        return {
            e.id: [(r.round, r.actions, r.payoffs, r.valid) for r in store.rounds(e.id)]
            for e in episodes
        }


def paid_rows(db: Path) -> int:
    """Calls the store records as answered by the model (not the cache)."""
    with ResultStore(db) as store:
        return sum(not c.cached and c.error is None for c in store.llm_calls())


def intact(path: Path, scratch: Path) -> None:
    """A file left by a killed run opens, and SQLite finds nothing wrong in it.

    Checked on a copy (with its WAL): opening the original would recover it here, and the next
    run must be the one to open what the kill left behind.
    """
    if not path.exists():
        return
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    for part in path.parent.glob(f"{path.name}*"):
        shutil.copy2(part, scratch / part.name)
    conn = sqlite3.connect(scratch / path.name)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        conn.close()


def test_sigkilled_runs_resume_to_the_same_store_paying_only_for_calls_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(20240611)
    calls = EPISODES * ROUNDS

    # The uninterrupted run, in this process (the same runner, without a process start-up).
    with SlowOpenAIServer(LATENCY_S) as reference:
        ref_file = write_config(tmp_path / "reference", reference.base_url)
        monkeypatch.setenv(KEY_ENV, KEY)
        summary = asyncio.run(Runner(load_config(ref_file), show_progress=False).run())
        assert (summary.finished, summary.calls, summary.cached_calls) == (EPISODES, calls, 0)
        ref_bodies = reference.bodies()
    ref_db = tmp_path / "reference" / "out" / STORE_FILE
    # Uninterrupted: every request paid exactly once, recorded once, cached once.
    assert reference.count == len(ref_bodies) == calls
    assert paid_rows(ref_db) == calls
    with ResponseCache(ref_db.with_name(CACHE_FILE)) as cache:
        assert len(cache) == calls

    log = tmp_path / "crash.log"
    out = tmp_path / "crash" / "out"
    kills = 0
    with SlowOpenAIServer(LATENCY_S) as server:
        file = write_config(tmp_path / "crash", server.base_url)
        for _ in range(KILLS):
            proc = spawn(file, log)
            # Let it make 3-6 new requests, then kill it at a random moment within a call.
            target = server.count + rng.randint(3, 6)
            deadline = time.monotonic() + 30
            while server.count < target and proc.poll() is None:
                assert time.monotonic() < deadline, "the run made no progress"
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 1.5 * LATENCY_S))
            assert proc.poll() is None, "the run finished before it could be killed"
            os.kill(proc.pid, signal.SIGKILL)
            assert proc.wait(timeout=10) == -signal.SIGKILL
            kills += 1
            intact(out / STORE_FILE, tmp_path / "check")
            intact(out / CACHE_FILE, tmp_path / "check")
        with ResultStore(out / STORE_FILE) as store:
            done_before = store.status_counts("crash")["finished"]
        assert done_before < EPISODES  # the kills landed before the work was done
        finish(file, log)
        bodies = server.bodies()
    db = out / STORE_FILE
    # The last run skipped the episodes the killed runs had finished, and completed the rest.
    assert f"{done_before} already finished, {EPISODES - done_before} played" in log.read_text()

    # The same rounds, actions and payoffs as the uninterrupted run, episode by episode.
    assert rounds_by_episode(db) == rounds_by_episode(ref_db)
    # The same requests were made; only calls in flight at a kill were paid a second time.
    assert set(bodies) == set(ref_bodies)
    repeats = sum(n - 1 for n in bodies.values())
    assert repeats <= kills * CONCURRENCY
    assert server.count == calls + repeats <= reference.count + kills * CONCURRENCY
    paid = paid_rows(db)
    assert calls - kills * CONCURRENCY <= paid <= server.count
    with ResponseCache(db.with_name(CACHE_FILE)) as cache:
        assert len(cache) == calls
    with ResultStore(db) as store:
        replayed = sum(c.cached for c in store.llm_calls())
        assert replayed > 0  # interrupted episodes were replayed from the cache, for free
    print(
        f"kills={kills} requests={server.count} (uninterrupted {reference.count}) "
        f"repeats={repeats} paid_rows={paid} replayed={replayed} finished_before={done_before}"
    )
