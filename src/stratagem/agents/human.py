"""A person in a seat: the observation shown as text, the legal actions listed, the typed answer
checked by the engine's own rules and asked again until it is legal.

The player does no I/O of its own: it is handed `ask` (show a prompt, return the typed line) and
`tell` (show text), so the command line can wire it to the terminal and tests to a script. What the
person sees is what an LLM in the seat would be told: the same templates render the observation.

A person may type what their game asks for: the plain choice (a label or its number), or the
template the game's moderator gives ("I vote for Player 2.", "I contribute 10"), read by the same
parser that reads a model's reply in that game (a MAgIC profile's); the engine validates either.

Input is bounded: a line longer than `MAX_LINE_CHARS` is refused (and never stored or echoed
whole), a refused line is echoed only as a short prefix, and after `MAX_ATTEMPTS` illegal moves
(or `MAX_QUERIES` tool queries) for one move the game is left unfinished, as at the end of the
input, so piped input that is never legal (`yes nope | stratagem play ...`) cannot run forever.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence

import stratagem.agents.magic.theory_profiles  # noqa: F401  (registers the game-theory profiles)
from stratagem.agents.base import Agent, Decision
from stratagem.agents.game_prompts import GamePrompter, prompts_for
from stratagem.agents.magic.chat import speaker
from stratagem.agents.magic.profiles import profile_for
from stratagem.agents.parsing import ParseError
from stratagem.agents.prompts import Prompter
from stratagem.agents.tom.human_tools import desk_for
from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation
from stratagem.games.chat import seat_name
from stratagem.games.matrix.repeated import RepeatedObservation
from stratagem.games.spaces import (
    Action,
    ActionSpace,
    Choice,
    FreeText,
    IllegalAction,
    IntegerRange,
    Shares,
)
from stratagem.games.tradecraft.actions import describe

Ask = Callable[[str], Awaitable[str | None]]
"""Show a prompt, return the line typed (None when the input has ended)."""
Tell = Callable[[str], None]
ShowMove = Callable[[Observation], None]
"""Told the observation before a move is asked (the browser draws its controls from it)."""

MAX_ATTEMPTS = 10
"""Illegal moves a person may type for one move; then the game is left unfinished."""
MAX_QUERIES = 100
"""Tool queries (TradeCraft's `?item`, `check`, ...) a person may make for one move."""
MAX_LINE_CHARS = 10_000
"""The longest line read as a move: five times the longest text a catalog game takes by default
(FreeText's 2,000 characters). `stratagem play` reads at most one character more of a line and
drops the rest unread into memory; a longer line is refused."""
ECHO_CHARS = 60
"""How much of a refused line is shown back to the person."""
REFUSAL_CHARS = 400
"""The longest refusal shown, whatever part of the line a game's message quotes."""


class HumanPlayer(Agent):
    def __init__(
        self,
        game: Game,
        ask: Ask,
        tell: Tell,
        name: str = "human",
        show_move: ShowMove | None = None,
    ) -> None:
        self.name, self._game = name, game
        self.ask = ask
        self.tell = tell
        self.show_move = show_move
        prompts = prompts_for(game)
        self._game_prompter = None if prompts is None else GamePrompter(game, prompts)
        self._matrix_prompter = Prompter("neutral", "choice", "prompt")
        self._profile = profile_for(game)
        """The game's MAgIC chat profile, whose parser reads the template its moderator asks for."""
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
        if self.show_move is not None:
            self.show_move(observation)
        hint = _choices(space)
        attempts = queries = 0
        typed: list[str] = []
        while attempts < MAX_ATTEMPTS and queries < MAX_QUERIES:
            line = await self.ask(f"your move ({hint}): ")
            if line is None:
                raise StratagemError("the input ended before the game did; it is left unfinished")
            if len(line) > MAX_LINE_CHARS:
                attempts += 1
                typed.append(line[:MAX_LINE_CHARS])
                self.tell(
                    f"not a legal move: a line of more than {MAX_LINE_CHARS:,} characters "
                    f"({line[:ECHO_CHARS]!r}... cut)"
                )
                continue
            if desk is not None and (line := desk.take(line, self.tell)) is None:
                queries += 1  # a tool query, answered: not an attempt at a move
                continue
            attempts += 1
            typed.append(line)
            try:
                action = self._read(observation, space, line.strip())
            except ParseError as exc:
                self.tell(f"not a legal move: {_refusal(str(exc), line.strip())}")
                continue
            return Decision(action=action, valid=True, attempts=attempts, raw=tuple(typed))
        what = f"{attempts} tries" if attempts >= MAX_ATTEMPTS else f"{queries} tool queries"
        raise StratagemError(
            f"no legal move in {what}; the game is left unfinished, as at the end of the input"
        )

    def _read(self, observation: Observation, space: ActionSpace, line: str) -> Action:
        """The plain choice, else the template the game asks for (as a model's reply is read)."""
        try:
            return _read(space, line)
        except ParseError as plain:
            if self._profile is None:
                raise
            refused = plain  # its message lists the legal moves
        turn = self._profile.turn(self._game, observation, "paper", False)
        labels = space.labels if isinstance(space, Choice) else ()
        try:
            value = turn.parser.parse(line, labels)
        except ParseError:
            raise refused from None
        return _validated(space, value)

    async def observe(self, observation: Observation, events: Sequence[Event] = ()) -> None:
        if self._tell_chat(observation):
            return
        for event in events:
            self.tell(_plain(event))

    def view(self, observation: Observation) -> str:
        """Everything `observation` tells the seat, in one text, as this player tells it over a
        game: the rules, the chat or the events so far, the state and the move asked for. For a
        program in the seat (`stratagem.env`); unlike `act`, it keeps no state."""
        parts = [self._rules(observation)] if observation.legal is not None else []
        parts.extend(_chat_lines(observation.events))
        if observation.legal is not None:
            parts.append(self._state(observation))
            parts.append(f"your move ({_choices(observation.legal)})")
        return "\n".join(p.strip() for p in parts if p.strip())

    def read(self, observation: Observation, line: str) -> Action:
        """A typed line as the move `observation` asks for, read as `act` reads it (a label or
        its number, the template the game asks for); `ParseError` says why it is not legal."""
        if observation.legal is None:
            raise ParseError("no move is asked of this seat now")
        if len(line) > MAX_LINE_CHARS:
            raise ParseError(f"a line of more than {MAX_LINE_CHARS:,} characters")
        return self._read(observation, observation.legal, line.strip())

    def _tell_chat(self, observation: Observation) -> bool:
        """In a chat game (seed-004's, TradeCraft), what this seat may see that it was not told
        yet, as the chat shows it (`[Moderator]: ...`, `[Player 2]: ...`; other events, such as
        the hands, as plain lines). False for other games."""
        if not any(speaker(e) for e in observation.events):
            return False
        for line in _chat_lines(observation.events[self._told_chat :]):
            self.tell(line)
        self._told_chat = len(observation.events)
        return True

    def _describe(self, observation: Observation) -> str:
        """The rules once, then the state as this seat sees it."""
        parts = [] if self._told_rules else [self._rules(observation)]
        parts.append(self._state(observation))
        self._told_rules = True
        return "\n".join(p.strip() for p in parts if p.strip())

    def _rules(self, observation: Observation) -> str:
        if self._game_prompter is not None:
            return self._game_prompter.system(observation)
        if self._matrix(observation):
            return self._matrix_prompter.system(observation)
        return ""

    def _state(self, observation: Observation) -> str:
        if self._game_prompter is not None:
            return self._game_prompter.turn(observation, "")
        if self._matrix(observation):
            return self._matrix_prompter.decision(observation)
        return ""

    def _matrix(self, observation: Observation) -> bool:
        # the matrix prompts are for two players; MAgIC's 3-player dilemma has its chat
        return isinstance(observation, RepeatedObservation) and self._game.n_players == 2


def _chat_lines(events: Sequence[Event]) -> list[str]:
    """Events as the chat shows them (`[Player 2]: ...`), the others as plain lines."""
    lines = []
    for event in events:
        said = speaker(event)
        lines.append(_plain(event) if said is None else f"[{said[0]}]: {said[2]}")
    return lines


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
    return _validated(space, value)


def _validated(space: ActionSpace, value: Action) -> Action:
    """The space's own check, its refusal as a parse error (the person is asked again)."""
    try:
        return space.validate(value)
    except IllegalAction as exc:
        raise ParseError(str(exc)) from None


def _refusal(message: str, line: str) -> str:
    """A refusal that quotes at most a prefix of a long typed line, and says it was cut."""
    if len(line) > ECHO_CHARS:
        echo = f"{line[:ECHO_CHARS]!r}... (cut from {len(line):,} characters)"
        message = message.replace(repr(line), echo).replace(line, echo)
    return message if len(message) <= REFUSAL_CHARS else message[:REFUSAL_CHARS] + "... (cut)"
