"""Benchmark: model calls per second against a fixed-latency server, and KV-cache reuse locally.

Part 1: a fake OpenAI-compatible server (`latency_server.py`, its own process) answers every call
after a fixed latency, so at concurrency N the best possible rate is N / latency. For N in 1, 16,
64, 256 it prints the rate achieved, its ratio to that limit, and this process's CPU time per call,
through the call pipeline alone (`build_client`, no cache, no limits) and through the experiment
runner (PD episodes against TitForTat, store and response cache on), each with the `openai/...`
provider over its default aiohttp transport, over the openai SDK (`params.transport: sdk`, what
every call went through before), and with a bare asyncio HTTP transport for reference (the floor).
At 256 it then runs the runner with and without each of its throughput settings (collector, group
commit, workers started in groups, the event loop, WAL checkpoints in a thread), alternated, so
each is measured side by side.
A cProfile pass at the highest concurrency splits the provider rows' CPU per call by component.
Goals, at 256: ratio >= 0.95 (pipeline) and >= 0.90 (runner), and <= 1 ms of CPU per call.
`steady_state.py` measures the same rates once running, without these runs' start and drain.

Part 2: a 50-round Prisoner's Dilemma against TitForTat, plain agent in history "chat" mode (one
growing conversation), on the embedded `local/gemma-3-270m`, with llama.cpp's KV-cache reuse on
and off: prompt tokens submitted and evaluated per round, and wall time.

    .venv/bin/python benchmarks/throughput.py [--latency 0.2] [--off-rounds 10] [--no-profile]
                                              [--pairs 3] [--skip-server] [--skip-kv]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import itertools
import json
import os
import pstats
import statistics
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy
from latency_server import serving

import stratagem.experiments.checkpoints as checkpoints
import stratagem.experiments.commits as commits
import stratagem.experiments.event_loop as event_loop
import stratagem.experiments.executors as executors
import stratagem.experiments.heap as heap
import stratagem.experiments.runner as runner_module
from stratagem.agents.plain import PlainLLMAgent
from stratagem.agents.prompts import Prompter
from stratagem.agents.strategy_agent import StrategyAgent
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.model_entry import ModelEntry
from stratagem.experiments.runner import Runner
from stratagem.games.catalog import get_stage
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.llm.errors import TransientError
from stratagem.llm.pipeline import CallContext, ModelClient, build_client
from stratagem.llm.provider import Provider
from stratagem.llm.providers.openai import choice_schema, message_param
from stratagem.llm.registry import ModelConfig, register_provider
from stratagem.llm.types import Message, Request, Response, Usage
from stratagem.strategies.registry import get_strategy

CONCURRENCIES = (1, 16, 64, 256)
LABELS = ("cooperate", "defect")
SYSTEM = "You are playing a repeated game. Answer with one of the two actions."
RUNNER_ROUNDS = 10
KV_MODEL = "local/gemma-3-270m"


@dataclass
class Measure:
    concurrency: int
    calls: int
    wall_s: float
    cpu_s: float
    server_cpu_s: float
    connections: int
    """TCP connections the server accepted during the run."""
    latency: float

    @property
    def rate(self) -> float:
        return self.calls / self.wall_s

    @property
    def limit(self) -> float:
        return self.concurrency / self.latency

    @property
    def ratio(self) -> float:
        return self.rate / self.limit

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_s / self.calls

    def row(self, extra: str = "") -> str:
        return (
            f"  {self.concurrency:>11} {extra}{self.calls:>6} {self.wall_s:>7.2f} "
            f"{self.rate:>9.1f} {self.limit:>8.0f} {self.ratio:>6.3f} "
            f"{self.cpu_ms_per_call:>12.3f} {100 * self.server_cpu_s / self.wall_s:>11.0f} "
            f"{self.connections:>12}"
        )


HEADER = (
    "  concurrency {extra} calls  wall s   calls/s  limit/s  ratio  CPU ms/call  server CPU% "
    "server conns"
)


class ServerStats(NamedTuple):
    """The fake server's counters so far."""

    cpu_s: float
    """Its own CPU seconds."""
    connections: int
    """TCP connections accepted."""
    requests: int
    """Chat completions received."""


