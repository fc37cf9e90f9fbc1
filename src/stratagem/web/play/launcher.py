"""Games started from the viewer (`stratagem view DIR --play OUT`, issue 25 item 8 "From the
viewer"): a request names the game and who sits in each seat as `stratagem play` does, and the
game is played in the viewer's own process, on its event loop, into OUT.

Users pay for model calls, and a results directory has one writer: a request is first answered
with the plan's line (what `stratagem run --dry-run` prints), a game with a paid model starts
only with `"confirm": true`, one game at a time is played (the runner takes OUT's writer lock,
so a `stratagem run` writing OUT refuses it, and it refuses them), and a seed already played in
OUT is refused as the command refuses it. Each human seat's link goes only to whoever started
the game, in the answer to that request; `GET /api/play` never lists a seat's link. A game with
no human seat is watched: it pauses `pace` seconds after each step (`"pace"`, 1 by default), and
the answer comes once its episode is stored, so the page can open it at once.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from stratagem.agents.registry import ARCHITECTURES
from stratagem.errors import StratagemError
from stratagem.experiments import play as playing
from stratagem.experiments.lock import writer_active
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.step_watch import step_watch
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import GAMES
from stratagem.llm.registry import parse_model
from stratagem.strategies.registry import strategy_names
from stratagem.web.play import DEFAULT_PACE, IDLE_SECONDS, MAX_PACE
from stratagem.web.play.seat import WebSeat
from stratagem.web.play.session import PlaySession
from stratagem.web.play.verdict import verdict

FREE_PROVIDERS = frozenset({"scripted", "local"})
"""Models that cost nothing: a game with any other needs `"confirm": true`."""
KEPT_GAMES = 20
"""Past games whose seats' pages are still answered (each shows how its game ended)."""
MAX_SEEDS = 2**31
MAX_ROUNDS = 1_000
"""The most rounds a game started here may have: each is played by a person."""
OPEN_SECONDS = 30.0
"""How long a start waits for its episode to be stored before answering anyway."""

log = logging.getLogger(__name__)


@dataclass
class Prepared:
    """A requested game, checked, with its plan, before it starts."""

    runner: Runner
    session: PlaySession
    game: str
    seed: int
    humans: list[int]
    plan: str
    paid: list[str]
    """The paid models the game calls: it needs a confirmation."""
    pace: float
    """Seconds of pause after each step (0 where a person plays)."""


@dataclass
class Started:
    prepared: Prepared
    episode: str
    task: asyncio.Task[None] | None = None
    end: dict[str, Any] | None = None
    tokens: list[str] = field(default_factory=list)
    opened: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the episode is stored (or the game ended before)."""
    abandoned: bool = False

    async def step(self, episode_id: str, n: int) -> None:
        """The game's step watch: the episode is stored, then the pause of its pace."""
        await asyncio.sleep(0)  # the step's writes are committed at this turn
        self.opened.set()
        await asyncio.sleep(self.prepared.pace)

    def state(self, source: str | None) -> dict[str, Any]:
        return {
            "game": self.prepared.game,
            "seed": self.prepared.seed,
            "humans": self.prepared.humans,
            "pace": self.prepared.pace,
            "plan": self.prepared.plan,
            "episode": {"source": source, "id": self.episode},
            "running": self.end is None,
            "end": self.end,
            "result": _result(self.end),
        }


