"""Issue 26 item 1: two real llama-cpp-python servers of the embedded model in one pool play a run
whose stored results equal the same run against one of them: the same actions and payoffs, and
the same cache keys (which server answered is stored, not keyed)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from support.llama_server import ALIAS, llama_server

from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.pool import preferred


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    logs = tmp_path_factory.mktemp("llama-pool")
    with ExitStack() as stack:
        yield [stack.enter_context(llama_server(logs / f"server-{i}.log")) for i in range(2)]


def config(out: Path, reach: dict[str, Any], seeds: list[int]) -> dict[str, Any]:
    model = {"model": f"openai/{ALIAS}", "params": {"structured": "json_object"}}
    return {
        "name": "llama-pool",
        "output": str(out),
        "models": [model | reach],
        "agents": [{"name": "choice", "output": "choice", "temperature": 0}],  # greedy
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
        "seeds": seeds,
        "concurrency": 2,
    }


def spread_seeds(out: Path, servers: list[str]) -> list[int]:
    """4 seeds whose episodes do not all prefer one server: the servers' ports are random, and
    so is which server each episode id ranks first (all 4 on one: 1 time in 8)."""
    by_server: dict[str, list[int]] = {url: [] for url in servers}
    for seed in range(64):
        data = config(out, {"base_url": servers[0]}, [seed])
        (spec,) = Runner(config_from_dict(data, "llama-pool"), show_progress=False).specs
        by_server[preferred(spec.id, servers)].append(seed)
    first, second = by_server.values()
    return sorted(first[:2] + second[:2])


def run(out: Path, reach: dict[str, Any], seeds: list[int]) -> None:
    data = config(out, reach, seeds)
    summary = asyncio.run(Runner(config_from_dict(data, "llama-pool"), show_progress=False).run())
    assert (summary.finished, summary.failed, summary.stopped) == (4, 0, None)


def stored(out: Path) -> tuple[dict[str, Any], list[str], set[str]]:
    """Episodes' payoffs and rounds, the calls' cache keys and the servers that answered."""
    with ResultStore(out / STORE_FILE) as store:
        episodes = {
            e.id: (e.payoffs, [(r.actions, r.payoffs) for r in store.rounds(e.id)])
            for e in store.episodes()
        }
        calls = store.llm_calls()
    assert all(c.error is None and not c.cached for c in calls)
    keys = sorted(str(c.cache_key) for c in calls)
    return episodes, keys, {str(c.response.get("endpoint")) for c in calls}


def test_two_real_servers_in_a_pool_equal_one(tmp_path: Path, servers: list[str]) -> None:
    seeds = spread_seeds(tmp_path / "pool", servers)
    run(tmp_path / "pool", {"endpoints": [{"base_url": u} for u in servers]}, seeds)
    run(tmp_path / "one", {"base_url": servers[0]}, seeds)
    pooled, pooled_keys, answered = stored(tmp_path / "pool")
    single, single_keys, _ = stored(tmp_path / "one")
    assert answered == set(servers)  # both servers played
    assert pooled == single and pooled_keys == single_keys
