"""One person's seat in a browser game: what they were told, the move they are asked for, and
the line they send back, passed to the human player as the terminal passes a typed line.

The seat is reached only through its token, a random secret in its link, so each person gets a
link of their own and no one can read or move for another seat. Everything here runs on the
server's event loop. What a seat keeps is bounded: at most `MAX_MESSAGES` lines (the oldest go
first; a page that fell behind is told how many it missed).

A closed tab: a page asks for news at least every `POLL_SECONDS`; when no page of a seat has
asked for `idle_seconds` while a move is waiting, the move ends as the end of a terminal's input
does, so the episode is left unfinished (and stored so), never half-written.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from stratagem.agents.human import MAX_LINE_CHARS
from stratagem.games.base import Game, Observation
from stratagem.web.play.forms import Form, move_form
from stratagem.web.play.verdict import verdict

MAX_MESSAGES = 5_000
"""Lines a seat keeps for its page."""
POLL_SECONDS = 20.0
"""The longest a page's request for news is held open."""
CHECK_SECONDS = 0.5
"""How often a waiting move checks whether its page is still there."""


class NotYourMove(Exception):
    """A line sent when the seat is not asked for a move."""


class WrongTurn(Exception):
    """A line sent for a turn other than the one asked (a duplicate or stale request): never
    played, so a double click cannot move for a round the person has not seen."""


@dataclass
class Move:
    """The move a seat is asked for: the prompt the terminal would print and the page's form."""

    turn: int
    """Which move of the seat this is: asked again after a refused line, it is the same turn."""
    ask: int
    """Which time the seat is asked (every ask, a re-ask too): a page that sent a line for one
    keeps its controls off until the next, so one click sends one line."""
    prompt: str
    form: Form
    answer: asyncio.Future[str | None] = field(repr=False)


class WebSeat:
    def __init__(self, index: int, name: str, game: str, idle_seconds: float) -> None:
        self.index, self.name, self.game = index, name, game
        self.token = secrets.token_urlsafe(18)
        self.idle_seconds = idle_seconds
        self.messages: list[str] = []
        self.dropped = 0
        """Lines dropped from the front, so a message's number stays its position ever told."""
        self.move: Move | None = None
        self._form: Form = {}
        self.turn = 0
        self.asks = 0
        self.end: dict[str, Any] | None = None
        """Set when the game is over: {"payoffs": [...], "result": "You won ...", "replay": ...}
        or {"error": "..."}."""
        self.version = 0
        self._changed = asyncio.Event()
        self.polling = 0
        self.seen = time.monotonic()
        self.saw_end = False

    # ---- the human player's side (agents.human.HumanPlayer's ask, tell and show_move) -----------
    def tell(self, text: str) -> None:
        self.messages.append(text)
        if len(self.messages) > MAX_MESSAGES:
            cut = len(self.messages) - MAX_MESSAGES
            del self.messages[:cut]
            self.dropped += cut
        self._change()

    def show_move(self, game: Game, observation: Observation) -> None:
        self._form = move_form(game, observation)
        self.turn += 1

    def gone(self) -> bool:
        """No page of this seat has asked for news in `idle_seconds` (a closed tab)."""
        return self.polling == 0 and time.monotonic() - self.seen > self.idle_seconds

    async def ask(self, prompt: str) -> str | None:
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self.asks += 1
        self.move = Move(self.turn, self.asks, prompt, self._form, answer)
        self.seen = time.monotonic()  # the idle time counts from the move asked
        self._change()
        try:
            while not answer.done():
                if self.gone():
                    self.tell(
                        f"no page of this seat asked for news in {self.idle_seconds:g} s; "
                        "the game is left unfinished"
                    )
                    return None
                await asyncio.wait({answer}, timeout=CHECK_SECONDS)
            return answer.result()
        finally:
            self.move = None
            self._change()

    # ---- the page's side ---------------------------------------------------------------------
    def send(self, line: str, turn: int) -> None:
        """The line typed or composed on the page for move `turn`, the one the page showed
        (checked by the player)."""
        if self.move is None or self.move.answer.done():
            raise NotYourMove("it is not this seat's move")
        if turn != self.move.turn:
            raise WrongTurn(
                f"turn {turn} is not the move asked (turn {self.move.turn}); reload to see it"
            )
        if len(line) > MAX_LINE_CHARS:
            line = line[: MAX_LINE_CHARS + 1]  # refused by the player as too long, never held
        self.move.answer.set_result(line)

    def finish(self, end: dict[str, Any]) -> None:
        """The game is over: `end` as `experiments.play.ending` says it, with the result in
        this seat's words when it has payoffs."""
        if end.get("payoffs") is not None:
            end = {**end, "result": verdict(end["payoffs"], self.index)}
        self.end = end
        self._change()

    async def news(self, after: int, wait: float) -> dict[str, Any]:
        """The seat's state with the lines after number `after`, once there is something new
        (or `wait` seconds have passed)."""
        self.polling += 1
        try:
            if after >= self.dropped + len(self.messages) and self.end is None and wait > 0:
                version = self.version
                while self.version == version:
                    self._changed.clear()
                    try:
                        await asyncio.wait_for(self._changed.wait(), timeout=wait)
                    except TimeoutError:
                        break
            return self.state(after)
        finally:
            self.polling -= 1
            self.seen = time.monotonic()

    def state(self, after: int) -> dict[str, Any]:
        start = max(after - self.dropped, 0)
        if self.end is not None:
            self.saw_end = True
        return {
            "seat": self.index,
            "name": self.name,
            "game": self.game,
            "first": self.dropped + start,
            "messages": self.messages[start:],
            "next": self.dropped + len(self.messages),
            "move": None if self.move is None else self._move_json(self.move),
            "end": self.end,
        }

    @staticmethod
    def _move_json(move: Move) -> dict[str, Any]:
        return {"turn": move.turn, "ask": move.ask, "prompt": move.prompt, "form": move.form}

    def _change(self) -> None:
        self.version += 1
        self._changed.set()
