"""A game played in the browser: the run of `stratagem play` and the seats' server on one loop.

The runner plays the episode as the terminal command does and stores it like any other; each
human seat's player is handed its `WebSeat`'s ask and tell instead of the terminal's. The server
lives only as long as the game: once it is over, each page is shown the result, and the server
stops when every page has seen it (or after `linger` seconds). Ctrl-C stops the server and the
game with it; the episode is then left unfinished, as an interrupted run leaves it.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import uvicorn

from stratagem.agents.base import Agent
from stratagem.agents.human import HumanPlayer
from stratagem.experiments.runner import Runner, RunSummary
from stratagem.games.base import Game
from stratagem.games.chat import seat_name
from stratagem.web.play.app import build_play_app
from stratagem.web.play.seat import WebSeat

LINGER_SECONDS = 30.0
"""How long the server waits, after the game, for every page to be shown the result."""


class PlaySession:
    """The human seats of one played episode, by index and by token."""

    def __init__(self, game: str, human_seats: Sequence[int], idle_seconds: float) -> None:
        self.by_index = {k: WebSeat(k, seat_name(k), game, idle_seconds) for k in human_seats}
        self.by_token = {seat.token: seat for seat in self.by_index.values()}

    def player(self, game: Game, index: int) -> Agent:
        """The runner's `human` hook: the player of seat `index`, wired to its page."""
        seat = self.by_index[index]
        return HumanPlayer(game, seat.ask, seat.tell, show_move=lambda o: seat.show_move(game, o))

    def links(self, base: str) -> dict[int, str]:
        """Each human seat's link: the page, the seat's token after `#` (never sent in a
        request line, a log or a Referer)."""
        page, _, query = base.partition("?")
        page += "play" + (f"?{query}" if query else "")
        return {k: f"{page}#{seat.token}" for k, seat in self.by_index.items()}

    def finish(self, end: dict[str, Any]) -> None:
        for seat in self.by_index.values():
            seat.finish(end)

    def all_saw_end(self) -> bool:
        """Every seat's page was shown the end, or has gone (a closed tab never comes back)."""
        return all(seat.saw_end or seat.gone() for seat in self.by_index.values())


async def play_served(
    session: PlaySession,
    runner: Runner,
    sock: socket.socket,
    *,
    token: str | None,
    ending: Callable[[], dict[str, Any]],
    linger: float = LINGER_SECONDS,
) -> RunSummary:
    """Serve the seats on `sock` while `runner` plays; then show each page `ending()`."""
    app = build_play_app(session.by_token, token=token)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=2)  # fmt: skip
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    game = asyncio.create_task(runner.run())
    try:
        await asyncio.wait({serving, game}, return_when=asyncio.FIRST_COMPLETED)
        if not game.done():  # the server stopped first: Ctrl-C
            game.cancel()
            await asyncio.gather(game, return_exceptions=True)
            raise KeyboardInterrupt
        summary = game.result()
        session.finish(ending())
        deadline = time.monotonic() + linger
        while not session.all_saw_end() and time.monotonic() < deadline and not serving.done():
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.2)  # the last answers leave before the server closes
        return summary
    finally:
        server.should_exit = True
        await asyncio.gather(serving, return_exceptions=True)
