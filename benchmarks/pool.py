"""Benchmark: a pool of model servers per model entry (issue 26), against fake servers.

Each fake OpenAI-compatible server (`latency_server.py`, its own process) answers after 200 ms
jittered by +-50% (the same mean) and answers at most 64 calls at once; the client caps each
server at 64 too, so a pool of N servers can make at most N x 64 / 0.2 s calls per second.

Part 1, side by side in one run: the experiment runner (Prisoner's Dilemma against TitForTat,
store and response cache on) against a pool of 1 server and of 4, with 64 x N episodes at once;
calls per second as a share of that limit (goal, 4 servers: >= 0.90).

Part 2: 4 servers, one killed (SIGKILL) 5 s into the run and restarted on its port 10 s later:
every episode must finish (0 lost); the timeline (answered calls per 1 s bucket, by server) shows
the rate drop to about 3/4 while it is down and recover once it is back.

    .venv/bin/python benchmarks/pool.py [--waves 4] [--fault-waves 8] [--skip-fault]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from latency_server import start, url_of

import stratagem.experiments.event_loop as event_loop
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.endpoints import EndpointEntry
from stratagem.experiments.model_entry import ModelEntry
from stratagem.experiments.runner import STORE_FILE, Runner, RunSummary
from stratagem.experiments.store import ResultStore

LATENCY, JITTER, CAP, ROUNDS = 0.2, 0.5, 64, 10
KILL_AT_S, DOWN_FOR_S = 5.0, 10.0


def limit(servers: int) -> float:
    return servers * CAP / LATENCY


def config(urls: list[str], out: Path, episodes: int, in_flight: int = 0) -> ExperimentConfig:
    """A pool of `urls` (each capped at CAP), or with `in_flight` one uncapped server, no pool."""
    pool = [EndpointEntry(base_url=u, max_concurrency=CAP) for u in urls]
    reach: dict[str, Any] = (
        {"base_url": urls[0]} if in_flight else {"endpoints": pool, "params": {"health_wait_s": 10}}
    )
    in_flight = in_flight or CAP * len(urls)
    return ExperimentConfig(
        name=f"pool-{len(urls)}",
        output=out,
        models=[
            ModelEntry(
                model="openai/fake",
                **reach,
                max_concurrency=in_flight,
                timeout_s=10,
            )
        ],
        games=["pd"],
        opponents=["TitForTat"],
        rounds=[ROUNDS],
        repetitions=episodes,
        concurrency=in_flight,
    )


class Run(NamedTuple):
    summary: RunSummary
    wall_s: float
    cpu_s: float
    """This process's CPU time: the client's cost, on the machine's cores."""
    began: datetime


def run(urls: list[str], out: Path, episodes: int, in_flight: int = 0) -> Run:
    runner = Runner(config(urls, out, episodes, in_flight), show_progress=False)
    began, start_s, cpu = datetime.now(UTC), time.perf_counter(), time.process_time()
    summary = event_loop.run(runner.run())
    return Run(summary, time.perf_counter() - start_s, time.process_time() - cpu, began)


def answered(out: Path, began: datetime) -> list[tuple[float, str]]:
    """(seconds since the run began, server) of every answered call, from the store."""
    with ResultStore(out / STORE_FILE) as store:
        calls = store.llm_calls()
    return [
        ((datetime.fromisoformat(c.created_at) - began).total_seconds(), c.response["endpoint"])
        for c in calls
        if c.error is None and not c.cached
    ]


class Servers:
    """N fake servers in child processes; one can be killed and restarted on its port."""

    def __init__(self, count: int, cap: int = CAP) -> None:
        self.processes = [start(LATENCY, JITTER, cap, 0) for _ in range(count)]
        self.urls = [url_of(p) for p in self.processes]

    def kill(self, index: int) -> None:
        self.processes[index].kill()
        self.processes[index].wait()

    def restart(self, index: int) -> None:
        port = int(self.urls[index].rsplit(":", 1)[1].split("/")[0])
        self.processes[index] = start(LATENCY, JITTER, CAP, port)
        url_of(self.processes[index])

    def close(self) -> None:
        for process in self.processes:
            process.terminate()
            process.wait(timeout=10)


def check(summary: RunSummary, episodes: int) -> None:
    if summary.finished != episodes or summary.failed or summary.stopped:
        raise SystemExit(f"the run lost episodes: {summary}")


CASES = {"pool of 1": (1, 0), "pool of 4": (4, 0), "no pool, 1 server uncapped": (1, 4 * CAP)}
"""Label: (servers, calls at once on one uncapped server through `base_url`; 0: a capped pool)."""


