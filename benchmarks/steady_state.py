"""Benchmark: the rate at 256 calls in flight once running, and the bounds of two other designs.

`throughput.py` times a fixed amount of work from its first call to its last, so its ratios
include the start (256 tasks sending their first calls together) and the drain. This one measures
the rate once running, as in a long run: the calls the fake server (`latency_server.py`) received
in a window of `--window` seconds that opens `--warm` seconds after the start, while the client
keeps calling (once running, it answers as many as it receives). CPU per call is the window's CPU
time of every client process over those calls.

- pipeline: 256 tasks calling through `build_client` (no cache, no limits), started together,
  over the `openai` provider (aiohttp) and over the bare reference transport;
- runner: PD vs TitForTat, 10 rounds, 4 x 256 episodes at concurrency 256, in one process;
- the same runner with nothing written per call (its store's calls, rounds and events, and the
  response cache, made no-ops in that process): the most that moving those writes to a thread or
  a process of their own could give;
- the same 1,024 episodes as 2 processes of 512 at concurrency 128, each with its own results
  directory, sharing nothing but the server: what a multi-process executor could reach on this
  machine at best (a real one would add coordination: one store, one budget).

Every client runs in a process of its own (started before the clock, imports done); the rows
alternate, `--repeat` times, and the medians are printed. The goals are set against a server whose
latency never varies, which keeps tasks in step: the replies that arrive while the client works
through a batch are answered together in the next, and return together. With `--jitter J` every
row is also measured against a server whose latency varies uniformly by up to J of its mean, as a
real API's does, alternated with the fixed one.

    .venv/bin/python benchmarks/steady_state.py [--window 3] [--warm 1] [--repeat 3] [--jitter 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from latency_server import serving
from throughput import PROVIDER, TRANSPORTS, Transport, pipeline_call, run_experiment, server_stats

import stratagem.experiments.event_loop as event_loop
from stratagem.experiments.store import ResultStore
from stratagem.llm.cache import ResponseCache
from stratagem.llm.pipeline import build_client
from stratagem.llm.registry import ModelConfig

LATENCY = 0.2
IN_FLIGHT = 256
EPISODES = 4 * IN_FLIGHT
BARE = "bare asyncio HTTP (reference)"


@dataclass(frozen=True)
class Client:
    """One client process: `kind` "pipeline" or "runner", its transport, calls in flight and
    (a runner's) episodes."""

    kind: str
    transport: str
    in_flight: int
    episodes: int = 0
    writes: bool = True
    """False: the runner's per-call writes are no-ops (`without_writes`)."""


ROWS: dict[str, list[Client]] = {
    f"pipeline, {PROVIDER}": [Client("pipeline", PROVIDER, IN_FLIGHT)],
    f"pipeline, {BARE}": [Client("pipeline", BARE, IN_FLIGHT)],
    f"runner, {PROVIDER}, 1 process": [Client("runner", PROVIDER, IN_FLIGHT, EPISODES)],
    f"runner, {PROVIDER}, 1 process, nothing written": [
        Client("runner", PROVIDER, IN_FLIGHT, EPISODES, writes=False)
    ],
    f"runner, {PROVIDER}, 2 processes": [
        Client("runner", PROVIDER, IN_FLIGHT // 2, EPISODES // 2) for _ in range(2)
    ],
}


def served(jitter: float) -> str:
    """How the server's latency varies, as a suffix."""
    return f", latency +-{100 * jitter:.0f}%" if jitter else ""


WIDTH = max(map(len, ROWS)) + len(served(0.99))


def sleep_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.time()))


# --- a client process ---------------------------------------------------------------------------


async def pipeline(transport: Transport, url: str, in_flight: int, until: float) -> None:
    """`in_flight` tasks calling back to back until `until` (wall clock)."""
    client = build_client(ModelConfig(model=transport[0], base_url=url, params=transport[1]))
    counter = itertools.count()

    async def task() -> None:
        while time.time() < until:
            await pipeline_call(client, next(counter))

    try:
        await asyncio.gather(*(task() for _ in range(in_flight)))
    finally:
        await client.aclose()


def without_writes() -> None:
    """Make what a runner writes per model call and per step no-ops in this process: the store's
    calls, rounds and events, and the response cache (every lookup a miss, nothing kept)."""
    ResultStore.add_llm_call = lambda *args, **kwargs: 0  # type: ignore[method-assign]
    ResultStore.add_round = lambda *args, **kwargs: None  # type: ignore[method-assign]
    ResultStore.add_event = lambda *args, **kwargs: 0  # type: ignore[method-assign]
    ResponseCache.get = lambda *args, **kwargs: None  # type: ignore[method-assign]
    ResponseCache.put = lambda *args, **kwargs: None  # type: ignore[method-assign]