def server_stats(url: str) -> ServerStats:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats") as reply:
        stats = json.load(reply)
    return ServerStats(float(stats["cpu_s"]), int(stats["connections"]), int(stats["requests"]))


class Stopwatch:
    """Wall clock, this process's CPU time and the server's counters, from creation to `stop`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.server = server_stats(url)
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def stop(self, latency: float, concurrency: int, calls: int) -> Measure:
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        server = server_stats(self.url)
        cpu_server = server.cpu_s - self.server.cpu_s
        conns = server.connections - self.server.connections
        return Measure(concurrency, calls, wall, cpu, cpu_server, conns, latency)


# --- a reference transport ----------------------------------------------------------------------


class BareHTTPProvider:
    """The floor: chat completions over plain asyncio HTTP/1.1 keep-alive connections.

    Not a stratagem provider (no TLS, no errors beyond the status, no tool calls): it sends the
    same body as the `openai` provider for a `choices` request, so the gap between the two
    rows is what the provider and its HTTP stack cost.
    """

    def __init__(self, model: str, base_url: str) -> None:
        self.model = model
        url = urllib.parse.urlsplit(base_url)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80
        self.path = url.path.rstrip("/") + "/chat/completions"
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def complete(self, request: Request, sample: int) -> Response:
        body: dict[str, Any] = {
            "model": self.model.partition("/")[2],
            "messages": [message_param(m) for m in request.messages],
        }
        if request.choices:
            schema = choice_schema(request.choices)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "choice", "strict": True, "schema": schema},
            }
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.seed is not None:
            body["seed"] = request.seed + sample
        payload = json.dumps(body).encode()
        head = (
            f"POST {self.path} HTTP/1.1\r\nhost: {self.host}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n"
        )
        started = time.perf_counter()
        if self.idle:
            reader, writer = self.idle.pop()
        else:
            reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.write(head.encode() + payload)
        lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        length = next(int(h.split(":")[1]) for h in lines if h.lower().startswith("content-length"))
        reply = json.loads(await reader.readexactly(length))
        self.idle.append((reader, writer))
        if " 200 " not in lines[0]:
            raise TransientError(f"{self.model}: {lines[0]}")
        text = reply["choices"][0]["message"]["content"]
        if request.choices:
            text = json.loads(text)["choice"]
        usage = reply["usage"]
        return Response(
            text=text,
            usage=Usage(usage["prompt_tokens"], usage["completion_tokens"]),
            latency_s=time.perf_counter() - started,
            model=self.model,
        )

    async def aclose(self) -> None:
        for _, writer in self.idle:
            writer.close()
        self.idle.clear()


def bare_provider(config: ModelConfig) -> Provider:
    assert config.base_url is not None
    return BareHTTPProvider(config.model, config.base_url)


register_provider("bare", bare_provider)
Transport = tuple[str, dict[str, Any]]
"""A model string and its params."""
PROVIDER = "openai provider (aiohttp)"
TRANSPORTS: dict[str, Transport] = {
    PROVIDER: ("openai/fake", {}),
    "openai provider, transport sdk (before)": ("openai/fake", {"transport": "sdk"}),
    "bare asyncio HTTP (reference)": ("bare/fake", {}),
}
"""The same calls through the `openai` provider's two transports, and the reference one."""


# --- part 1a: the call pipeline ---------------------------------------------------------------


def pipeline_calls(concurrency: int) -> int:
    """20 calls per task: about 4 s at the limit, so the first burst's spread weighs little."""
    return 20 * concurrency


async def pipeline_call(client: ModelClient, i: int) -> None:
    """The pipeline rows' `i`-th call (a short system prompt, a choice between two labels),
    its reply checked."""
    user = Message("user", f"Round {i}. Choose: cooperate or defect.")
    request = Request((Message("system", SYSTEM), user), choices=LABELS, max_tokens=8, seed=i)
    (response,) = await client.generate(request)
    if response.text != LABELS[0]:
        raise SystemExit(f"unexpected reply {response.text!r}")


