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
from stratagem.experiments.config import AgentEntry, ExperimentConfig, ModelEntry, VariantEntry
from stratagem.experiments.ids import stable_id
from stratagem.games.catalog import get_entry, get_stage
from stratagem.games.normal_form import NormalFormGame
from stratagem.strategies.registry import get_strategy

T = TypeVar("T")

AGENT_OPPONENT = "agent:"
"""An opponent named `agent:<name>` is that agent entry, played by the same model."""


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to play: an LLM agent (player 0) against a rule-based strategy or another
    LLM agent of the same model (player 1)."""

    model: ModelEntry
    agent: AgentEntry
    game: str
    opponent: str
    rounds: int
    seed: int
    repetition: int
    opponent_agent: AgentEntry | None = None
    """The agent entry an `agent:<name>` opponent names."""
    variant: VariantEntry | None = None
    """The definition of `game` when it is a variant declared in the experiment file."""

    def key(self) -> dict[str, Any]:
        """What determines the episode (so its id); connection details are not part of it."""
        key: dict[str, Any] = {
            "model": self.model.model,
            "agent": self.agent.key(),
            "game": self.game,
            "opponent": self.opponent,
            "rounds": self.rounds,
            "seed": self.seed,
            "repetition": self.repetition,
        }
        if self.opponent_agent is not None:
            key["opponent_agent"] = self.opponent_agent.key()
        if self.variant is not None:
            key["variant"] = self.variant.model_dump()
        return key

    def stage(self) -> NormalFormGame:
        """The stage game: a catalog game, or the declared variant."""
        return get_stage(self.game) if self.variant is None else self.variant.build()

    @property
    def id(self) -> str:
        return stable_id(self.key())

    def players(self) -> list[dict[str, Any]]:
        seats = [self.agent]
        if self.opponent_agent is not None:
            seats.append(self.opponent_agent)
        players = [
            {"name": f"{agent.name}:{self.model.name}", "kind": "llm",
             "model": self.model.model, "agent": agent.name}
            for agent in seats
        ]  # fmt: skip
        if self.opponent_agent is None:
            players.append({"name": self.opponent, "kind": "strategy"})
        return players


def experiment_id(config: ExperimentConfig) -> str:
    """An experiment is its name: growing the grid (another seed, another model) adds episodes to
    the same experiment, and the episodes already finished are not played again."""
    return config.name


def expand(config: ExperimentConfig) -> list[EpisodeSpec]:
    """Every episode of the grid, outermost loop first: model, agent, game, opponent, rounds, seed,
    repetition. Names are checked here, before anything runs."""
    variants = _variants(config)
    agents = {a.name: a for a in config.agents}
    if len(agents) != len(config.agents):
        raise StratagemError(f"agents: names must be unique, got {[a.name for a in config.agents]}")
    stages = {}
    for i, game in enumerate(config.games):
        stage = variants[game][1] if game in variants else _field(f"games.{i}", get_stage, game)
        stages[game] = stage
        if stage.n_players != 2:
            raise StratagemError(
                f"games.{i}: '{game}' is not a 2-player game; the runner plays those"
            )
        for j, opponent in enumerate(config.opponents):
            if not opponent.startswith(AGENT_OPPONENT):
                strategy = _field(f"opponents.{j}", get_strategy, opponent)
                _field(f"opponents.{j}", partial(strategy.reset, player=1), stage)
        for j, agent in enumerate(config.agents):
            _field(f"agents.{j}", _prompter, agent)
            if agent.invalid.startswith("default:"):
                label = agent.invalid.split(":", 1)[1]
                if label not in stage.labels[0]:
                    raise StratagemError(
                        f"agents.{j}.invalid: '{label}' is not an action of '{game}' "
                        f"({', '.join(stage.labels[0])})"
                    )
    opponent_agents: dict[str, AgentEntry | None] = {}
    for j, opponent in enumerate(config.opponents):
        name = opponent[len(AGENT_OPPONENT) :] if opponent.startswith(AGENT_OPPONENT) else None
        if name is not None and name not in agents:
            raise StratagemError(
                f"opponents.{j}: '{opponent}' names no agent entry (agents: {', '.join(agents)})"
            )
        opponent_agents[opponent] = None if name is None else agents[name]
    names = [m.name for m in config.models]
    if len(set(names)) != len(names):
        raise StratagemError(f"models: ids must be unique, got {names}")
    specs = [
        EpisodeSpec(
            model, agent, game, opponent, _rounds(rounds, game, variants), seed, rep,
            opponent_agents[opponent], variants[game][0] if game in variants else None,
        )
        for model, agent, game, opponent, rounds, seed in itertools.product(
            config.models, config.agents, config.games, config.opponents, config.rounds,
            config.seeds,
        )
        for rep in range(agent.repetitions or config.repetitions)
    ]  # fmt: skip
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise StratagemError("the grid lists the same episode twice (duplicate values in a list?)")
    return specs


def _prompter(agent: AgentEntry) -> Prompter:
    return Prompter(agent.framing, agent.output, agent.history, prompting=agent.prompting)


def _variants(config: ExperimentConfig) -> dict[str, tuple[VariantEntry, NormalFormGame]]:
    """The declared variants by name, each built (and so checked) once."""
    out: dict[str, tuple[VariantEntry, NormalFormGame]] = {}
    for i, v in enumerate(config.variants):
        if v.name in out:
            raise StratagemError(f"variants.{i}: the name '{v.name}' is declared twice")
        stage = _field(f"variants.{i}", VariantEntry.build, v)
        out[v.name] = (v, stage)
    return out


def _rounds(
    rounds: int | str, game: str, variants: dict[str, tuple[VariantEntry, NormalFormGame]]
) -> int:
    """A round count, "study" resolved to the game's (or its base game's) study length."""
    if isinstance(rounds, int):
        return rounds
    base = variants[game][0].base if game in variants else game
    entry = get_entry(base)
    if not entry.rounds:
        raise StratagemError(
            f"rounds: '{game}' comes from no repeated-game study, so 'study' has no value for it; "
            "give a number"
        )
    return entry.rounds[0]


def _field(where: str, check: Callable[[Any], T], value: Any) -> T:
    """Run a check, prefixing its error with the config field it is about."""
    try:
        return check(value)
    except StratagemError as exc:
        raise StratagemError(f"{where}: {exc}") from None