def child(client: Client, url: str) -> None:
    """Warm up, say "ready", wait for "<start> <open> <close>" (wall clock), run from `start`,
    and print the CPU seconds this process spent between `open` and `close`."""
    transport = TRANSPORTS[client.transport]
    if not client.writes:
        without_writes()
    if client.kind == "runner":
        run_experiment(transport, url, LATENCY, 2)
    else:
        event_loop.run(pipeline(transport, url, 2, time.time() + 0.5))
    print("ready", flush=True)
    start, opens, closes = (float(x) for x in sys.stdin.readline().split())
    cpu: list[float] = []

    def sample() -> None:
        for moment in (opens, closes):
            sleep_until(moment)
            cpu.append(time.process_time())

    sampler = threading.Thread(target=sample)
    sampler.start()
    sleep_until(start)
    if client.kind == "runner":
        run_experiment(transport, url, LATENCY, client.in_flight, client.episodes)
    else:
        event_loop.run(pipeline(transport, url, client.in_flight, closes + 0.5))
    sampler.join()
    if time.time() < closes:
        raise SystemExit("the run ended before the window closed: give it more episodes")
    print(json.dumps({"cpu_s": cpu[1] - cpu[0]}), flush=True)


# --- the driver ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    calls: int
    seconds: float
    cpu_s: float

    @property
    def ratio(self) -> float:
        return self.calls / self.seconds / (IN_FLIGHT / LATENCY)

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_s / self.calls


def measure(clients: list[Client], url: str, warm: float, window: float) -> Window:
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--child", json.dumps(c.__dict__), "--url", url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for c in clients
    ]
    try:
        for p in procs:
            assert p.stdout is not None
            if p.stdout.readline().strip() != "ready":
                raise SystemExit("a client process did not start")
        start = time.time() + 0.5
        opens, closes = start + warm, start + warm + window
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(f"{start} {opens} {closes}\n")
            p.stdin.flush()
        sleep_until(opens)
        first = server_stats(url).requests
        sleep_until(closes)
        last = server_stats(url).requests
        cpu = 0.0
        for p in procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            if p.wait() != 0 or not line:
                raise SystemExit("a client process failed")
            cpu += float(json.loads(line)["cpu_s"])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return Window(last - first, window, cpu)


def row(label: str, ratio: float, cpu_ms_per_call: float) -> str:
    return f"  {label:<{WIDTH}} ratio {ratio:.3f}  CPU {cpu_ms_per_call:.3f} ms/call"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=3.0, help="seconds counted")
    parser.add_argument("--warm", type=float, default=1.0, help="seconds before the window")
    parser.add_argument("--repeat", type=int, default=3, help="alternated runs of each row")
    parser.add_argument(
        "--jitter",
        type=float,
        default=0.0,
        help="also measure every row against a server whose latency varies by this fraction",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Client(**json.loads(args.child)), args.url)
        return
    if not 0 <= args.jitter < 1:
        parser.error(f"--jitter must be at least 0 and below 1, not {args.jitter}")
    print(
        f"{os.cpu_count()} cores; fake server {1000 * LATENCY:.0f} ms per reply; {IN_FLIGHT} calls "
        f"in flight, limit {IN_FLIGHT / LATENCY:.0f} calls/s; window {args.window:g} s after "
        f"{args.warm:g} s"
    )
    jitters = [0.0] + ([args.jitter] if args.jitter else [])
    results: dict[tuple[float, str], list[Window]] = {
        (j, label): [] for j in jitters for label in ROWS
    }
    with contextlib.ExitStack() as servers:
        urls = {j: servers.enter_context(serving(LATENCY, j)) for j in jitters}
        for _ in range(args.repeat):
            for label, clients in ROWS.items():
                for j, url in urls.items():
                    w = measure(clients, url, args.warm, args.window)
                    results[j, label].append(w)
                    print(row(f"{label}{served(j)}", w.ratio, w.cpu_ms_per_call))
    for j in jitters:
        print(f"medians{served(j)}:")
        for label in ROWS:
            windows = results[j, label]
            ratio = statistics.median(w.ratio for w in windows)
            cpu = statistics.median(w.cpu_ms_per_call for w in windows)
            print(row(label, ratio, cpu))


if __name__ == "__main__":
    main()
