"""Run an experiment: expand the grid, play every unfinished episode, record everything at once.

Every round, model call and invalid output goes to the store the moment it exists, and every model
answer goes to the response cache before the round is recorded. So a run killed at any point resumes
by running the same command again: finished episodes are skipped, and interrupted ones are replayed
from their start, their earlier calls answered by the cache for free.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from stratagem.agents.base import Agent
from stratagem.agents.debate_agent import DebateAgent
from stratagem.agents.plain import PlainLLMAgent
from stratagem.agents.prompts import Prompter
from stratagem.agents.questions import ask_questions
from stratagem.agents.self_consistency import SEED003_SAMPLES, SelfConsistentAgent
from stratagem.agents.strategy_agent import StrategyAgent
from stratagem.agents.tool_agent import ToolAgent
from stratagem.errors import StratagemError
from stratagem.experiments.config import AgentEntry, ExperimentConfig, ModelEntry
from stratagem.experiments.executors import get_executor
from stratagem.experiments.grid import EpisodeSpec, expand, experiment_id
from stratagem.experiments.store import ResultStore
from stratagem.games.repeated import RepeatedGame
from stratagem.llm.budget import Budget
from stratagem.llm.cache import ResponseCache
from stratagem.llm.errors import BudgetExceeded
from stratagem.llm.pipeline import CallContext, ModelClient, build_client
from stratagem.llm.pricing import Price
from stratagem.llm.ratelimit import Limits, RateLimiter
from stratagem.llm.registry import ModelConfig
from stratagem.llm.retry import RetryPolicy
from stratagem.llm.types import Request, Response
from stratagem.strategies.registry import get_strategy

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
    cached_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    stopped: str | None = None
    """Why the run stopped early (a budget), if it did."""
    errors: list[str] = field(default_factory=list)


class Runner:
    def __init__(
        self,
        config: ExperimentConfig,
        *,
        executor: str = "local",
        console: Console | None = None,
        show_progress: bool = True,
    ) -> None:
        self.config = config
        self.specs = expand(config)
        self.executor = get_executor(executor)
        self.console = console or Console(stderr=True)
        self.show_progress = show_progress
        self.experiment = experiment_id(config)
        self.output = Path(config.output)

    async def run(self) -> RunSummary:
        started = time.perf_counter()
        summary = RunSummary(self.experiment, len(self.specs))
        self.output.mkdir(parents=True, exist_ok=True)
        with ResultStore(self.output / STORE_FILE) as store:
            store.create_experiment(
                self.experiment, self.config.name, self.config.model_dump(mode="json"), update=True
            )
            done = {e.id for e in store.episodes(status="finished")}
            todo = [s for s in self.specs if s.id not in done]
            summary.skipped = len(self.specs) - len(todo)
            if todo:
                await self._run_episodes(store, todo, summary)
        summary.wall_s = time.perf_counter() - started
        return summary

    async def _run_episodes(
        self, store: ResultStore, todo: list[EpisodeSpec], summary: RunSummary
    ) -> None:
        cache = ResponseCache(self.output / CACHE_FILE)
        limiter = RateLimiter(self.output / LIMITS_FILE)
        budget = self._budget(store)
        stop = asyncio.Event()
        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} episodes"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[usage]}"),
            console=self.console,
            disable=not self.show_progress,
        )
        task = progress.add_task(self.config.name, total=len(todo), usage="")

        def record(
            model: str,
            context: CallContext,
            request: Request,
            response: Response | None,
            error: str | None,
            retries: int,
        ) -> None:
            store.add_llm_call(
                model,
                episode_id=context.episode_id,
                player=context.player,
                round=context.round,
                request={**request.to_json(), "purpose": context.purpose, "retries": retries},
                response=None if response is None else response.to_json(),
                text=None if response is None else response.text,
                input_tokens=None if response is None else response.usage.input_tokens,
                output_tokens=None if response is None else response.usage.output_tokens,
                cost_usd=None if response is None else response.cost_usd,
                latency_s=None if response is None else response.latency_s,
                cached=bool(response and response.cached),
                error=error,
            )
            if response is not None:
                summary.calls += 1
                summary.cached_calls += int(response.cached)
                summary.tokens += response.usage.total
                summary.cost_usd += response.cost_usd
            progress.update(task, usage=_usage_text(summary))

        clients = {
            entry.name: self._client(entry, cache, limiter, budget, record)
            for entry in self.config.models
        }

        async def play(spec: EpisodeSpec) -> None:
            try:
                await self._play_episode(store, spec, clients[spec.model.name])
                summary.finished += 1
            except BudgetExceeded as exc:
                store.fail_episode(spec.id, str(exc))
                summary.failed += 1
                if summary.stopped is None:
                    summary.stopped = str(exc)
                stop.set()
            except StratagemError as exc:
                store.fail_episode(spec.id, str(exc))
                summary.failed += 1
                summary.errors.append(f"{spec.id}: {exc}")
            progress.advance(task)

        try:
            with progress:
                await self.executor.run(todo, play, self.config.concurrency, stop)
        finally:
            for client in clients.values():
                await client.aclose()
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

    def _client(
        self,
        entry: ModelEntry,
        cache: ResponseCache,
        limiter: RateLimiter,
        budget: Budget,
        record: Any,
    ) -> ModelClient:
        price = Price(entry.price.input, entry.price.output) if entry.price else None
        config = ModelConfig(
            model=entry.model,
            base_url=entry.base_url,
            api_key_env=entry.api_key_env,
            timeout_s=entry.timeout_s,
            max_concurrency=entry.max_concurrency,
            limits=Limits(**entry.limits.model_dump()),
            prices=price,
            params=dict(entry.params),
        )
        retry = RetryPolicy(**self.config.retry.model_dump())
        return build_client(
            config, cache=cache, limiter=limiter, budget=budget, recorder=record, retry=retry,
        )  # fmt: skip

    async def _play_episode(
        self, store: ResultStore, spec: EpisodeSpec, client: ModelClient
    ) -> None:
        stage = spec.stage()
        game = RepeatedGame(stage, spec.rounds)
        store.add_episode(
            spec.id,
            self.experiment,
            spec.game,
            spec.players(),
            spec.seed,
            spec=spec.key(),
            labels=[list(ls) for ls in stage.labels],
            game_payoffs=stage.payoffs.tolist(),
        )
        store.start_episode(spec.id)
        # Derived from the episode id, so no two episodes share a model seed: two episodes whose
        # prompts happen to coincide (round 1 against different opponents) still sample
        # independently instead of replaying one cached answer.
        seed = int(spec.id[:8], 16)
        agent = _make_agent(spec.agent, client, stage.sizes[0])
        opponent: Agent
        if spec.opponent_agent is None:
            opponent = StrategyAgent(get_strategy(spec.opponent))
            opponent.reset(seed, spec.id)
        else:
            # Another instance of the same model (seed-003 §2.1) samples with its own seed, so two
            # identical first prompts are not answered by one cached reply.
            opponent = _make_agent(spec.opponent_agent, client, stage.sizes[1])
            opponent.reset(int(spec.id[8:16], 16), spec.id)
        agent.reset(seed, spec.id)
        state = game.initial_state(spec.seed)
        labels = stage.labels
        while not state.is_terminal():
            t = len(state.history) + 1
            first, second = await asyncio.gather(
                agent.act(state.observation(0)), opponent.act(state.observation(1))
            )
            decisions = (first, second)
            actions = {p: d.action for p, d in enumerate(decisions)}
            state, events = state.forfeit(actions)
            played = state.history[-1]
            store.add_round(
                spec.id,
                t,
                [labels[p][a] if a >= 0 else None for p, a in enumerate(played.actions)],
                list(played.payoffs),
                valid=all(d.valid for d in decisions),
                tokens=[d.tokens for d in decisions],
            )
            for p, d in enumerate(decisions):
                if "self_consistency" in d.extra:
                    store.add_event(
                        spec.id, "self_consistency", d.extra["self_consistency"], round=t, player=p
                    )
                if not d.valid:
                    store.add_event(
                        spec.id, "invalid", {"error": d.error, "texts": list(d.raw),
                                             "played": d.action}, round=t, player=p,
                    )  # fmt: skip
            await agent.observe(state.observation(0), events)
            await opponent.observe(state.observation(1), events)
            if spec.agent.questions:
                asker = agent.base if isinstance(agent, SelfConsistentAgent) else agent
                assert isinstance(asker, PlainLLMAgent | ToolAgent | DebateAgent)
                for answer in await ask_questions(asker, state.observation(0)):
                    store.add_answer(
                        spec.id, t, 0, answer.question_id, answer.raw,
                        question=answer.question,
                        parsed={"value": answer.parsed, "relevant": answer.relevant},
                    )  # fmt: skip
        store.finish_episode(spec.id, list(state.payoffs()))


def _make_agent(entry: AgentEntry, client: ModelClient, n_actions: int) -> Agent:
    """The LLM agent an agent entry describes (seed-001 §6: plain, tool or debate), wrapped in
    self-consistency when it samples several decisions (seed-003 §3.5)."""
    common: dict[str, Any] = {
        "max_reasks": entry.max_reasks,
        "invalid": entry.invalid,
        "temperature": entry.temperature,
        "max_tokens": entry.max_tokens,
        "constrain": entry.constrain,
    }
    if entry.kind == "plain":
        prompter = Prompter(entry.framing, entry.output, entry.history, prompting=entry.prompting)
        plain = PlainLLMAgent(client, prompter, **common)
        samples = SEED003_SAMPLES.get(n_actions, 1) if entry.samples == "study" else entry.samples
        return plain if samples == 1 else SelfConsistentAgent(plain, samples)
    assert entry.attitude is not None  # the config validator guarantees it
    prompter = Prompter(entry.framing, "json", "prompt", prompting=entry.prompting)
    if entry.kind == "tool":
        return ToolAgent(
            client, entry.attitude, prompter, max_tool_calls=entry.max_tool_calls,
            memory=entry.memory, **common,
        )  # fmt: skip
    return DebateAgent(
        client, entry.attitude, prompter, max_turns=entry.max_turns, memory=entry.memory,
        **common,
    )  # fmt: skip


def _usage_text(s: RunSummary) -> str:
    return f"{s.calls} calls ({s.cached_calls} cached), {s.tokens:,} tokens, ${s.cost_usd:.4f}"
