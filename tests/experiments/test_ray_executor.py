"""`--executor ray` on a real two-node Ray cluster on 127.0.0.1 (the `ray_cluster` fixture).

Each run is compared with the local executor's run of the same file: the same episodes (ids,
rounds, actions, payoffs, events), the same calls, and spend counted once. Faults are real: a
worker's process is SIGKILLed while its calls are in flight at a server that counts every request
it receives (what an API would bill), and so is the coordinator, run as `stratagem run`.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.fake_openai import FakeOpenAIServer
from support.llama_server import free_port
from support.ray_cluster import LocalCluster
from support.slow_openai import SlowOpenAIServer

from stratagem.errors import StratagemError
from stratagem.experiments.config import load_config
from stratagem.experiments.distributed.coordinator import RayExecutor, worker_models
from stratagem.experiments.endpoint_progress import read_live_figures
from stratagem.experiments.runner import LIMITS_FILE, STORE_FILE, Runner, RunSummary
from stratagem.experiments.store import ResultStore
from stratagem.llm.ratelimit import Limits
from stratagem.llm.registry import EndpointConfig, ModelConfig

KEY_ENV = "STRATAGEM_RAY_TEST_KEY"
KEY = "sk-ray-test-not-a-key"
"""Set for the coordinator only: the cluster's nodes were started without it."""
REPO = Path(__file__).resolve().parents[2]


def write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def grid(output: Path, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "ray",
        "output": str(output),
        "models": [{"model": "scripted/random:3"}],
        "agents": [{"name": "plain", "output": "choice"}],
        "games": ["dilemma", "delight"],
        "opponents": ["TitForTat", "AlwaysDefect", "AlwaysCooperate"],
        "rounds": [5],
        "seeds": [0, 1, 2],
        "concurrency": 6,
        "retry": {"base_delay": 0},
    }
    return data | overrides


def run(file: Path, cluster: LocalCluster | None = None, **options: Any) -> RunSummary:
    config = load_config(file)
    if cluster is None:
        return asyncio.run(Runner(config, show_progress=False).run())
    options = {"address": cluster.address, "workers": 2} | options
    runner = Runner(config, executor="ray", executor_options=options, show_progress=False)
    return asyncio.run(runner.run())


def episodes(db: Path) -> dict[str, Any]:
    """Every episode as its content: status, payoffs, rounds, events, and its calls' requests
    and answers in order (what a run must store whichever process played it)."""
    with ResultStore(db) as store:
        calls: dict[str, list[Any]] = {}
        for c in store.llm_calls():
            request = json.loads(json.dumps(c.request))
            calls.setdefault(c.episode_id or "", []).append(
                (request["after_events"], request["purpose"], request["messages"], c.text)
            )
        return {
            e.id: (
                e.status,
                e.payoffs,
                [(r.round, r.actions, r.payoffs, r.valid) for r in store.rounds(e.id)],
                [(v.seq, v.kind, v.data, v.visible_to) for v in store.events(e.id)],
                sorted(calls.get(e.id, []), key=repr),
            )
            for e in store.episodes()
        }


