"""Seats become agents: one builder per kind of seat (a registry, so the runner has no switch).

Seeds: each seat's randomness comes from the episode id, so no two episodes or seats share a model
seed (two episodes whose first prompts coincide still sample independently instead of replaying one
cached answer), and the same episode always gets the same seeds. Seat 0 and every rule-based seat
use the first 8 hex digits of the id, seat 1's LLM the next 8, as the first release did; later
seats hash the id with their index.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from stratagem.agents.base import Agent
from stratagem.agents.game_bot_agent import GameBotAgent
from stratagem.agents.registry import build_agent
from stratagem.agents.scripted_player import ScriptedPlayer
from stratagem.agents.strategy_agent import StrategyAgent
from stratagem.errors import StratagemError
from stratagem.experiments.ids import stable_id
from stratagem.experiments.lineups import Seat
from stratagem.games.base import Game
from stratagem.llm.pipeline import ModelClient
from stratagem.strategies.registry import get_game_bot, get_strategy


@dataclass(frozen=True)
class Seating:
    """What seats are made from: the model clients by model id, and who takes a human seat."""

    clients: Mapping[str, ModelClient] = field(default_factory=dict)
    human: Callable[[Game, int], Agent] | None = None
    """The player of a human seat, made from the game and the seat's index."""


def _llm(seat: Seat, index: int, seating: Seating, game: Game) -> Agent:
    assert seat.agent is not None and seat.model is not None
    asks = seat.questions and seat.agent.questions
    return build_agent(seat.agent, seating.clients[seat.model.name], game, questions=asks)


def _strategy(seat: Seat, index: int, seating: Seating, game: Game) -> Agent:
    assert seat.strategy is not None
    bot = get_game_bot(seat.strategy, game)
    return StrategyAgent(get_strategy(seat.strategy)) if bot is None else GameBotAgent(bot)


def _scripted(seat: Seat, index: int, seating: Seating, game: Game) -> Agent:
    return ScriptedPlayer(seat.script or (), name=seat.label)


def _human(seat: Seat, index: int, seating: Seating, game: Game) -> Agent:
    if seating.human is None:
        raise StratagemError("a human seat needs a terminal: play it with `stratagem play`")
    return seating.human(game, index)


SEAT_AGENTS: dict[str, Callable[[Seat, int, Seating, Game], Agent]] = {
    "llm": _llm,
    "strategy": _strategy,
    "scripted": _scripted,
    "human": _human,
}


def seat_agent(seat: Seat, index: int, episode_id: str, seating: Seating, game: Game) -> Agent:
    """The agent of one seat, reset for the episode with its seed."""
    agent = SEAT_AGENTS[seat.kind](seat, index, seating, game)
    agent.reset(seat_seed(episode_id, index, seat.kind), episode_id)
    return agent


def seat_seed(episode_id: str, index: int, kind: str) -> int:
    if index == 0 or kind != "llm":
        return int(episode_id[:8], 16)
    if index == 1:
        return int(episode_id[8:16], 16)
    return int(stable_id([episode_id, index])[:8], 16)
