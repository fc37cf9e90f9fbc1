"""`rescore --fork`: changed episodes played on from their changed move, with new model calls.

A fork is planned, priced and confirmed as a run is (`Plan`, the experiment's `confirm` bounds),
before anything is sent: each changed episode is expected to send again the calls its source
made from the changed move on, priced at the listed prices from their stored tokens. It then
plays each changed episode from its start through the call pipeline (budget, rate limits,
retries, cost, the store), whose answer cache is the record first and the directory's response
cache after it: the calls before the changed move are the stored ones, free; the move itself is
read from its stored reply by the new agent, and only what the record never sent (a re-ask, every
call after the move) reaches a provider and is paid. Seeds are the source episode's, so a fork
asks what its source asked until the two part.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stratagem.errors import StratagemError
from stratagem.experiments.call_writer import CallWriter
from stratagem.experiments.clients import model_config
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.executors import LocalExecutor
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.model_entry import ModelEntry
from stratagem.experiments.plan import Plan
from stratagem.experiments.rescore_read import Reading, Source, fork_episode
from stratagem.experiments.rescore_record import RecordedAnswers
from stratagem.experiments.runner import (
    BUDGET_STOPPED,
    CACHE_FILE,
    LIMITS_FILE,
    RunSummary,
)
from stratagem.experiments.store import ResultStore
from stratagem.llm.budget import Budget
from stratagem.llm.cache import ResponseCache
from stratagem.llm.errors import BudgetExceeded, ModelRefused
from stratagem.llm.pipeline import ModelClient, build_client
from stratagem.llm.pricing import Prices
from stratagem.llm.ratelimit import RateLimiter
from stratagem.llm.registry import check_ready
from stratagem.llm.retry import RetryPolicy
from stratagem.llm.types import Response


@dataclass(frozen=True)
class Fork:
    """A changed episode to play on: its new spec and id, its source, where it changed."""

    spec: EpisodeSpec
    source: Source
    episode_id: str
    reading: Reading

    @property
    def changed_at(self) -> int:
        assert self.reading.changed_at is not None
        return self.reading.changed_at


def fork_plan(forks: Sequence[Fork], models: Sequence[ModelEntry]) -> Plan:
    """What the forks are expected to send: the calls their sources made from the changed move
    on, with their stored tokens, at each model entry's listed price. Refuses, as a run's plan
    does, a model whose API key is missing."""
    entries: dict[str, ModelEntry] = {}
    for entry in models:
        entries.setdefault(entry.model, entry)
    calls = tokens = 0
    usd = 0.0
    unpriced: set[str] = set()
    used: set[str] = set()
    for fork in forks:
        for model, given, got in fork.reading.calls_from(fork.changed_at):
            calls += 1
            tokens += given + got
            used.add(model)
            known = entries.get(model)
            price = None if known is None else _prices(known).price(model)
            if price is None:
                unpriced.add(model)
            else:
                usd += (given * price.input + got * price.output) / 1e6
    for model in sorted(used):
        if model in entries:
            check_ready(model_config(entries[model]))
    return Plan(len(forks), 0, calls, tokens, None if unpriced else usd, tuple(sorted(unpriced)))


def _prices(entry: ModelEntry) -> Prices:
    if entry.price is None:
        return Prices()
    return Prices().with_overrides({entry.model: (entry.price.input, entry.price.output)})


async def play_forks(
    forks: Sequence[Fork],
    config: ExperimentConfig,
    store: ResultStore,
    answers: Mapping[str, Response],
    summary: RunSummary,
    open_episode: Callable[[Fork], None],
) -> None:
    """Play every fork to its end (module docstring), `config.concurrency` at once; each is
    opened in the store by `open_episode`, finished or failed there, and counted in
    `summary`. A budget reached or a model refused starts no further fork."""
    output = Path(config.output)
    cache = ResponseCache(output / CACHE_FILE)
    limiter = RateLimiter(output / LIMITS_FILE)
    budget = _budget(config, store)
    stop = asyncio.Event()
    stopped_by_budget = asyncio.Event()
    recorded = RecordedAnswers(answers, then=cache)
    retry = RetryPolicy(**config.retry.model_dump())
    clients: dict[str, ModelClient] = {
        entry.name: build_client(
            model_config(entry), cache=recorded, limiter=limiter, budget=budget,
            recorder=CallWriter(store, summary), retry=retry,
        )
        for entry in config.models
    }  # fmt: skip

    async def one(fork: Fork) -> None:
        open_episode(fork)
        try:
            state = await fork_episode(store, fork.spec, fork.source, fork.episode_id, clients)
        except StratagemError as exc:
            summary.failed += 1
            if isinstance(exc, BudgetExceeded):
                store.fail_episode(fork.episode_id, BUDGET_STOPPED)
                stopped_by_budget.set()
                stop.set()
                return
            store.fail_episode(fork.episode_id, str(exc))
            summary.errors.append(f"{fork.episode_id}: {exc}")
            if isinstance(exc, ModelRefused):
                summary.stopped = f"model {exc}; no further calls were sent to it"
                stop.set()
            return
        store.finish_episode(fork.episode_id, list(state.payoffs()))
        summary.finished += 1

    try:
        await LocalExecutor().run(forks, one, config.concurrency, stop)
    finally:
        for client in clients.values():
            await client.aclose()
        cache.close()
        limiter.close()
    if stopped_by_budget.is_set() and summary.stopped is None:
        summary.stopped = budget.reached()  # once the calls in flight ended: what was paid


def _budget(config: ExperimentConfig, store: ResultStore) -> Budget:
    """The caps of the experiment's `budget`, charged with what this file already paid for."""
    caps = config.budget
    if caps.max_usd is None and caps.max_tokens is None:
        return Budget()
    paid = store.call_totals()
    return Budget(
        caps.max_usd, caps.max_tokens, spent_usd=paid["paid_usd"], spent_tokens=paid["paid_tokens"]
    )