async def drive_pipeline(
    model: Transport, url: str, latency: float, concurrency: int, calls: int, warm_up: bool
) -> Measure:
    """`calls` calls from `concurrency` tasks through one client (no cache, no limits), timed.

    One untimed wave first opens the connections, as a running experiment has them open.
    """
    client = build_client(ModelConfig(model=model[0], base_url=url, params=model[1]))

    async def worker(counter: itertools.count[int], limit: int) -> None:
        while (i := next(counter)) < limit:
            await pipeline_call(client, i)

    async def wave(limit: int) -> None:
        counter = itertools.count()
        await asyncio.gather(*(worker(counter, limit) for _ in range(concurrency)))

    try:
        if warm_up:
            await wave(concurrency)
        watch = Stopwatch(url)  # blocks the event loop, but nothing is in flight
        await wave(calls)
        return watch.stop(latency, concurrency, calls)
    finally:
        await client.aclose()


def pipeline_measure(model: Transport, url: str, latency: float, concurrency: int) -> Measure:
    calls = pipeline_calls(concurrency)
    return event_loop.run(drive_pipeline(model, url, latency, concurrency, calls, warm_up=True))


# --- part 1b: the experiment runner -----------------------------------------------------------


def runner_episodes(concurrency: int) -> int:
    return max(2, concurrency)


def run_experiment(
    model: Transport, url: str, latency: float, concurrency: int, episodes: int | None = None
) -> Measure:
    """One experiment in a fresh directory (so a fresh response cache: every call reaches the
    server), `concurrency` episodes at once (of `episodes`, by default as many); timed from
    `Runner.run` to its end."""
    episodes = episodes or runner_episodes(concurrency)
    with tempfile.TemporaryDirectory() as tmp:
        config = ExperimentConfig(
            name=f"throughput-{concurrency}",
            output=Path(tmp),
            models=[
                ModelEntry(
                    model=model[0], base_url=url, params=model[1], max_concurrency=concurrency
                )
            ],
            games=["pd"],
            opponents=["TitForTat"],
            rounds=[RUNNER_ROUNDS],
            repetitions=episodes,
            concurrency=concurrency,
        )
        runner = Runner(config, show_progress=False)
        watch = Stopwatch(url)
        summary = event_loop.run(runner.run())
        measure = watch.stop(latency, concurrency, summary.calls)
    if summary.finished != episodes or summary.cached_calls or summary.errors:
        raise SystemExit(f"the runner did not play cleanly: {summary}")
    return measure


@contextlib.contextmanager
def _as_python_sets_it() -> Iterator[None]:
    """The collector as Python sets it."""
    yield


class _CommitEachWrite:
    """No group commit: every write of the run commits on its own."""

    def __init__(self, *files: Any) -> None:
        pass

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


SETTINGS: dict[str, tuple[Any, str, Any, Any]] = {
    "collector": (runner_module, "frozen_setup", heap.frozen_setup, _as_python_sets_it),
    "commits": (runner_module, "TurnCommits", commits.TurnCommits, _CommitEachWrite),
    "start": (executors, "STARTS_PER_TURN", executors.STARTS_PER_TURN, 1_000_000),
    "loop": (event_loop, "LOOP_FACTORY", event_loop.LOOP_FACTORY, None),
    "checkpoints": (checkpoints, "INTERVAL_S", checkpoints.INTERVAL_S, None),
}
"""Runner settings worth a side-by-side row: (the module, its name for the setting, the run's
own, the comparison). The run's garbage-collector settings (experiments/heap.py) against the
default collector; its group commit (experiments/commits.py) against a commit for every write;
its workers started a group per event-loop turn (experiments/executors.py) against all at once;
its event loop (experiments/event_loop.py: uvloop's) against asyncio's own; its WAL checkpoints
in a thread (experiments/checkpoints.py) against SQLite's own, inside commits."""


