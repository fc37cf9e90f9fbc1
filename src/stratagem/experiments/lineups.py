"""Seats and line-ups: who plays in which seat of an episode, as the experiment file names them.

A seat is an LLM agent (an agent entry on a model), a rule-based strategy, or a scripted player. A
line-up is one seat per player of the game. The file names seats by short strings (see
`config.LineupEntry`); this module turns them into `Seat`s and checks, before anything runs, that
each seat can play the game it is given.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stratagem.agents.registry import check_plays
from stratagem.errors import StratagemError
from stratagem.experiments.config import AgentEntry, RotationEntry
from stratagem.experiments.model_entry import ModelEntry
from stratagem.games.base import Game
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.llm.reasoning import ANSWER_PARAMS
from stratagem.strategies.registry import get_game_bot, get_strategy

AGENT_OPPONENT = "agent:"
"""An opponent named `agent:<name>` is that agent entry, played by the same model."""
SCRIPTED = "scripted:"
"""`scripted:<a>,<b>,...` plays those actions in turn, the last one again once they run out;
`scripted:[...]` gives them as a JSON list, for actions with commas (TradeCraft's JSON moves)."""
PINNED = "@"
"""`<agent>@<model id>`: that agent entry played by that model only."""
HUMAN = "human"
"""A person at the terminal (`stratagem play` only: a run from a file has nobody to ask)."""


@dataclass(frozen=True)
class Seat:
    """One seat of an episode. Exactly one of `agent` (with `model`), `strategy`, `script`."""

    label: str
    """The seat as the file names it."""
    agent: AgentEntry | None = None
    model: ModelEntry | None = None
    strategy: str | None = None
    script: tuple[str, ...] | None = None
    pinned: bool = False
    """An LLM seat whose model is fixed (`@`), not taken from the grid's model axis."""
    questions: bool = True
    """Whether an agent with `questions` on answers them in this seat (the first release asked
    only the agent in seat 0, not an `agent:<name>` opponent)."""
    human: bool = False

    @property
    def kind(self) -> str:
        if self.agent is not None:
            return "llm"
        if self.human:
            return HUMAN
        return "strategy" if self.strategy is not None else "scripted"

    def key(self) -> dict[str, Any]:
        """What identifies the seat in an episode id."""
        if self.human:
            return {HUMAN: True}
        if self.agent is not None:
            assert self.model is not None
            return {"agent": self.agent.key(), "model": self.model.model} | model_settings(
                self.model
            )
        if self.strategy is not None:
            return {"strategy": self.strategy}
        return {"scripted": list(self.script or ())}

    def descriptor(self) -> dict[str, Any]:
        """The player descriptor stored with the episode."""
        if self.agent is not None:
            assert self.model is not None
            descriptor = {
                "name": f"{self.agent.name}:{self.model.name}",
                "kind": "llm",
                "model": self.model.model,
                "agent": self.agent.name,
            }
            if self.model.id is not None:  # names the seat's rows (a thinking variant's own)
                descriptor["model_id"] = self.model.id
            return descriptor
        return {"name": self.label, "kind": self.kind}


def model_settings(model: ModelEntry | None) -> dict[str, Any]:
    """The model settings that change what it answers (a thinking budget, a reasoning effort),
    so a thinking variant plays other episodes than the same model without; absent when none is
    set, so ids made before such settings existed stay the same."""
    if model is None:
        return {}
    settings = {k: model.params[k] for k in ANSWER_PARAMS if k in model.params}
    return {"model_settings": settings} if settings else {}


class SeatParser:
    """Turns the file's seat strings into seats, with errors that name the field."""

    def __init__(
        self, agents: Sequence[AgentEntry], models: Sequence[ModelEntry], *, humans: bool = False
    ) -> None:
        self.agents = {a.name: a for a in agents}
        self.models = {m.name: m for m in models}
        self.humans = humans

    def parse(self, text: str, model: ModelEntry | None, where: str) -> Seat:
        """`model` is the grid's model, played by seats that name an agent without `@`."""
        name = text[len(AGENT_OPPONENT) :] if text.startswith(AGENT_OPPONENT) else text
        if text == HUMAN and HUMAN not in self.agents:
            if not self.humans:
                raise StratagemError(
                    f"{where}: a human seat is played in the terminal, with `stratagem play`"
                )
            return Seat(text, human=True)
        if text.startswith(SCRIPTED):
            return Seat(text, script=script_actions(text[len(SCRIPTED) :], where))
        agent_name, _, model_id = name.partition(PINNED)
        if agent_name in self.agents:
            if model_id:
                if model_id not in self.models:
                    raise StratagemError(
                        f"{where}: '{text}' names no model id (models: {', '.join(self.models)})"
                    )
                return Seat(text, self.agents[agent_name], self.models[model_id], pinned=True)
            assert model is not None
            return Seat(text, self.agents[agent_name], model)
        if text.startswith(AGENT_OPPONENT) or model_id:
            raise StratagemError(
                f"{where}: '{text}' names no agent entry (agents: {', '.join(self.agents)})"
            )
        try:
            if get_game_bot(text) is None:
                get_strategy(text)  # not an agent entry: it must name a strategy or a bot
        except StratagemError as exc:
            raise StratagemError(f"{where}: {exc}") from None
        return Seat(text, strategy=text)

    def uses_grid_model(self, texts: Sequence[str]) -> bool:
        """Whether a line-up has an LLM seat that the grid's model plays."""
        for text in texts:
            name = text[len(AGENT_OPPONENT) :] if text.startswith(AGENT_OPPONENT) else text
            if name in self.agents:
                return True
        return False


def script_actions(text: str, where: str) -> tuple[str, ...]:
    """A script's actions: `a,b,...`, or a JSON list whose strings are actions as written and
    whose objects, lists and numbers are actions written as JSON (`[{"decision": "accept"}]`).
    The engine checks each action when it is played, as any other."""
    if not text.lstrip().startswith("["):
        actions = tuple(a.strip() for a in text.split(","))
        if not all(actions):
            raise StratagemError(f"{where}: 'scripted:{text}' needs actions, e.g. scripted:C,D")
        return actions
    try:
        items = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StratagemError(
            f"{where}: scripted:[...] is not a JSON list ({exc.msg} at character {exc.pos})"
        ) from None
    if not isinstance(items, list) or not items or any(isinstance(a, bool | None) for a in items):
        raise StratagemError(f"{where}: scripted:[...] must list actions (texts or JSON values)")
    # An empty text stays one: TradeCraft's pass (seed-002 §2.6 [A]).
    return tuple(a if isinstance(a, str) else json.dumps(a, separators=(",", ":")) for a in items)


def expand_lineup(entry: list[str] | RotationEntry, game: Game, where: str) -> list[list[str]]:
    """The line-ups an entry stands for in `game`."""
    n_seats = game.n_players
    if isinstance(entry, list):
        if len(entry) != n_seats:
            raise StratagemError(
                f"{where}: the game has {n_seats} seats, the line-up names {len(entry)}"
            )
        return [list(entry)]
    sides = game.sides() if entry.by == "side" else None
    if sides is not None:
        if not isinstance(entry.defenders, str):
            raise StratagemError(f"{where}.defenders: by side takes one defender seat")
        order = list(dict.fromkeys(sides))  # each side once, in seat order
        return [
            [entry.challenger if s == side else entry.defenders for s in sides] for side in order
        ]
    defenders = (
        [entry.defenders] * (n_seats - 1) if isinstance(entry.defenders, str) else entry.defenders
    )
    if len(defenders) != n_seats - 1:
        raise StratagemError(
            f"{where}.defenders: the game has {n_seats} seats, so it needs 1 or {n_seats - 1} "
            f"defenders, got {len(defenders)}"
        )
    out: list[list[str]] = []
    for i in range(n_seats):
        lineup = [*defenders[:i], entry.challenger, *defenders[i:]]
        if lineup not in out:  # a challenger among its equals gives the same line-up n times
            out.append(lineup)
    return out


def check_seat(seat: Seat, game: Game, title: str, index: int, where: str) -> None:
    """Refuse a seat that cannot play seat `index` of `game` (named `title` in the file),
    naming the field."""
    if seat.agent is not None:
        try:
            _check_default_label(seat.agent, game, title, index)
        except StratagemError as exc:
            raise StratagemError(f"{where}.invalid: {exc}") from None
    try:
        if seat.agent is not None:
            check_plays(seat.agent, game, title)
        elif seat.strategy is not None and (bot := get_game_bot(seat.strategy, game)) is not None:
            bot.check(game, index)
        elif seat.strategy is not None:
            if type(game) is not RepeatedGame or game.n_players != 2:
                raise StratagemError(
                    f"strategy '{seat.strategy}' plays 2-player repeated matrix games, "
                    f"not '{title}'"
                )
            get_strategy(seat.strategy).reset(game.stage, player=index)
    except StratagemError as exc:
        raise StratagemError(f"{where}: {exc}") from None


def _check_default_label(agent: AgentEntry, game: Game, title: str, seat: int) -> None:
    if not agent.invalid.startswith("default:"):
        return
    label = agent.invalid.split(":", 1)[1]
    stage = game.matrix()
    if stage is None:
        raise StratagemError(
            f"'{agent.invalid}' needs a matrix game's action; '{title}' takes 'forfeit' "
            "(its own rule for a missing action)"
        )
    if label not in stage.labels[seat]:
        raise StratagemError(
            f"'{label}' is not an action of '{title}' ({', '.join(stage.labels[seat])})"
        )
