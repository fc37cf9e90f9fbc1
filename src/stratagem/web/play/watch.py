"""A game watched in the browser (`stratagem play --web` with no person seated): the viewer over
the results directory, served while the runner plays into it, and the link of the game's episode
page, which follows the game as it is stored (the page polls the store's version, as it does for
any running episode). A pause of `pace` seconds follows each step.

The link is given once the episode is stored, so it works the moment it appears. Once the game
is over the server stops when a page has loaded its end (or after `linger` seconds); Ctrl-C stops
the server, and the game with it if it is still played (left unfinished, as an interrupted run).
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from stratagem.experiments.runner import STORE_FILE, Runner, RunSummary
from stratagem.experiments.step_watch import step_watch
from stratagem.web.play.session import LINGER_SECONDS
from stratagem.web.server import build_app

EPISODE_API = "/api/episodes/"


class _Loads:
    """Counts the requests for an episode's data: one made after the game ended loads its end."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.count = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and str(scope.get("path", "")).startswith(EPISODE_API):
            self.count += 1
        await self.app(scope, receive, send)


async def watch_served(
    runner: Runner,
    sock: socket.socket,
    *,
    base: str,
    token: str | None,
    pace: float,
    shown: Callable[[str], None],
    over: Callable[[RunSummary], None],
    linger: float = LINGER_SECONDS,
) -> RunSummary:
    """Play `runner`'s one episode, a pause of `pace` s after each step, and serve the viewer
    on `sock`; `shown(url)` once the episode page can be opened (`base`: the server's URL, its
    token included), `over(summary)` when the game is over, before lingering."""
    opened = asyncio.Event()

    async def step(episode_id: str, n: int) -> None:
        await asyncio.sleep(0)  # the step's writes are committed at this turn
        opened.set()
        await asyncio.sleep(pace)

    reset = step_watch.set(step)
    game = asyncio.create_task(runner.run())  # the task keeps the watch; this context drops it
    step_watch.reset(reset)
    waiting = asyncio.create_task(opened.wait())
    await asyncio.wait({game, waiting}, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if not opened.is_set():  # ended before its episode was stored (a key, a writer, a seat)
        summary = await game
        over(summary)
        return summary
    app = build_app([runner.output], token=token)
    try:
        loads = _Loads(app)
        config = uvicorn.Config(loads, log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=2)  # fmt: skip
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            shown(base + _episode_route(app.state.data.now(lambda s: s.sources()), runner))
            await asyncio.wait({serving, game}, return_when=asyncio.FIRST_COMPLETED)
            if not game.done():  # the server stopped first: Ctrl-C
                game.cancel()
                await asyncio.gather(game, return_exceptions=True)
                raise KeyboardInterrupt
            summary = game.result()
            over(summary)
            seen, deadline = loads.count, time.monotonic() + linger
            while loads.count == seen and time.monotonic() < deadline and not serving.done():
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)  # the last answer leaves before the server closes
            return summary
        finally:
            server.should_exit = True
            await asyncio.gather(serving, return_exceptions=True)
    finally:
        app.state.data.close()


def _episode_route(sources: list[dict[str, object]], runner: Runner) -> str:
    """The viewer's in-page route of the episode: `#/e/<source>/<id>`."""
    store = (Path(runner.output) / STORE_FILE).resolve()
    found = [str(x["id"]) for x in sources if Path(str(x["path"])).resolve() == store]
    source = found[0] if found else str(sources[0]["id"])
    return f"#/e/{quote(source, safe='')}/{quote(runner.specs[0].id, safe='')}"