def setting_rows(url: str, latency: float, concurrency: int, pairs: int) -> None:
    """The runner with each setting as a run has it and without, alternated, `pairs` times each:
    what each is worth, measured side by side (this machine's speed drifts, so alternate, and
    read the medians)."""
    model = TRANSPORTS[PROVIDER]
    for setting, (module, name, own, other) in SETTINGS.items():
        print(f"runner at {concurrency}, {PROVIDER}, side by side: {setting}, a run's and not")
        print(HEADER.format(extra="episodes"))
        rows: dict[str, list[Measure]] = {"run's": [], "without": []}
        try:
            for _ in range(pairs):
                for label, value in (("run's", own), ("without", other)):
                    setattr(module, name, value)
                    rows[label].append(run_experiment(model, url, latency, concurrency))
                    tail = f"  {setting}: {label}"
                    print(rows[label][-1].row(f"{runner_episodes(concurrency):>8} ") + tail)
        finally:
            setattr(module, name, own)
        print(
            "  medians, a run's / without: ratio "
            + " / ".join(f"{statistics.median(m.ratio for m in ms):.3f}" for ms in rows.values())
            + ", CPU ms/call "
            + " / ".join(
                f"{statistics.median(m.cpu_ms_per_call for m in ms):.3f}" for ms in rows.values()
            ),
            flush=True,
        )


# --- CPU by component ---------------------------------------------------------------------------

COMPONENTS = (
    ("/stratagem/", "stratagem"),
    ("/openai/", "openai SDK"),
    ("/aiohttp/", "aiohttp/multidict/yarl"),
    ("/multidict/", "aiohttp/multidict/yarl"),
    ("/yarl/", "aiohttp/multidict/yarl"),
    ("/httpx2/", "httpx2/httpcore2/h11/anyio"),
    ("/httpcore2/", "httpx2/httpcore2/h11/anyio"),
    ("/h11/", "httpx2/httpcore2/h11/anyio"),
    ("/anyio/", "httpx2/httpcore2/h11/anyio"),
    ("/sniffio/", "httpx2/httpcore2/h11/anyio"),
    ("/pydantic", "pydantic"),
    ("/jinja2/", "jinja2 (prompt templates)"),
    ("/asyncio/", "asyncio + sockets"),
    ("selectors.py", "asyncio + sockets"),
    ("socket.py", "asyncio + sockets"),
    ("/sqlite3/", "sqlite3 (store, cache)"),
    ("/typing.py", "typing (SDK param transform)"),
    ("/dataclasses.py", "dataclasses + copy (asdict)"),
    ("/copy.py", "dataclasses + copy (asdict)"),
    ("/json/", "json"),
)


def component(filename: str, function: str) -> str:
    if filename == "~":  # a builtin: classify by what it belongs to
        if "sqlite3" in function:
            return "sqlite3 (store, cache)"
        if "_json" in function or "json." in function:
            return "json"
        if "socket" in function or "select" in function or "epoll" in function:
            return "asyncio + sockets"
        return "other builtins"
    for marker, name in COMPONENTS:
        if marker in filename:
            return name
    return "other stdlib"


def profile(work: Callable[[], Any]) -> dict[str, float]:
    """Self time by component, as shares of the total (cProfile slows Python code more than C)."""
    profiler = cProfile.Profile()
    profiler.runcall(work)
    stats: Any = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = {}
    for (filename, _, function), (_, _, tottime, _, _) in stats.items():
        name = component(filename, function)
        totals[name] = totals.get(name, 0.0) + tottime
    whole = sum(totals.values())
    return {name: t / whole for name, t in sorted(totals.items(), key=lambda kv: -kv[1])}


def print_breakdown(title: str, shares: dict[str, float], measure: Measure) -> None:
    cpu_ms = measure.cpu_ms_per_call
    print(f"  {title} ({cpu_ms:.3f} ms/call measured unprofiled, split by profiled self time):")
    for name, share in shares.items():
        if share >= 0.005:
            print(f"    {name:<36} {100 * share:5.1f}%  ~{share * cpu_ms:6.3f} ms/call")


# --- part 1 -------------------------------------------------------------------------------------


