"""Benchmark: the embedded model's calls decoded together (`params.batch`) or one at a time.

Three of the studies' workloads, each played as independent episodes through the real agents,
games, prompts and grammars (`experiments.episode.play_episode`), all on one loaded model:

- `thesis`: the plain agent (seed-001, JSON decision) in the Dilemma against TitForTat;
- `magic`: the MAgIC player in every seat of Chameleon setting 0 (clues, accusations, probes);
- `tradecraft`: the ToM agent in every seat of TradeCraft setting 0 (chat, proposals, tools).

For 1, 4 and 8 calls in flight (that many episodes played at once), each workload runs
`--calls` calls batched (`batch: 8`, one llama.cpp sequence per call) and unbatched (`batch: 1`,
one call at a time under the model's lock), side by side in one process, and prints calls/s
and tokens/s (prompt + reply tokens submitted per second). Replies differ between runs only
where sampling draws differ, so the ratios are per call.

Then, for each workload unbatched at 8 in flight, the share of the decoding time spent
evaluating prompts (`local_decoding._eval_prompt`, timed around it): batching shares the reply
steps among sequences, not prompt evaluation (a matrix product already, as fast per token
alone), so 1 / that share bounds what batching can give (Amdahl), and so does the same with the
reply steps only `STEP_GAIN` times faster, llama.cpp's own gain for 8 sequences on this machine
(issue 38's table: 181 vs 74 tokens/s).

    .venv/bin/python benchmarks/local_batch.py [--calls 24] [--workloads thesis,magic]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from stratagem.agents import Agent, StrategyAgent
from stratagem.agents.registry import build_agent
from stratagem.experiments.config import AgentEntry
from stratagem.experiments.episode import play_episode
from stratagem.games.base import Game
from stratagem.games.catalog import get_game, get_stage
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.llm.pipeline import CallContext
from stratagem.llm.providers import local, local_decoding
from stratagem.llm.providers.local import LocalProvider
from stratagem.llm.types import Request, Response
from stratagem.strategies.registry import get_strategy

IN_FLIGHT = (1, 4, 8)
STEP_GAIN = 181 / 74
"""Tokens/s of 8 sequences decoded together over one alone, llama.cpp's low-level API on the
2-core machine (issue 38)."""
WORKLOADS = {
    "thesis": ("dilemma", "plain", {"framing": "prisoner", "output": "json"}, 5),
    "magic": ("chameleon/0", "magic", {}, 0),
    "tradecraft": ("tradecraft/0", "tom", {}, 0),
}
"""workload: (game, agent kind, agent options, rounds for a repeated game or 0)."""


class Enough(Exception):
    """A workload's episodes stop once the cell has made its calls."""


@dataclass
class Tally:
    limit: int
    calls: int = 0
    tokens: int = 0


class Client:
    """The agents' model client, bare (no cache, no retries): one provider call per request."""

    def __init__(self, provider: LocalProvider, tally: Tally) -> None:
        self.model = provider.model
        self.provider = provider
        self.tally = tally

    async def generate(
        self, request: Request, context: CallContext | None = None
    ) -> list[Response]:
        if self.tally.calls >= self.tally.limit:
            raise Enough
        self.tally.calls += 1
        response = await self.provider.complete(request, 0)
        self.tally.tokens += response.usage.input_tokens + response.usage.output_tokens
        return [response]


class NoStore:
    """The episode loop's records, dropped: only the calls are timed."""

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        yield

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def seats(workload: str, client: Client) -> tuple[Game, list[Agent]]:
    name, kind, options, rounds = WORKLOADS[workload]
    game = RepeatedGame(get_stage(name), rounds) if rounds else get_game(name)
    entry = AgentEntry(name=kind, kind=kind, max_tokens=48, max_reasks=1, **options)
    if workload == "thesis":
        return game, [build_agent(entry, client, game), StrategyAgent(get_strategy("TitForTat"))]
    return game, [build_agent(entry, client, game) for _ in range(game.n_players)]


async def episodes(workload: str, client: Client, worker: int) -> None:
    seed = worker
    with contextlib.suppress(Enough):
        while True:
            game, agents = seats(workload, client)
            for agent in agents:
                agent.reset(seed, f"bench-{seed}")
            await play_episode(NoStore(), f"bench-{seed}", game, agents, seed)  # type: ignore[arg-type]
            seed += 100


async def cell(provider: LocalProvider, workload: str, in_flight: int, calls: int) -> Tally:
    tally = Tally(calls)
    client = Client(provider, tally)
    await asyncio.gather(*(episodes(workload, client, w) for w in range(in_flight)))
    return tally


@contextlib.contextmanager
def timing_prompts(spent: dict[str, float]) -> Iterator[None]:
    """Seconds in prompt evaluation and in whole one-call decodings, added to `spent`."""
    eval_prompt, generate = local_decoding._eval_prompt, local_decoding.generate

    def timed_eval(*args: Any) -> int:
        started = time.perf_counter()
        try:
            return eval_prompt(*args)
        finally:
            spent["prompt"] += time.perf_counter() - started

    def timed_generate(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return generate(*args, **kwargs)
        finally:
            spent["decoding"] += time.perf_counter() - started

    local_decoding._eval_prompt = timed_eval  # type: ignore[assignment]
    local.generate = timed_generate  # type: ignore[attr-defined]
    try:
        yield
    finally:
        local_decoding._eval_prompt = eval_prompt
        local.generate = generate  # type: ignore[attr-defined]


def prompt_share(provider: LocalProvider, workload: str, calls: int) -> float:
    """The share of the unbatched decoding time at 8 in flight that evaluates prompts."""
    spent = {"prompt": 0.0, "decoding": 0.0}
    with timing_prompts(spent):
        asyncio.run(cell(provider, workload, IN_FLIGHT[-1], calls))
    return spent["prompt"] / spent["decoding"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=24, help="calls per cell")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    args = parser.parse_args()
    providers = {"batched": LocalProvider(batch=8), "unbatched": LocalProvider(batch=1)}
    warm = Request(messages=(), max_tokens=1)
    for provider in providers.values():  # load the model and the engine before timing
        provider.complete_sync(warm, 0)
    print(f"{args.calls} calls per cell; calls/s and tokens/s (prompt + reply) per mode\n")
    print(f"{'workload':<12}{'in flight':>10}" + "".join(f"{m:>24}" for m in providers))
    ratios = {}
    for workload in args.workloads.split(","):
        for in_flight in IN_FLIGHT:
            row = f"{workload:<12}{in_flight:>10}"
            rate = {}
            for mode, provider in providers.items():
                started = time.perf_counter()
                tally = asyncio.run(cell(provider, workload, in_flight, args.calls))
                seconds = time.perf_counter() - started
                rate[mode] = tally.calls / seconds
                row += f"{rate[mode]:>10.2f} calls/s {tally.tokens / seconds:>6.0f} tok/s"
            print(row, flush=True)
            ratios[workload] = rate["batched"] / rate["unbatched"]
    print()
    for workload, ratio in ratios.items():
        print(f"{workload}: batched / unbatched at 8 in flight: {ratio:.2f}x")
    print("\nprompt evaluation's share of the unbatched decoding time at 8 in flight, and the")
    print(f"most batching could give: reply steps free / {STEP_GAIN:.2f}x faster (Amdahl)")
    for workload in ratios:
        share = prompt_share(providers["unbatched"], workload, args.calls)
        bound = 1 / (share + (1 - share) / STEP_GAIN)
        print(f"{workload}: {share:.0%} prompt evaluation: at most {1 / share:.2f}x / {bound:.2f}x")


if __name__ == "__main__":
    main()
