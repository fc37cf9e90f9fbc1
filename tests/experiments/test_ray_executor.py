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
from support.ray_cluster import LocalCluster, lone_node_cluster
from support.slow_openai import SlowOpenAIServer

from stratagem.errors import StratagemError
from stratagem.experiments.config import load_config
from stratagem.experiments.distributed.coordinator import RayExecutor
from stratagem.experiments.distributed.shared_caps import Held, SharedCaps
from stratagem.experiments.endpoint_progress import read_live_figures
from stratagem.experiments.run_session import RunSession
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
    ray_cluster: LocalCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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
        answered: set[str] = set()
        play = executor.play

        async def play_noting_answers(todo: Any, session: RunSession) -> None:
            # A call's record and its cache row come in one message batch, record first: once
            # recorded, a replay of its episode finds the answer cached.
            record = session.record

            def recording(model: str, context: Any, *args: Any) -> None:
                record(model, context, *args)
                if args[1] is not None and context.episode_id is not None:
                    answered.add(context.episode_id)

            session.record = recording
            await play(todo, session)

        monkeypatch.setattr(executor, "play", play_noting_answers)

        async def kill_one() -> None:
            while len(executor.live) < 2:
                await asyncio.sleep(0.005)
            # Both workers started, and each episode the first one plays (its share: 2) has an
            # answered call stored and cached; one more is in flight.
            victim = executor.live[0]
            pid = await victim.handle.pid.remote()
            while len(victim.playing) < 2 or not answered.issuperset(victim.playing):
                await asyncio.sleep(0.005)
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

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


def test_a_cluster_whose_only_node_is_marked_dead_stops_the_run_in_one_line(
    tmp_path: Path,
) -> None:
    """Issue 33: the only node's raylet killed (the node marked dead, the cluster's GCS alive),
    the coordinator waited forever for a node to start a replacement worker on, saying nothing.
    It now stops in one line with a non-zero status, and running the command again (here with
    the local executor) finishes the store as an uninterrupted run does."""
    with SlowOpenAIServer(0.1) as reference:
        run(write(tmp_path / "ref.yaml", slow_grid(tmp_path / "ref", reference.base_url)))
    log = tmp_path / "run.log"
    db = tmp_path / "ray" / STORE_FILE
    with SlowOpenAIServer(0.1) as server, lone_node_cluster() as cluster:
        file = write(tmp_path / "ray.yaml", slow_grid(tmp_path / "ray", server.base_url))
        proc = spawn(file, log, cluster.address)
        deadline = time.monotonic() + 120
        while server.count < 12 and proc.poll() is None:
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.01)
        assert proc.poll() is None, log.read_text(errors="replace")
        cluster.cluster.head_node.kill_raylet()
        killed = time.monotonic()
        try:
            code = proc.wait(timeout=45)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("the coordinator hung after the only node died")
        took = time.monotonic() - killed
        errors = [line for line in log.read_text().splitlines() if line.startswith("error:")]
        assert code == 2 and len(errors) == 1, log.read_text(errors="replace")
        assert errors[0].startswith("error: no Ray node is alive: "), errors
        assert "run the command again to continue" in errors[0]
        with ResultStore(db) as store:
            before = store.status_counts("slow")["finished"]
        assert before < 8
        again = run(file)  # the same file, with the local executor
    assert (again.skipped, again.finished, again.failed) == (before, 8 - before, 0)
    assert episodes_rounds(db) == episodes_rounds(tmp_path / "ref" / STORE_FILE)
    print(f"stopped {took:.1f} s after the raylet was killed: {errors[0]}")


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
    workers took its slot in the one quota state the coordinator keeps.

    The cap is about half of what the 18 episodes need, so some finish whatever order the workers
    play in: of the ~48 calls it pays for, at most 6 episodes x 4 calls are unfinished ones'."""
    capped = grid(tmp_path / "capped", budget={"max_tokens": 8000})
    summary = run(write(tmp_path / "capped.yaml", capped), ray_cluster)
    assert summary.stopped is not None and "budget reached" in summary.stopped
    assert 0 < summary.finished < 18 and summary.failed > 0
    with ResultStore(tmp_path / "capped" / STORE_FILE) as store:
        totals = store.call_totals()
        largest = max((c.input_tokens or 0) + (c.output_tokens or 0) for c in store.llm_calls())
    assert totals["paid_tokens"] == summary.tokens >= 8000
    # Calls admitted before the cap was reached finish: at most one per episode in flight.
    assert summary.tokens - 8000 < 6 * largest

    limited = grid(tmp_path / "limited")
    limited["models"] = [{"model": "scripted/random:3", "limits": {"requests_per_minute": 1000}}]
    summary = run(write(tmp_path / "limited.yaml", limited), ray_cluster)
    assert (summary.finished, summary.calls) == (18, 90)
    conn = sqlite3.connect(tmp_path / "limited" / LIMITS_FILE)
    assert conn.execute("SELECT SUM(requests) FROM usage").fetchone() == (90,)
    conn.close()


