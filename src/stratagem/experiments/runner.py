"""Run an experiment: expand the grid, play every unfinished episode, record everything at once.

Every round, model call and invalid output goes to the store as it happens, and every model
answer to the response cache; each event-loop turn's writes are committed together, the store's
first (`commits`). So a run killed at any point resumes by running the same command again:
finished episodes are skipped, and interrupted ones are replayed from their start, their earlier
calls answered by the cache for free.

One run writes a results directory at a time (`WriterLock`), and a file whose named entries
changed since the stored run is refused unless forced (`drift`), so results are never mixed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

from stratagem.agents.base import Agent
from stratagem.errors import StratagemError
from stratagem.experiments import provenance
from stratagem.experiments.call_writer import CallWriter
from stratagem.experiments.call_writer import stored_request as stored_request
from stratagem.experiments.checkpoints import BackgroundCheckpoints
from stratagem.experiments.clients import model_config, model_configs
from stratagem.experiments.commits import TurnCommits
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.drift import changed_settings
from stratagem.experiments.endpoint_progress import EndpointProgress, ProgressWithEndpoints
from stratagem.experiments.executors import get_executor
from stratagem.experiments.grid import EpisodeSpec, Grid, experiment_id
from stratagem.experiments.heap import frozen_setup
from stratagem.experiments.limits import MAX_EPISODES
from stratagem.experiments.lock import WriterLock
from stratagem.experiments.plan import Plan, estimate
from stratagem.experiments.plan_time import Latency
from stratagem.experiments.progress_log import ProgressLog
from stratagem.experiments.run_session import RunSession
from stratagem.experiments.store import ResultStore
from stratagem.games.base import Game
from stratagem.llm.budget import Budget
from stratagem.llm.cache import ResponseCache
from stratagem.llm.errors import BudgetExceeded, ModelRefused
from stratagem.llm.pipeline import CallContext
from stratagem.llm.pricing import CacheUse
from stratagem.llm.ratelimit import RateLimiter
from stratagem.llm.registry import check_ready
from stratagem.llm.retry import RetryPolicy
from stratagem.llm.types import Request, Response

BUDGET_STOPPED = "stopped by the budget: no new model calls once a cap was reached (budget:)"
"""A failed episode's reason when the budget stopped it; the run's last line gives the figures,
once the calls in flight have finished, so every figure shown is what was paid."""
STORE_FILE = "stratagem.db"
CACHE_FILE = "cache.db"
LIMITS_FILE = "ratelimits.db"


@dataclass
class RunSummary:
    experiment: str
    episodes: int
    skipped: int = 0
    finished: int = 0
    failed: int = 0
    calls: int = 0
    """Model calls recorded by this run: answered, replayed from the cache, or failed."""
    cached_calls: int = 0
    failed_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    prompt_cache: CacheUse = field(default_factory=CacheUse)
    """The provider's prompt cache over this run's paid calls: its share of their input, and
    what it saved (`cost_usd` is already what was billed)."""
    wall_s: float = 0.0
    unread_answers: int = 0
    """Answers of finished episodes (questions, probes, analyses) whose reply could not be read:
    stored as unreadable, counted here instead of a line each while the run plays."""
    stopped: str | None = None
    """Why the run stopped early (a budget), if it did."""
    replayed: list[str] = field(default_factory=list)
    """"<why> (<n> episodes)" for every executor worker that died (Ray): its unfinished
    episodes were played again by others."""
    errors: list[str] = field(default_factory=list)
    """"<episode id>: <why>" for every failed episode."""

    def reasons(self, limit: int = 3) -> list[str]:
        """The first distinct reasons episodes failed, each with how many it failed."""
        counts: dict[str, int] = {}
        for error in self.errors:
            reason = error.split(": ", 1)[-1]
            counts[reason] = counts.get(reason, 0) + 1
        return [f"{n} x {reason}" for reason, n in list(counts.items())[:limit]]


class Runner:
    def __init__(
        self,
        config: ExperimentConfig,
        *,
        executor: str = "local",
        executor_options: Mapping[str, Any] | None = None,
        console: Console | None = None,
        show_progress: bool = True,
        human: Callable[[Game, int], Agent] | None = None,
        force: bool = False,
    ) -> None:
        """`human` makes the player of a human seat (`stratagem play`); a run from a file has
        none, so its line-ups may not name one. `force` adds the file's episodes to an
        experiment stored with other settings under the same names (see `drift`).
        `executor_options` are the executor's own (`address`, `workers` for `ray`)."""
        self.config = config
        self.grid = Grid(config, humans=human is not None)
        self.size = self.grid.size()
        if self.size > MAX_EPISODES:
            raise StratagemError(
                f"the grid has {self.size:,} episodes, more than the {MAX_EPISODES:,} one file "
                "may list; split it into several experiments"
            )
        self.human = human
        self.force = force
        self.summary = RunSummary(experiment_id(config), self.size)
        """What the current (or last) run did so far; read it after an interruption."""
        self.executor = get_executor(executor, **(executor_options or {}))
        self.console = console or Console(stderr=True)
        self.show_progress = show_progress
        self.experiment = experiment_id(config)
        self.output = Path(config.output)
        self._checked = False

    @property
    def specs(self) -> list[EpisodeSpec]:
        """Every episode of the grid, as a list (for small grids: a play, a test)."""
        return list(self.grid.specs())

    def check(self) -> None:
        """Refuse what the run would refuse once started, before anything is stored, loaded or
        sent: a model's missing API key (its variable named, never a value), an executor that
        cannot start (Ray not installed). `plan` asks, so `--dry-run` refuses what the run
        does, and so does `run`, whoever calls it (once: `stratagem run` plans, then runs)."""
        if self._checked:
            return
        for entry in self.config.models:
            if entry.endpoints_file is not None and not Path(entry.endpoints_file).exists():
                continue  # the cluster job writes it: checked when the run starts
            check_ready(model_config(entry))
        self.executor.check()
        self._checked = True

    def plan(self) -> Plan:
        """What the run is about to do (episodes, calls, tokens, dollars), before it starts:
        exactly the episodes of this grid that `run` will play, so the plan, `--dry-run` and
        the confirmation bounds never miss an episode whose spec changed under the same
        experiment name (a model swapped for a priced one plays new episodes). Refused as
        `check` refuses."""
        self.check()
        store_file = self.output / STORE_FILE
        done: set[str] = set()
        per_call = None
        latencies: dict[str, Latency] = {}
        if store_file.is_file():
            with ResultStore(store_file) as store:
                done = self._finished_ids(store)
                totals = store.call_totals(self.experiment)
                paid = totals["calls"] - totals["cached"] - totals["errors"]
                per_call = totals["paid_tokens"] / paid if paid > 0 else None
                latencies = {m: Latency(s, n) for m, (s, n) in store.call_latencies().items()}
        finished = sum(spec.id in done for spec in self.grid.specs()) if done else 0
        remaining = self.size - finished
        todo = (spec for spec in self.grid.specs() if spec.id not in done)
        return estimate(
            todo, remaining, finished, self.config.models, per_call,
            latencies=latencies, concurrency=self.config.concurrency,
        )  # fmt: skip

    def _finished_ids(self, store: ResultStore) -> set[str]:
        """The ids of this experiment's finished episodes: the ones a run skips."""
        return {e.id for e in store.episodes(self.experiment, status="finished")}

    async def run(self) -> RunSummary:
        self.check()
        started = time.perf_counter()
        self.summary = summary = RunSummary(self.experiment, self.size)
        with (
            WriterLock(self.output),
            ResultStore(self.output / STORE_FILE) as store,
            frozen_setup(),
        ):
            self._check_drift(store)
            new = store.experiment(self.experiment) is None
            store.create_experiment(
                self.experiment, self.config.name, self.config.model_dump(mode="json"), update=True
            )
            done = self._finished_ids(store)

            def todo() -> Iterator[EpisodeSpec]:
                for spec in self.grid.specs():
                    if spec.id in done:
                        summary.skipped += 1
                    else:
                        yield spec

            try:
                await self._run_episodes(store, todo(), max(self.size - len(done), 0), summary)
            except BaseException:
                if new:  # a start that failed (a key, a cluster) leaves no empty experiment
                    store.drop_empty_experiment(self.experiment)
                raise
        summary.wall_s = time.perf_counter() - started
        return summary

    def _check_drift(self, store: ResultStore) -> None:
        where = f"{self.output}: experiment '{self.experiment}'"  # "... was made with plugin"
        records = store.plugin_records(self.experiment)
        for line in provenance.check(records, where, force=self.force):
            self.console.print(Text(f"warning: {line}"))
        stored = store.experiment(self.experiment)
        if stored is None or self.force or not store.status_counts(self.experiment)["finished"]:
            return
        changes = changed_settings(stored.config, self.config)
        if changes:
            more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
            raise StratagemError(
                f"{self.output}: experiment '{self.experiment}' was run with other settings under "
                f"the same names: {changes[0]}{more}; give the experiment a new `name`, or run "
                "with --force to add these episodes to it"
            )

    async def _run_episodes(
        self,
        store: ResultStore,
        todo: Iterator[EpisodeSpec],
        total: int,
        summary: RunSummary,
    ) -> None:
        cache = ResponseCache(self.output / CACHE_FILE)
        limiter = RateLimiter(self.output / LIMITS_FILE)
        budget = self._budget(store)
        stop = asyncio.Event()
        stopped_by_budget = asyncio.Event()
        # Not a terminal (a log file, a pipe): plain lines instead of a bar redrawn in place.
        lines = None
        if self.show_progress and not self.console.is_terminal:
            lines = ProgressLog(self.console, self.config.name, total)
        # One line at 80 columns: the name (never read as markup) and the bar give way first;
        # episodes, ETA and the usage (calls, tokens, cost) are kept whole.
        progress = ProgressWithEndpoints(
            TextColumn(
                "{task.description}",
                markup=False,
                style="bold",
                table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1, min_width=4),
            ),
            BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=4)),
            MofNCompleteColumn(table_column=Column(no_wrap=True)),
            TimeRemainingColumn(compact=True, table_column=Column(no_wrap=True)),
            TextColumn("{task.fields[usage]}", markup=False, table_column=Column(no_wrap=True)),
            console=self.console,
            disable=not self.show_progress or lines is not None,
            expand=True,
        )
        task = progress.add_task(self.config.name, total=total, usage="")

        def advance() -> None:
            progress.advance(task)
            if lines is not None:
                lines.tick(summary.finished + summary.failed, _usage_text(summary))

        writer = CallWriter(store, summary)

        def record(
            model: str,
            context: CallContext,
            request: Request,
            response: Response | None,
            error: str | None,
            retries: int,
            request_json: str | None,
            cache_key: str | None = None,
        ) -> None:
            writer(model, context, request, response, error, retries, request_json, cache_key)
            if self.show_progress:
                progress.update(task, usage=_usage_text(summary))
                if lines is not None:
                    lines.tick(summary.finished + summary.failed, _usage_text(summary))

        def finished(spec: EpisodeSpec, payoffs: list[float], unread: int) -> None:
            store.finish_episode(spec.id, payoffs)
            summary.finished += 1
            summary.unread_answers += unread
            advance()

        def failed(spec: EpisodeSpec, exc: StratagemError) -> None:
            summary.failed += 1
            if isinstance(exc, BudgetExceeded):
                store.fail_episode(spec.id, BUDGET_STOPPED)
                stopped_by_budget.set()
                stop.set()
            else:
                store.fail_episode(spec.id, str(exc))
                summary.errors.append(f"{spec.id}: {exc}")
            if isinstance(exc, ModelRefused):  # bad key, unknown model: stop the run
                if summary.stopped is None:
                    summary.stopped = f"model {exc}; no further calls were sent to it"
                stop.set()
            advance()

        endpoints = EndpointProgress(progress, {}, self.output, self.experiment)
        session = RunSession(
            self.experiment, self.config, store, cache, limiter, budget, record,
            models=model_configs(self.config),
            retry=RetryPolicy(**self.config.retry.model_dump()),
            stop=stop, finished=finished, failed=failed, human=self.human, watch=endpoints.watch,
            replayed=lambda why, n: summary.replayed.append(f"{why.rstrip('.')} ({n} episodes)"),
        )  # fmt: skip
        try:
            with (
                progress,
                endpoints,
                TurnCommits(store.group, cache.group),
                BackgroundCheckpoints(store.group, cache.group),
            ):
                await self.executor.play(todo, session)
            if stopped_by_budget.is_set() and summary.stopped is None:
                # Said once every call in flight has finished: what was paid in the end.
                summary.stopped = budget.reached()
        finally:
            if lines is not None:
                lines.close(summary.finished + summary.failed, _usage_text(summary))
            cache.close()
            limiter.close()

    def _budget(self, store: ResultStore) -> Budget:
        """The caps, charged with what earlier runs in this directory paid for: a run stopped by
        its budget stays stopped until the cap is raised, instead of spending it again."""
        caps = self.config.budget
        if caps.max_usd is None and caps.max_tokens is None:
            return Budget()
        paid = store.call_totals()  # the whole file: detached calls of restarted episodes too
        return Budget(
            caps.max_usd,
            caps.max_tokens,
            spent_usd=paid["paid_usd"],
            spent_tokens=paid["paid_tokens"],
        )


def _usage_text(s: RunSummary) -> str:
    return f"{s.calls} calls ({s.cached_calls} cached), {s.tokens:,} tokens, ${s.cost_usd:.4f}"
