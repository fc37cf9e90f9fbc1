"""Expand an experiment file into episode specs with stable ids.

An episode's id is the hash of everything that determines it, so the same file always produces the
same ids: that is how a re-run recognises finished work.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from stratagem.agents.prompts import Prompter
from stratagem.errors import StratagemError
from stratagem.experiments.config import AgentEntry, ExperimentConfig, ModelEntry
from stratagem.experiments.ids import stable_id
from stratagem.games.catalog import get_stage
from stratagem.strategies.registry import get_strategy

T = TypeVar("T")


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to play: an LLM agent (player 0) against a rule-based opponent (player 1)."""

    model: ModelEntry
    agent: AgentEntry
    game: str
    opponent: str
    rounds: int
    seed: int
    repetition: int

    def key(self) -> dict[str, Any]:
        """What determines the episode (so its id); connection details are not part of it."""
        return {
            "model": self.model.model,
            "agent": self.agent.model_dump(),
            "game": self.game,
            "opponent": self.opponent,
            "rounds": self.rounds,
            "seed": self.seed,
            "repetition": self.repetition,
        }

    @property
    def id(self) -> str:
        return stable_id(self.key())

    def players(self) -> list[dict[str, Any]]:
        return [
            {"name": f"{self.agent.name}:{self.model.name}", "kind": "llm",
             "model": self.model.model, "agent": self.agent.name},
            {"name": self.opponent, "kind": "strategy"},
        ]  # fmt: skip


def experiment_id(config: ExperimentConfig) -> str:
    """An experiment is its name: growing the grid (another seed, another model) adds episodes to
    the same experiment, and the episodes already finished are not played again."""
    return config.name


def expand(config: ExperimentConfig) -> list[EpisodeSpec]:
    """Every episode of the grid, outermost loop first: model, agent, game, opponent, rounds, seed,
    repetition. Names are checked here, before anything runs."""
    for i, game in enumerate(config.games):
        stage = _field(f"games.{i}", get_stage, game)
        if stage.n_players != 2:
            raise StratagemError(
                f"games.{i}: '{game}' is not a 2-player game; the runner plays those"
            )
        for j, opponent in enumerate(config.opponents):
            strategy = _field(f"opponents.{j}", get_strategy, opponent)
            _field(f"opponents.{j}", partial(strategy.reset, player=1), stage)
        for j, agent in enumerate(config.agents):
            _field(f"agents.{j}", lambda a: Prompter(a.framing, a.output, a.history), agent)
            if agent.invalid.startswith("default:"):
                label = agent.invalid.split(":", 1)[1]
                if label not in stage.labels[0]:
                    raise StratagemError(
                        f"agents.{j}.invalid: '{label}' is not an action of '{game}' "
                        f"({', '.join(stage.labels[0])})"
                    )
    names = [m.name for m in config.models]
    if len(set(names)) != len(names):
        raise StratagemError(f"models: ids must be unique, got {names}")
    specs = [
        EpisodeSpec(model, agent, game, opponent, rounds, seed, rep)
        for model, agent, game, opponent, rounds, seed, rep in itertools.product(
            config.models, config.agents, config.games, config.opponents, config.rounds,
            config.seeds, range(config.repetitions),
        )
    ]  # fmt: skip
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise StratagemError("the grid lists the same episode twice (duplicate values in a list?)")
    return specs


def _field(where: str, check: Callable[[Any], T], value: Any) -> T:
    """Run a check, prefixing its error with the config field it is about."""
    try:
        return check(value)
    except StratagemError as exc:
        raise StratagemError(f"{where}: {exc}") from None