def open_out(out: Path) -> None:
    """OUT as a results directory with a store, so the viewer lists it from the start."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        ResultStore(out / STORE_FILE).close()
    except (OSError, sqlite3.Error) as exc:
        raise StratagemError(
            f"--play {out}: cannot write a results directory there ({exc})"
        ) from None


class Launcher:
    """The games played into OUT from the viewer: at most one at a time."""

    def __init__(self, out: Path, idle_seconds: float = IDLE_SECONDS) -> None:
        self.out = out
        self.idle_seconds = idle_seconds
        self.seats: dict[str, WebSeat] = {}
        """Every kept game's human seats by token: the seat routes read it at each request."""
        self.source: str | None = None
        """OUT's source id among the viewed stores (found by the routes at the first request)."""
        self.games: list[Started] = []
        self._choices: dict[str, Any] | None = None

    @property
    def current(self) -> Started | None:
        return self.games[-1] if self.games and self.games[-1].end is None else None

    def choices(self) -> dict[str, Any]:
        """What the page offers: the catalog's games with their seats, the seat kinds."""
        if self._choices is None:
            games = [
                {"name": e.name, "seats": e.factory().n_players, "description": e.description}
                for e in GAMES.values()
            ]
            self._choices = {
                "games": games,
                "strategies": strategy_names(),
                "architectures": sorted(ARCHITECTURES),
                "model": playing.DEFAULT_MODEL,
            }
        last = self.games[-1].state(self.source) if self.games else None
        return {"enabled": True, **self._choices, "out": str(self.out), "last": last}

    def prepare(self, body: Mapping[str, Any]) -> Prepared:
        """The game a request asks for, checked as `stratagem play` checks its options (the
        same one-line errors), with its plan; nothing is written."""
        game = _text(body, "game")
        seats_given = body.get("seats")
        if not isinstance(seats_given, list) or not all(isinstance(s, str) for s in seats_given):
            raise StratagemError(
                '\'seats\': a list of who sits in each seat, e.g. ["human", "plain"]'
            )
        options = body.get("set", [])
        if not isinstance(options, list) or not all(isinstance(s, str) for s in options):
            raise StratagemError(
                "'set': a list of KIND.OPTION=VALUE, e.g. [\"magic.probes=false\"]"
            )
        model = _text(body, "model", playing.DEFAULT_MODEL)
        rounds = _number(body, "rounds", 1, MAX_ROUNDS)
        seed = _number(body, "seed", 0, MAX_SEEDS - 1)
        chosen = seed if seed is not None else time.time_ns() % MAX_SEEDS
        n_seats = playing.seats_of(game)
        seats = playing.parse_seats([f"{k}={who}" for k, who in enumerate(seats_given)], n_seats)
        config = playing.play_config(
            game, seats, options=playing.parse_options(options, seats), model=model,
            rounds=rounds, seed=chosen, output=self.out,
        )  # fmt: skip
        humans = [k for k, who in enumerate(seats) if who == "human"]
        pace = _pace(body, humans)
        session = PlaySession(config.games[0], humans, self.idle_seconds)
        runner = Runner(config, show_progress=False, human=session.player)
        playing.refuse_played(runner.specs, self.out, chosen)
        models = {s.model.model for spec in runner.specs for s in spec.seats if s.model}
        paid = sorted(m for m in models if parse_model(m).provider not in FREE_PROVIDERS)
        plan = runner.plan().text()
        return Prepared(runner, session, game, chosen, humans, plan, paid, pace)

    def refusal(self) -> str | None:
        """Why no game can start now: one is being played, or another process writes OUT."""
        current = self.current
        if current is not None:
            return (
                f"a game ({current.prepared.game}, seed {current.prepared.seed}) is being played "
                f"in {self.out}; wait for it to end, or abandon it, then start another"
            )
        if writer_active(self.out):
            return (
                f"{self.out}: another stratagem process is writing to this directory; wait for "
                "it to finish or stop it, then try again"
            )
        return None

    def start(self, prepared: Prepared, base: str, *, confirmed: bool) -> dict[str, Any]:
        """Play `prepared` on the running loop; its human seats' links from `base` (the
        viewer's URL, with its token if it has one). A paid model needs `confirmed`."""
        if prepared.paid and not confirmed:
            raise StratagemError(
                f"this game calls paid models ({', '.join(prepared.paid)}): {prepared.plan}; "
                'send "confirm": true to start it'
            )
        started = Started(prepared, prepared.runner.specs[0].id)
        started.tokens = list(prepared.session.by_token)
        self.seats.update(prepared.session.by_token)
        self.games.append(started)
        for old in self.games[:-KEPT_GAMES]:
            for token in old.tokens:
                self.seats.pop(token, None)
        del self.games[:-KEPT_GAMES]
        started.task = asyncio.get_running_loop().create_task(self._play(started))
        links = prepared.session.links(base)
        return {**started.state(self.source), "links": {str(k): v for k, v in links.items()}}

    async def opening(self) -> None:
        """Until the last game's episode is stored (at most `OPEN_SECONDS`)."""
        if self.games:
            with suppress(TimeoutError):
                await asyncio.wait_for(self.games[-1].opened.wait(), OPEN_SECONDS)

    async def abandon(self, episode: str) -> dict[str, Any]:
        """Stop the game being played (its seat's page closed, say): the episode is left
        unfinished with the steps stored, as an interrupted run leaves it, and OUT is free."""
        current = self.current
        if current is None or current.episode != episode or current.task is None:
            raise StratagemError(f"episode {episode} is not being played; nothing to abandon")
        current.abandoned = True
        current.task.cancel()
        await asyncio.gather(current.task, return_exceptions=True)
        return current.state(self.source)

    async def _play(self, started: Started) -> None:
        runner = started.prepared.runner
        step_watch.set(started.step)  # this task's context: the runner's tasks inherit it
        try:
            await runner.run()
            end = playing.ending(runner, self.out)
            if self.source is not None and "payoffs" in end:
                end["replay"] = (
                    f"./#/e/{quote(self.source, safe='')}/{quote(started.episode, safe='')}"
                )
        except asyncio.CancelledError:
            if not started.abandoned:
                raise
            end = {"error": "the game was abandoned: it is left unfinished, its steps stored"}
        except StratagemError as exc:  # OUT taken by another writer after all
            end = {"error": f"the game did not finish: {exc}"}
        except Exception as exc:
            log.exception("stratagem view: a played game failed")
            end = {"error": f"the game did not finish: {type(exc).__name__}"}
        started.end = end
        started.opened.set()
        started.prepared.session.finish(end)


def _result(end: dict[str, Any] | None) -> str | None:
    """The ended game's result, as one who sat in no seat reads it."""
    return verdict(end["payoffs"]) if end is not None and "payoffs" in end else None


def _text(body: Mapping[str, Any], name: str, default: str | None = None) -> str:
    value = body.get(name, default)
    if not isinstance(value, str) or not value.strip():
        raise StratagemError(f"'{name}': a non-empty string")
    return value.strip()


def _pace(body: Mapping[str, Any], humans: list[int]) -> float:
    """`"pace"`: seconds of pause after each step of a game with no human seat."""
    value = body.get("pace")
    if value is None:
        return 0.0 if humans else DEFAULT_PACE
    if humans:
        raise StratagemError("'pace': only for a game with no human seat (one you watch)")
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_PACE:
        raise StratagemError(f"'pace': a number of seconds from 0 to {MAX_PACE:g}, or null")
    return float(value)


def _number(body: Mapping[str, Any], name: str, low: int, high: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise StratagemError(f"'{name}': a whole number >= {low}, or null")
    if value > high:
        raise StratagemError(f"'{name}': at most {high}")
    return value
