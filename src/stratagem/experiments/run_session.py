"""What the coordinator of a run holds while its episodes play, whichever executor plays them.

The run's one store, response cache, quota state and budget live here, in the `stratagem run`
process: an executor that plays episodes elsewhere (`experiments.distributed`) sends every record
and every question about them back to it, so results, spend and limits are those of one process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from stratagem.agents.base import Agent
from stratagem.errors import StratagemError
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.endpoint_progress import FiguresSource
from stratagem.experiments.episode import open_episode
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.store import ResultStore
from stratagem.games.base import Game
from stratagem.llm.budget import Budget
from stratagem.llm.cache import ResponseCache
from stratagem.llm.pipeline import CallRecorder
from stratagem.llm.ratelimit import RateLimiter
from stratagem.llm.registry import ModelConfig
from stratagem.llm.retry import RetryPolicy


@dataclass
class RunSession:
    experiment: str
    config: ExperimentConfig
    store: ResultStore
    cache: ResponseCache
    limiter: RateLimiter
    budget: Budget
    record: CallRecorder
    """Stores one model call (the runner's recorder: the store, the summary, the progress)."""
    models: Mapping[str, ModelConfig]
    """The model entries' settings, resolved once here (an endpoints file read)."""
    retry: RetryPolicy
    stop: asyncio.Event
    """Set when no new episode may start (a budget reached, a model refused)."""
    finished: Callable[[EpisodeSpec, list[float], int], None]
    """(spec, payoffs, unreadable answers): an episode played to its end."""
    failed: Callable[[EpisodeSpec, StratagemError], None]
    human: Callable[[Game, int], Agent] | None = None
    watch: Callable[[Mapping[str, FiguresSource]], None] = lambda pools: None
    """Told the endpoint pools once the clients are built: their lines under the progress bar
    and `endpoints.json` (`endpoint_progress`)."""
    replayed: Callable[[str, int], None] = lambda why, episodes: None
    """Told (why, how many episodes) when a worker died and its episodes go to others."""

    def open(self, spec: EpisodeSpec) -> None:
        open_episode(self.store, self.experiment, spec)