def throughput(waves: int) -> None:
    print(
        f"fake servers: {1000 * LATENCY:.0f} ms +-{100 * JITTER:.0f}% per reply, {CAP} at once "
        f"each; limit = servers x {CAP} / {LATENCY} s (uncapped: calls at once / {LATENCY} s); "
        f"{ROUNDS}-round PD episodes, as many at once as the limit allows, {waves} waves"
    )
    print(f"  {'run':<27} episodes   calls  wall s  calls/s  limit/s  ratio  CPU ms/call")
    rows: dict[str, float] = {}
    for label, (count, uncapped) in CASES.items():
        servers = Servers(count, 0 if uncapped else CAP)
        in_flight = uncapped or CAP * count
        try:
            with tempfile.TemporaryDirectory() as tmp:
                run(servers.urls, Path(tmp) / "warm", 2, uncapped)  # imports, connections
                episodes = in_flight * waves
                summary, wall, cpu, _ = run(servers.urls, Path(tmp) / "run", episodes, uncapped)
        finally:
            servers.close()
        check(summary, episodes)
        rate, most = summary.calls / wall, in_flight / LATENCY
        rows[label] = rate / most
        print(
            f"  {label:<27} {episodes:>8} {summary.calls:>7} {wall:>7.2f} {rate:>8.1f} "
            f"{most:>8.0f} {rows[label]:>6.3f} {1000 * cpu / summary.calls:>12.3f}",
            flush=True,
        )
    print(
        f"  pool of 4: {rows['pool of 4']:.3f} of the 4-server limit (goal >= 0.90), side by side "
        f"with 1 server: {rows['pool of 1']:.3f}; the client alone at {4 * CAP} at once (no pool, "
        f"no server cap) reaches {rows['no pool, 1 server uncapped']:.3f}"
    )


def fault(waves: int) -> None:
    episodes = CAP * 4 * waves
    print(
        f"\n4 servers, {episodes} episodes; server 4 killed {KILL_AT_S:g} s into the run, "
        f"restarted on its port {DOWN_FOR_S:g} s later"
    )
    servers = Servers(4)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run(servers.urls, Path(tmp) / "warm", 2)
            timers = [
                threading.Timer(KILL_AT_S, servers.kill, (3,)),
                threading.Timer(KILL_AT_S + DOWN_FOR_S, servers.restart, (3,)),
            ]
            for timer in timers:
                timer.start()
            summary, wall, _, began = run(servers.urls, Path(tmp) / "run", episodes)
            for timer in timers:
                timer.cancel()
            calls = answered(Path(tmp) / "run", began)
    finally:
        servers.close()
    lost = episodes - summary.finished
    print(
        f"  {summary.finished}/{episodes} episodes finished, {lost} lost, {summary.failed} "
        f"failed; {summary.calls} calls ({summary.failed_calls} failed), wall {wall:.1f} s"
    )
    timeline(calls, servers.urls, wall)
    check(summary, episodes)


def timeline(calls: list[tuple[float, str]], urls: list[str], wall: float) -> None:
    buckets: dict[int, Counter[str]] = {}
    for at, url in calls:
        buckets.setdefault(int(at), Counter())[url] += 1
    print("  second  calls/s  share of 4-server limit   by server 1..4")
    for second in range(int(wall) + 1):
        count = buckets.get(second, Counter())
        total = sum(count.values())
        each = " ".join(f"{count[u]:>4}" for u in urls)
        print(f"  {second:>6} {total:>8} {total / limit(4):>10.2f}   {each:>30}")

    def mean(first: float, last: float) -> float:
        rates = [sum(buckets.get(s, Counter()).values()) for s in range(int(first), int(last))]
        return statistics.fmean(rates) / limit(4) if rates else 0.0

    back = KILL_AT_S + DOWN_FOR_S
    print(
        f"  mean share of the 4-server limit: before the kill (1-{KILL_AT_S:g} s) "
        f"{mean(1, KILL_AT_S):.2f}; while down ({KILL_AT_S + 1:g}-{back:g} s) "
        f"{mean(KILL_AT_S + 1, back):.2f}; after the restart ({back + 2:g}-{int(wall) - 2} s) "
        f"{mean(back + 2, wall - 2):.2f}"
    )


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waves", type=int, default=4, help="episodes = 64 x servers x this")
    parser.add_argument("--fault-waves", type=int, default=8, help="the same, for part 2")
    parser.add_argument("--skip-fault", action="store_true")
    args = parser.parse_args(argv)
    throughput(args.waves)
    if not args.skip_fault:
        fault(args.fault_waves)


if __name__ == "__main__":
    main()