def server_part(latency: float, profiled: bool, pairs: int) -> None:
    top = CONCURRENCIES[-1]
    results: dict[str, list[Measure]] = {}
    with serving(latency) as url:
        for model in TRANSPORTS.values():  # imports and the like, before any measurement
            event_loop.run(drive_pipeline(model, url, latency, 4, 8, warm_up=False))
            run_experiment(model, url, latency, 2)
        print(
            f"fake OpenAI-compatible server: {1000 * latency:.0f} ms per reply, in its own "
            "process; limit = concurrency / latency"
        )
        for transport, model in TRANSPORTS.items():
            print(f"pipeline, {transport}: build_client, no cache, no limits, warm connections")
            print(HEADER.format(extra=""))
            rows = results[f"pipeline, {transport}"] = []
            for n in CONCURRENCIES:
                rows.append(pipeline_measure(model, url, latency, n))
                print(rows[-1].row(), flush=True)
        for transport, model in TRANSPORTS.items():
            print(
                f"runner, {transport}: PD vs TitForTat, {RUNNER_ROUNDS} rounds, plain agent "
                "(choice, history prompt), fresh store and cache"
            )
            print(HEADER.format(extra="episodes"))
            rows = results[f"runner, {transport}"] = []
            for n in CONCURRENCIES:
                rows.append(run_experiment(model, url, latency, n))
                print(rows[-1].row(f"{runner_episodes(n):>8} "), flush=True)

        setting_rows(url, latency, top, pairs)

        if profiled:
            model = TRANSPORTS[PROVIDER]
            print(f"CPU per call at concurrency {top}, {PROVIDER}, by component (cProfile):")
            calls = 5 * top
            shares = profile(
                lambda: event_loop.run(drive_pipeline(model, url, latency, top, calls, True))
            )
            print_breakdown("pipeline", shares, results[f"pipeline, {PROVIDER}"][-1])
            shares = profile(lambda: run_experiment(model, url, latency, top))
            print_breakdown("runner", shares, results[f"runner, {PROVIDER}"][-1])

    for label, rows in results.items():
        last = rows[-1]  # the goals are at the top concurrency: at 1, set-up outweighs 20 calls
        cpu = last.cpu_ms_per_call
        goal = 0.95 if label.startswith("pipeline") else 0.90
        print(
            f"goals, {label}, at {top}: ratio {last.ratio:.3f} (>= {goal:.2f}: "
            f"{'met' if last.ratio >= goal else 'NOT met'}); CPU {cpu:.2f} ms/call "
            f"(<= 1 ms: {'met' if cpu <= 1 else 'NOT met'})"
        )


# --- part 2: KV-cache reuse on the embedded model ------------------------------------------------


@dataclass
class KvRound:
    submitted: int
    """Prompt tokens sent this round (re-asks included)."""
    evaluated: int
    """Prompt tokens llama.cpp actually evaluated: the rest came from its KV cache."""
    wall_s: float


def local_client(kv_reuse: bool, recorder: Any = None) -> ModelClient:
    params = {"kv_reuse": kv_reuse, "n_ctx": 8192}  # the last prompt of 50 rounds is ~4,000
    return build_client(ModelConfig(model=KV_MODEL, params=params), recorder=recorder)


class Meter:
    """Tokens and time of the local model's calls from creation to `read`, from its stats."""

    def __init__(self, client: ModelClient) -> None:
        self.stats: Any = client.provider.stats  # type: ignore[attr-defined]
        self.before = self.stats.prompt_tokens_submitted, self.stats.prompt_tokens_evaluated
        self.start = time.perf_counter()

    def read(self) -> KvRound:
        wall = time.perf_counter() - self.start
        submitted = self.stats.prompt_tokens_submitted - self.before[0]
        return KvRound(submitted, self.stats.prompt_tokens_evaluated - self.before[1], wall)


async def kv_game(rounds: int) -> tuple[list[KvRound], list[list[Request]]]:
    """Play the chat-history game with KV reuse; per round: its counts and the requests sent."""
    requests: list[list[Request]] = [[] for _ in range(rounds)]

    def record(model: str, context: CallContext, request: Request, *_: Any) -> None:
        assert context.round is not None
        requests[context.round - 1].append(request)

    client = local_client(True, record)
    client.provider.reset()  # type: ignore[attr-defined]  # load the model, empty KV cache
    agent = PlainLLMAgent(
        client, Prompter("neutral", "choice", "chat"), temperature=0.0, max_tokens=8
    )
    opponent = StrategyAgent(get_strategy("TitForTat"))
    agent.reset(0, "kv")
    opponent.reset(0, "kv")
    state = RepeatedGame(get_stage("pd"), rounds).initial_state(0)
    played: list[KvRound] = []
    while not state.is_terminal():
        meter = Meter(client)
        first, second = await asyncio.gather(
            agent.act(state.observation(0)), opponent.act(state.observation(1))
        )
        played.append(meter.read())
        state, events = state.forfeit({0: first.action, 1: second.action})
        await agent.observe(state.observation(0), events)
        await opponent.observe(state.observation(1), events)
    await client.aclose()
    return played, requests


