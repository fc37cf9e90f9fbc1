"""A person in a seat: the observation shown as text, the legal actions listed, the typed answer
checked by the engine's own rules and asked again until it is legal.

The player does no I/O of its own: it is handed `ask` (show a prompt, return the typed line) and
`tell` (show text), so the command line can wire it to the terminal and tests to a script. What the
person sees is what an LLM in the seat would be told: the same templates render the observation.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence

from stratagem.agents.base import Agent, Decision
from stratagem.agents.game_prompts import GamePrompter, prompts_for
from stratagem.agents.human_tools import desk_for
from stratagem.agents.magic.chat import speaker
from stratagem.agents.parsing import ParseError
from stratagem.agents.prompts import Prompter
from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation
from stratagem.games.chat import seat_name
from stratagem.games.repeated import RepeatedObservation
from stratagem.games.spaces import (
    Action,
    ActionSpace,
    Choice,
    FreeText,
    IllegalAction,
    IntegerRange,
    Shares,
)
from stratagem.games.tradecraft_actions import describe

Ask = Callable[[str], Awaitable[str | None]]
"""Show a prompt, return the line typed (None when the input has ended)."""
Tell = Callable[[str], None]


class HumanPlayer(Agent):
    def __init__(self, game: Game, ask: Ask, tell: Tell, name: str = "human") -> None:
        self.name, self._game = name, game
        self.ask = ask
        self.tell = tell
        prompts = prompts_for(game)
        self._game_prompter = None if prompts is None else GamePrompter(game, prompts)
        self._matrix_prompter = Prompter("neutral", "choice", "prompt")
        self._told_rules = False
        self._told_chat = 0

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        self._told_rules = False
        self._told_chat = 0

    async def act(self, observation: Observation) -> Decision:
        space = observation.legal
        if space is None:
            raise StratagemError("the human seat was asked to act with no move to make")
        self._tell_chat(observation)
        self.tell(self._describe(observation))
        desk = desk_for(self._game, observation)  # TradeCraft's tools (seed-002 §2.6)
        if desk is not None:
            self.tell(desk.help)
        hint = _choices(space)
        attempts = 0
        typed: list[str] = []
        while True:
            line = await self.ask(f"your move ({hint}): ")
            if line is None:
                raise StratagemError("the input ended before the game did; it is left unfinished")
            if desk is not None and (line := desk.take(line, self.tell)) is None:
                continue  # a tool query, answered: not an attempt at a move
            attempts += 1
            typed.append(line)
            try:
                action = _read(space, line.strip())
            except ParseError as exc:
                self.tell(f"not a legal move: {exc}")
                continue
            return Decision(action=action, valid=True, attempts=attempts, raw=tuple(typed))

    async def observe(self, observation: Observation, events: Sequence[Event] = ()) -> None:
        if self._tell_chat(observation):
            return
        for event in events:
            self.tell(_plain(event))

    def _tell_chat(self, observation: Observation) -> bool:
        """In a chat game (seed-004's, TradeCraft), what this seat may see that it was not told
        yet, as the chat shows it (`[Moderator]: ...`, `[Player 2]: ...`; other events, such as
        the hands, as plain lines). False for other games."""
        said = [speaker(e) for e in observation.events]
        if not any(said):
            return False
        for event, line in zip(observation.events[self._told_chat :], said[self._told_chat :],
                               strict=True):  # fmt: skip
            self.tell(_plain(event) if line is None else f"[{line[0]}]: {line[2]}")
        self._told_chat = len(said)
        return True

    def _describe(self, observation: Observation) -> str:
        """The rules once, then the state as this seat sees it."""
        parts = []
        if self._game_prompter is not None:
            if not self._told_rules:
                parts.append(self._game_prompter.system(observation))
            parts.append(self._game_prompter.turn(observation, ""))
        elif isinstance(observation, RepeatedObservation):
            if not self._told_rules:
                parts.append(self._matrix_prompter.system(observation))
            parts.append(self._matrix_prompter.decision(observation))
        self._told_rules = True
        return "\n".join(p.strip() for p in parts if p.strip())


def _plain(event: Event) -> str:
    hands = event.data.get("hands")
    if event.kind == "hands" and isinstance(hands, list):  # TradeCraft's public hands
        shown = "; ".join(f"{seat_name(p)}: {describe(h)}" for p, h in enumerate(hands))
        return f"- hands now: {shown}"
    details = ", ".join(f"{k}={v}" for k, v in event.data.items() if k != "round")
    return f"- {event.kind} ({details})"


def _choices(space: ActionSpace) -> str:
    if isinstance(space, Choice):
        return ", ".join(f"{i}={label}" for i, label in enumerate(space.labels, start=1))
    if isinstance(space, IntegerRange):
        return f"a whole number from {space.low} to {space.high}"
    if isinstance(space, FreeText):
        # A structured text action (TradeCraft's proposals, decisions, crafts) says its format.
        hint = getattr(space, "FORMAT_HINT", None)
        return (
            hint if isinstance(hint, str) else f"a message of at most {space.max_chars} characters"
        )
    if isinstance(space, Shares):
        return (
            f"shares for {', '.join(space.parties)} in steps of {space.step} summing to "
            f"{space.total}, joined by '/' (e.g. {space.example()})"
        )
    return "an action"


def _read(space: ActionSpace, line: str) -> Action:
    """The typed line as an action (a choice by label or number), checked by the space itself."""
    value: Action = line
    if isinstance(space, Choice):
        by_number = line.isdigit() and 1 <= int(line) <= len(space.labels)
        named = [label for label in space.labels if label.casefold() == line.casefold()]
        if by_number:
            value = space.labels[int(line) - 1]
        elif named:
            value = named[0]
    elif isinstance(space, IntegerRange):
        if not re.fullmatch(r"[+-]?\d{1,18}", line):
            raise ParseError(f"type a whole number from {space.low} to {space.high}")
        value = int(line)
    try:
        return space.validate(value)
    except IllegalAction as exc:
        raise ParseError(str(exc)) from None
