"""Benchmark: what the providers' prompt caches take off a chat study's bill.

Plays the ToM study's games (seed-002: the `tom` agent reporting V0-V2 against a V0 baseline,
TradeCraft instances 0-3, 15 turns, one growing conversation per seat) against a fake API whose
caches work as OpenAI's and Anthropic's do (`caching_server.py`), once per model, each run in a
fresh directory (so every call is paid). For each run it prints what the run was billed, each part
of the input at its rate (`cost_usd` in the store, what the budget was charged), beside what the
same calls would have cost with every input token at the full rate (what stratagem billed before it
read the caches): `saved_usd` added back. Both come from the same run.

    .venv/bin/python benchmarks/caching.py [--instances 4] [--turns 15]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from caching_server import CachingServer

import stratagem.experiments.event_loop as event_loop
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.pricing import CacheUse

KEY_ENV = "STRATAGEM_CACHING_BENCH_KEY"
MODELS = (
    ("gpt-4o", "openai/gpt-4o-2024-08-06"),  # cached input at 50%
    ("gpt-4.1", "openai/gpt-4.1-2025-04-14"),  # 25%
    ("o4-mini", "openai/o4-mini-2025-04-16"),  # 25%
    ("gpt-5", "openai/gpt-5-2025-08-07"),  # 10%
    ("claude-sonnet-4", "anthropic/claude-sonnet-4-20250514"),  # read 0.1x, write 1.25x
)


def config(name: str, model: str, url: str, out: Path, instances: int, turns: int) -> Any:
    return ExperimentConfig.model_validate(
        {
            "name": f"caching-{name}",
            "output": str(out),
            "models": [
                {
                    "id": name,
                    "model": model,
                    "base_url": url,
                    "api_key_env": KEY_ENV,
                    "max_concurrency": 8,
                }
            ],
            "agents": [
                {"name": "tom-v2", "kind": "tom", "options": {"order": 2}},
                {"name": "base", "kind": "tom", "options": {"baseline": True}},
            ],
            "games": [f"tradecraft/{k}" for k in range(instances)],
            "rounds": [turns],
            "lineups": [["tom-v2", "base"]],
            "seeds": [0],
            "concurrency": 4,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=4, help="TradeCraft instances (games)")
    parser.add_argument("--turns", type=int, default=15, help="the turn limit (15: the study's)")
    args = parser.parse_args()
    os.environ[KEY_ENV] = "sk-caching-benchmark-not-a-key"  # sent to 127.0.0.1 only
    rows = []
    with CachingServer() as server, tempfile.TemporaryDirectory() as tmp:
        for name, model in MODELS:
            url = server.anthropic_url if model.startswith("anthropic/") else server.openai_url
            out = Path(tmp) / name
            setup = config(name, model, url, out, args.instances, args.turns)
            runner = Runner(setup, show_progress=False)
            started = time.perf_counter()
            summary = event_loop.run(runner.run())
            wall = time.perf_counter() - started
            if summary.failed or summary.finished != args.instances:
                sys.exit(f"{name}: the games did not all finish: {summary.errors[:3]}")
            with ResultStore(out / STORE_FILE) as store:
                totals = store.call_totals()
            cache = CacheUse.from_totals(totals)
            billed = float(totals["paid_usd"])
            rows.append((name, int(totals["calls"]), cache, billed, billed + cache.saved_usd, wall))
    print(f"ToM study games: {args.instances} x tom-v2 vs base, {args.turns} turns each")
    head = ("model", "calls", "input tok", "read", "written", "with caching", "without", "ratio")
    print("| " + " | ".join(head) + " |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, calls, cache, billed, full, _ in rows:
        written = cache.written_tokens / cache.input_tokens if cache.input_tokens else 0.0
        print(
            f"| {name} | {calls:,} | {cache.input_tokens:,} | {cache.share:.0%} | {written:.0%} "
            f"| ${billed:.4f} | ${full:.4f} | {full / billed:.2f}x |"
        )
    print(f"(wall time: {sum(r[-1] for r in rows):.1f} s for the {len(rows)} runs)")


if __name__ == "__main__":
    main()