def capped_grid(output: Path, model: dict[str, Any]) -> dict[str, Any]:
    """8 episodes of 3 rounds, all in flight at once over 2 workers: every call contends."""
    return grid(
        output, name="capped", models=[{"timeout_s": 30, **model}],
        agents=[{"name": "plain", "framing": "prisoner", "output": "choice"}],
        games=["dilemma"], opponents=["TitForTat"], rounds=[3], seeds=list(range(8)),
        concurrency=8,
    )  # fmt: skip


@pytest.mark.parametrize("cap", [1, 5])
def test_a_server_s_max_concurrency_holds_for_all_workers_together(
    ray_cluster: LocalCluster, tmp_path: Path, cap: int
) -> None:
    """Issue 33: each worker had ceil(cap / workers) slots (cap 1 with 2 workers: 2 calls at
    once at the server; cap 5: 6). The coordinator now holds the cap for all of them."""
    with SlowOpenAIServer(0.2) as server:
        model = {"model": "openai/slow-model", "base_url": server.base_url}
        file = write(tmp_path / "x.yaml", capped_grid(tmp_path / "out", model | {
            "max_concurrency": cap,
        }))  # fmt: skip
        summary = run(file, ray_cluster)
    assert (summary.finished, summary.failed, summary.calls) == (8, 0, 24)
    assert server.count == 24
    # Never more (the old shares gave 2 and 6); how near the cap the two get depends on timing.
    assert 1 <= server.peak <= cap


def test_a_pool_s_server_caps_and_quotas_hold_for_all_workers_together(
    ray_cluster: LocalCluster, tmp_path: Path
) -> None:
    """Issue 33: a server's cap was divided among workers rounded up, and its quota rounded down
    but at least 1, so 2 workers sent 2 calls at once to a server of cap 1 and 2 calls in a
    minute to one of 1 a minute. The coordinator now holds both for every worker's pool."""
    with SlowOpenAIServer(0.2) as a, SlowOpenAIServer(0.2) as b:
        servers = [
            {"base_url": a.base_url, "max_concurrency": 1},
            {"base_url": b.base_url, "limits": {"requests_per_minute": 1}},
        ]
        model = {"model": "openai/slow-model", "endpoints": servers,
                 "params": {"health_wait_s": 5}}  # fmt: skip
        summary = run(write(tmp_path / "x.yaml", capped_grid(tmp_path / "out", model)), ray_cluster)
        counts, peak = (a.count, b.count), a.peak
    assert (summary.finished, summary.failed, summary.calls) == (8, 0, 24)
    assert peak == 1 and counts == (23, 1), (peak, counts)


def test_the_shared_caps_are_servers_and_a_dead_worker_s_slots_come_back() -> None:
    """A server's caps are held by the coordinator, an in-process model's are each worker's;
    what a worker held is given back when it dies, or the run would lose those slots."""
    server = ModelConfig(
        model="openai/x",
        max_concurrency=1,
        endpoints=(
            EndpointConfig(base_url="http://a/v1", max_concurrency=1),
            EndpointConfig(base_url="http://b/v1"),
        ),
    )
    quota = ModelConfig(
        model="openai/y",
        endpoints=(EndpointConfig(base_url="http://c/v1", limits=Limits(requests_per_day=2)),),
    )
    plain = ModelConfig(model="openai/z", endpoints=(EndpointConfig(base_url="http://d/v1"),))
    local = ModelConfig(model="local/gemma-3-270m", max_concurrency=1)
    caps = SharedCaps({"s": server, "q": quota, "p": plain, "l": local})
    assert set(caps.slots) == {"s"} and set(caps.servers) == {"s", "q"}

    async def main() -> None:
        dead, alive = Held(caps), Held(caps)
        assert dead.try_slot("s") and not alive.try_slot("s")
        assert dead.try_server("s", ("http://a/v1",), 0) == ("http://a/v1", None)
        assert await alive.server("s", ("http://a/v1",), 0, 0.05) == (None, None)
        waiting = asyncio.ensure_future(alive.slot("s"))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        alive.free_slot("s")  # not its own: changes nothing
        await asyncio.sleep(0.05)
        assert not waiting.done()
        dead.release()
        await asyncio.wait_for(waiting, 1)
        assert alive.try_server("s", ("http://a/v1",), 0) == ("http://a/v1", None)
        with pytest.raises(StratagemError, match="'l', which has no cap"):
            alive.try_slot("l")
        day = [
            dead.try_server("q", ("http://c/v1",), 0)[0],
            alive.try_server("q", ("http://c/v1",), 0)[0],
        ]
        assert day == ["http://c/v1"] * 2 and alive.try_server("q", ("http://c/v1",), 0)[0] is None

    asyncio.run(main())


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
    """Ray would retry the connection for minutes; the run says why it cannot start, before its
    plan (as its dry run does)."""
    port = free_port()  # free a moment ago: nothing listens on it
    file = write(tmp_path / "x.yaml", grid(tmp_path / "out"))
    args = ["--executor", "ray", "--address", f"127.0.0.1:{port}", "--yes", "--no-progress"]
    code, out, err = cli(capsys, "run", str(file), *args)
    assert (
        code == 2
        and out == ""
        and err.strip().splitlines()
        == [f"error: {file}: cannot connect to Ray at 127.0.0.1:{port}: Connection refused"]
    ), err