def test_a_grid_on_two_nodes_stores_what_the_local_executor_stores(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    local = run(write(tmp_path / "local.yaml", grid(tmp_path / "local")))
    on_ray = run(write(tmp_path / "ray.yaml", grid(tmp_path / "ray")), ray_cluster)
    assert (on_ray.finished, on_ray.failed, on_ray.calls) == (18, 0, 90)
    assert (on_ray.calls, on_ray.tokens) == (local.calls, local.tokens)
    mine = episodes(tmp_path / "ray" / STORE_FILE)
    assert len(mine) == 18 and mine == episodes(tmp_path / "local" / STORE_FILE)
    # Run again: every episode is finished, nothing is played or paid.
    again = run(write(tmp_path / "ray.yaml", grid(tmp_path / "ray")), ray_cluster)
    assert (again.skipped, again.finished, again.calls) == (18, 0, 0)


def test_the_quickstart_on_the_embedded_model_plays_the_same_episodes(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    """examples/quickstart.yaml with 3 rounds instead of 10 (the test's time) and the model's KV
    cache reuse off: the embedded model loaded once in each of two workers plays the episodes
    the local executor plays. With reuse on, an answer can depend on which prompts the model's
    cache held before (the same prompt evaluated in other batches: logits that differ in the
    last bits, enough to flip a sampled near-tie), and which episodes share a worker's model
    differs from one process's."""
    quickstart = yaml.safe_load((REPO / "examples" / "quickstart.yaml").read_text("utf-8"))
    quickstart["models"][0]["params"] = {"kv_reuse": False}
    stored = {}
    for name, cluster in (("local", None), ("ray", ray_cluster)):
        file = write(tmp_path / f"{name}.yaml", quickstart | {
            "output": str(tmp_path / name), "rounds": [3],
        })  # fmt: skip
        summary = run(file, cluster)
        assert (summary.finished, summary.failed, summary.calls) == (9, 0, 27)
        with ResultStore(tmp_path / name / STORE_FILE) as store:
            stored[name] = {
                e.id: (e.payoffs, [(r.actions, r.payoffs, r.valid) for r in store.rounds(e.id)])
                for e in store.episodes(status="finished")
            }
    assert len(stored["ray"]) == 9 and stored["ray"] == stored["local"]


def slow_grid(output: Path, base_url: str, **overrides: Any) -> dict[str, Any]:
    """8 episodes of 6 rounds against a server with real latency: no two episodes send the same
    request, so every count below is exact."""
    return grid(
        output,
        name="slow",
        models=[{
            "model": "openai/slow-model", "base_url": base_url, "timeout_s": 30,
        }],
        agents=[{"name": "plain", "framing": "prisoner", "output": "choice"}],
        games=["dilemma"], opponents=["TitForTat"], rounds=[6], seeds=list(range(8)),
        concurrency=4,
    ) | overrides  # fmt: skip


def paid_rows(db: Path) -> int:
    with ResultStore(db) as store:
        return sum(not c.cached and c.error is None for c in store.llm_calls())


def test_a_killed_worker_s_episodes_finish_elsewhere_and_spend_is_counted_once(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    with SlowOpenAIServer(0.1) as reference:
        run(write(tmp_path / "ref.yaml", slow_grid(tmp_path / "ref", reference.base_url)))
        assert reference.count == 48

    with SlowOpenAIServer(0.1) as server:
        file = write(tmp_path / "ray.yaml", slow_grid(tmp_path / "ray", server.base_url))
        runner = Runner(
            load_config(file),
            executor="ray",
            executor_options={"address": ray_cluster.address, "workers": 2},
            show_progress=False,
        )
        executor = runner.executor
        assert isinstance(executor, RayExecutor)
        killed: list[int] = []

        async def kill_one() -> None:
            while len(executor.handles) < 2:
                await asyncio.sleep(0.005)
            # Both workers ready (each answers only once it has built its models), then about
            # two calls answered in each of their episodes: the first one's have answered calls
            # and one in flight.
            pids = [await handle.pid.remote() for handle in executor.handles]
            started = server.count
            while server.count < started + 8:
                await asyncio.sleep(0.005)
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

        async def main() -> RunSummary:
            killer = asyncio.ensure_future(kill_one())
            summary = await runner.run()
            await killer
            return summary

        summary = asyncio.run(main())
    assert killed
    db = tmp_path / "ray" / STORE_FILE
    # Every episode finished once, exactly as in the uninterrupted local run.
    assert (summary.finished, summary.failed) == (8, 0)
    assert episodes_rounds(db) == episodes_rounds(tmp_path / "ref" / STORE_FILE)
    # Spend shown is what the store records as paid; the server saw those calls, plus at most
    # the dead worker's calls in flight (2: its share of the 4), whose answers died with it.
    paid = summary.calls - summary.cached_calls - summary.failed_calls
    assert paid == paid_rows(db)
    assert 0 <= server.count - paid <= 2
    # Its episodes' earlier calls were answered by the cache when another worker replayed them.
    assert summary.cached_calls > 0
    assert len(summary.replayed) == 1 and summary.replayed[0].endswith(" (2 episodes)")
    print(
        f"killed worker pid {killed[0]}: {summary.finished} of 8 finished, {summary.calls} calls "
        f"recorded ({summary.cached_calls} from the cache), {paid} paid rows, server saw "
        f"{server.count} (uninterrupted: 48); {summary.replayed}"
    )


def episodes_rounds(db: Path) -> dict[str, Any]:
    with ResultStore(db) as store:
        return {
            e.id: (e.status, [(r.round, r.actions, r.payoffs) for r in store.rounds(e.id)])
            for e in store.episodes()
        }


def spawn(file: Path, log: Path, address: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-c", "from stratagem.cli import main; main()"]
    args = ["run", str(file), "--no-progress", "--executor", "ray", "--address", address]
    with log.open("ab") as out:
        return subprocess.Popen(
            [*command, *args, "--workers", "2"],
            stdout=out,
            stderr=out,
        )


def test_a_killed_coordinator_continues_when_run_again(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    with SlowOpenAIServer(0.1) as reference:
        run(write(tmp_path / "ref.yaml", slow_grid(tmp_path / "ref", reference.base_url)))
    log = tmp_path / "run.log"
    with SlowOpenAIServer(0.1) as server:
        file = write(tmp_path / "ray.yaml", slow_grid(tmp_path / "ray", server.base_url))
        proc = spawn(file, log, ray_cluster.address)
        deadline = time.monotonic() + 120
        while server.count < 12 and proc.poll() is None:
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.01)
        assert proc.poll() is None, log.read_text(errors="replace")
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
        db = tmp_path / "ray" / STORE_FILE
        with ResultStore(db) as store:
            before = store.status_counts("slow")["finished"]
        assert before < 8
        again = spawn(file, log, ray_cluster.address)
        assert again.wait(timeout=180) == 0, log.read_text(errors="replace")
    assert f"{before} already finished, {8 - before} played" in log.read_text()
    assert episodes_rounds(db) == episodes_rounds(tmp_path / "ref" / STORE_FILE)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def test_a_worker_that_cannot_start_stops_the_run_in_one_line(
    ray_cluster: LocalCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each node reads keys from its own environment (none travels through Ray): a node without
    the key cannot build the model, and the run says so at once instead of replacing workers."""
    monkeypatch.setenv(KEY_ENV, KEY)
    data = grid(tmp_path / "out")
    data["models"] = [{"model": "openai/gpt-4o-mini", "api_key_env": KEY_ENV}]
    with pytest.raises(StratagemError) as raised:
        run(write(tmp_path / "nokey.yaml", data), ray_cluster)
    message = str(raised.value)
    assert message.startswith("a Ray worker could not start: ") and "\n" not in message
    assert KEY_ENV in message and KEY not in message
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        assert store.call_totals()["calls"] == 0


def test_the_budget_and_the_quotas_are_the_coordinator_s(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    """Two workers draw on one budget: the run stops at the cap, having paid what it shows (the
    scripted model's tokens are words, so the figures are exact); and every paid call of both
    workers took its slot in the one quota state the coordinator keeps."""
    capped = grid(tmp_path / "capped", budget={"max_tokens": 3000})
    summary = run(write(tmp_path / "capped.yaml", capped), ray_cluster)
    assert summary.stopped is not None and "budget reached" in summary.stopped
    assert 0 < summary.finished < 18 and summary.failed > 0
    with ResultStore(tmp_path / "capped" / STORE_FILE) as store:
        totals = store.call_totals()
        largest = max((c.input_tokens or 0) + (c.output_tokens or 0) for c in store.llm_calls())
    assert totals["paid_tokens"] == summary.tokens >= 3000
    # Calls admitted before the cap was reached finish: at most one per episode in flight.
    assert summary.tokens - 3000 < 6 * largest

    limited = grid(tmp_path / "limited")
    limited["models"] = [{"model": "scripted/random:3", "limits": {"requests_per_minute": 1000}}]
    summary = run(write(tmp_path / "limited.yaml", limited), ray_cluster)
    assert (summary.finished, summary.calls) == (18, 90)
    conn = sqlite3.connect(tmp_path / "limited" / LIMITS_FILE)
    assert conn.execute("SELECT SUM(requests) FROM usage").fetchone() == (90,)
    conn.close()


def test_a_server_s_concurrency_is_shared_among_workers_and_a_local_model_s_is_not() -> None:
    server = ModelConfig(
        model="openai/x",
        max_concurrency=8,
        endpoints=(
            EndpointConfig(
                base_url="http://a/v1",
                max_concurrency=5,
                limits=Limits(requests_per_minute=100, tokens_per_day=2),
            ),
            EndpointConfig(base_url="http://b/v1"),
        ),
    )
    local = ModelConfig(model="local/gemma-3-270m", max_concurrency=1)
    shared = worker_models({"s": server, "l": local}, 3)
    assert shared["s"].max_concurrency == 3
    assert shared["s"].endpoints is not None
    assert [e.max_concurrency for e in shared["s"].endpoints] == [2, None]
    assert shared["s"].endpoints[0].limits == Limits(requests_per_minute=33, tokens_per_day=1)
    assert shared["s"].endpoints[1].limits == Limits()
    assert shared["l"] == local


def test_a_pool_s_servers_are_shown_as_the_workers_saw_them(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    """Each worker holds its own pool of the model's servers and reports its figures; the
    coordinator's endpoints.json adds them up: as many calls per server as it served."""
    with FakeOpenAIServer(["ok"], repeat=True) as a, FakeOpenAIServer(["ok"], repeat=True) as b:
        data = grid(tmp_path / "out", seeds=[0, 1])
        servers = [{"base_url": a.base_url}, {"base_url": b.base_url}]
        data["models"] = [
            {"model": "openai/fake", "endpoints": servers, "params": {"health_wait_s": 5}}
        ]
        summary = run(write(tmp_path / "pool.yaml", data), ray_cluster)
        served = {a.base_url: len(a.served), b.base_url: len(b.served)}
    assert (summary.finished, summary.calls) == (12, 60)
    live = read_live_figures(tmp_path / "out")
    assert live is not None and live.experiment == summary.experiment
    shown = {url: f.calls for (_, url), f in live.servers.items()}
    assert shown == served and sum(served.values()) == 60
    assert all(f.state == "healthy" for f in live.servers.values())


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (["--executor", "local", "--address", "auto"], "--address and --workers are options"),
        (["--executor", "cluster"], "unknown executor 'cluster'"),
    ],
)
def test_bad_executor_options_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    file = write(tmp_path / "x.yaml", grid(tmp_path / "out"))
    executor = [] if "--executor" in args else ["--executor", "ray"]
    code, _, err = cli(capsys, "run", str(file), *executor, *args, "--dry-run")
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out" / STORE_FILE).exists()


def test_an_address_nothing_answers_on_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ray would retry the connection for minutes; the run says why it cannot start."""
    port = free_port()  # free a moment ago: nothing listens on it
    file = write(tmp_path / "x.yaml", grid(tmp_path / "out"))
    args = ["--executor", "ray", "--address", f"127.0.0.1:{port}", "--yes", "--no-progress"]
    code, _, err = cli(capsys, "run", str(file), *args)
    lines = [line for line in err.strip().splitlines() if not line.startswith("plan:")]
    assert code == 2 and lines == [f"error: cannot connect to Ray at 127.0.0.1:{port}: "
                                   "Connection refused"], err  # fmt: skip
