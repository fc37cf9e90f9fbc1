"""An experiment's model entries as model clients: resolved once by whoever coordinates the run
(an endpoints file is read there), then built into clients wherever episodes play."""

from __future__ import annotations

from collections.abc import Mapping

from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.endpoints import pool_of
from stratagem.experiments.model_entry import ModelEntry
from stratagem.llm.pipeline import CallRecorder, ModelClient, build_client
from stratagem.llm.pricing import Price
from stratagem.llm.ratelimit import Limits
from stratagem.llm.registry import EndpointConfig, ModelConfig
from stratagem.llm.retry import RetryPolicy
from stratagem.llm.shared_state import AnswerCache, Quotas, Spending


def model_config(entry: ModelEntry) -> ModelConfig:
    """One entry's client settings, its endpoints file read now."""
    price = Price(**entry.price.model_dump()) if entry.price else None
    endpoints = tuple(
        EndpointConfig(**e.model_dump()) for e in pool_of(entry.endpoints, entry.endpoints_file)
    )
    return ModelConfig(
        model=entry.model,
        base_url=entry.base_url,
        endpoints=endpoints or None,
        api_key_env=entry.api_key_env,
        timeout_s=entry.timeout_s,
        max_concurrency=entry.max_concurrency,
        limits=Limits(**entry.limits.model_dump()),
        prices=price,
        params=dict(entry.params),
        path=entry.path,
    )


def model_configs(config: ExperimentConfig) -> dict[str, ModelConfig]:
    """Every entry's settings, by entry name."""
    return {entry.name: model_config(entry) for entry in config.models}


def build_clients(
    configs: Mapping[str, ModelConfig],
    retry: RetryPolicy,
    *,
    cache: AnswerCache | None,
    limiter: Quotas | None,
    budget: Spending | None,
    recorder: CallRecorder,
) -> dict[str, ModelClient]:
    """One client per entry, all sharing the run's cache, quotas, budget and recorder."""
    return {
        name: build_client(
            config, cache=cache, limiter=limiter, budget=budget, recorder=recorder, retry=retry
        )
        for name, config in configs.items()
    }