async def kv_replay(requests: list[list[Request]], rounds: list[int]) -> dict[int, KvRound]:
    """The same requests without KV reuse: what each of `rounds` costs when nothing is reused."""
    client = local_client(False)
    client.provider.reset()  # type: ignore[attr-defined]
    out: dict[int, KvRound] = {}
    for t in rounds:
        meter = Meter(client)
        for request in requests[t - 1]:
            await client.generate(request)
        out[t] = meter.read()
    await client.aclose()
    return out


def kv_part(rounds: int, off_rounds: int) -> None:
    print(
        f"embedded {KV_MODEL}: {rounds}-round PD vs TitForTat, plain agent, history chat, "
        "output choice, temperature 0, llama.cpp on 2 threads"
    )
    on, requests = asyncio.run(kv_game(rounds))
    sample = sorted({round(x) for x in numpy.linspace(1, rounds, min(off_rounds, rounds))})
    off = asyncio.run(kv_replay(requests, sample))
    # Without reuse every prompt token is evaluated; checked on the rounds replayed.
    exact = all(off[t].evaluated == off[t].submitted == on[t - 1].submitted for t in sample)
    per_round = numpy.interp(range(1, rounds + 1), sample, [off[t].wall_s for t in sample])
    off_wall = float(per_round.sum())

    def line(name: str, sub: list[int], ev: list[int], first: float, last: float) -> str:
        return (
            f"  {name:<4}{statistics.mean(sub):>10.1f}{sub[0]:>9}{sub[-1]:>9}"
            f"{statistics.mean(ev):>11.1f}{ev[0]:>9}{ev[-1]:>10}{first:>8.2f}{last:>8.2f}"
        )

    print(
        "  prompt tokens per round, submitted (sub) and evaluated by llama.cpp (eval): mean, "
        "first and last round; seconds per round: first and last"
    )
    print(
        f"  {'KV':<4}{'sub mean':>10}{'sub 1st':>9}{'sub last':>9}{'eval mean':>11}"
        f"{'eval 1st':>9}{'eval last':>10}{'s 1st':>8}{'s last':>8}{'game s':>9}"
    )
    submitted = [r.submitted for r in on]
    evaluated = [r.evaluated for r in on]
    on_wall = sum(r.wall_s for r in on)
    print(line("on", submitted, evaluated, on[0].wall_s, on[-1].wall_s) + f"{on_wall:>9.1f}")
    off_first, off_last = off[sample[0]].wall_s, off[sample[-1]].wall_s
    print(line("off", submitted, submitted, off_first, off_last) + f"{off_wall:>9.1f}")
    how = (
        "all rounds replayed"
        if len(sample) == rounds
        else f"{len(sample)} of {rounds} rounds replayed, the others' time interpolated"
    )
    print(
        f"  off: the game's own requests replayed with kv_reuse off ({how}); every prompt "
        f"token evaluated: {exact}"
    )
    print(
        f"  prompt tokens evaluated off/on: {sum(submitted) / sum(evaluated):.1f}x; "
        f"game wall off/on: {off_wall / on_wall:.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="server seconds per reply")
    parser.add_argument("--rounds", type=int, default=50, help="rounds of the KV-cache game")
    parser.add_argument(
        "--off-rounds", type=int, default=10, help="rounds replayed without KV reuse (all: 50)"
    )
    parser.add_argument("--skip-server", action="store_true", help="skip part 1")
    parser.add_argument("--no-profile", action="store_true", help="skip the cProfile pass")
    parser.add_argument(
        "--pairs", type=int, default=3, help="alternated pairs of runs per runner setting"
    )
    parser.add_argument("--skip-kv", action="store_true", help="skip part 2")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; load average {load()} at start (other work skews the figures)")
    if not args.skip_server:
        server_part(args.latency, not args.no_profile, args.pairs)
    if not args.skip_kv:
        kv_part(args.rounds, args.off_rounds)
    print(f"load average {load()} at the end")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
