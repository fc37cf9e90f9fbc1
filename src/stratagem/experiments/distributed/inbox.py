"""The coordinator's side of a worker's stream: each message applied to the run's one store,
cache, budget and quotas, in the order the worker sent them, and each question answered.

A worker is trusted to play, not to write at will: a write must be one an episode makes
(`EPISODE_WRITES`) and name an episode assigned to that worker, or the run stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments.distributed.messages import (
    Ask,
    CachePut,
    CallRecord,
    Charge,
    Crashed,
    Ended,
    Failure,
    Message,
    PoolFigures,
    QuotaUsed,
    Reply,
    Writes,
)
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.run_session import RunSession
from stratagem.experiments.store import ResultStore
from stratagem.llm.errors import BudgetExceeded
from stratagem.llm.pool_stats import MergedPool

EPISODE_WRITES: Mapping[str, Callable[..., Any]] = {
    "add_event": ResultStore.add_event,
    "add_round": ResultStore.add_round,
    "add_answer": ResultStore.add_answer,
    "add_belief": ResultStore.add_belief,
}
"""The store writes a playing episode makes (`EpisodeSink`); its row, start and end are the
coordinator's own."""


class WorkerCrashed(RuntimeError):
    """An episode on a worker raised what no episode should: a bug, shown with its traceback."""


class Inbox:
    """Applies one worker's messages. `playing` is that worker's assigned episodes by id."""

    def __init__(
        self,
        session: RunSession,
        playing: dict[str, EpisodeSpec],
        reply: Callable[[list[Reply]], None],
        pools: Mapping[str, MergedPool],
    ) -> None:
        """`pools`: the model entries' pools across workers, told each worker's figures."""
        self._pools = pools
        self._session = session
        self._playing = playing
        self._reply = reply
        self.waits: set[asyncio.Task[None]] = set()
        """Quota waits under way (a reservation is answered when the quota allows it)."""

    def apply(self, batch: list[Message]) -> None:
        replies: list[Reply] = []
        for message in batch:
            self._apply(message, replies)
        if replies:
            self._reply(replies)

    def _apply(self, message: Message, replies: list[Reply]) -> None:
        session = self._session
        if isinstance(message, Writes):
            for name, args, _ in message.ops:
                if name not in EPISODE_WRITES:
                    raise StratagemError(f"a Ray worker sent a write no episode makes: {name!r}")
                self._check_episode(args[0] if args else None, name)
            with session.store.transaction():
                for name, args, kwargs in message.ops:
                    EPISODE_WRITES[name](session.store, *args, **kwargs)
        elif isinstance(message, CallRecord):
            if message.context.episode_id is not None:
                self._check_episode(message.context.episode_id, "a model call")
            session.record(
                message.model, message.context, message.request, message.response,
                message.error, message.retries, message.request_json,
            )  # fmt: skip
        elif isinstance(message, Charge):
            session.budget.charge(message.cost, message.tokens)
        elif isinstance(message, CachePut):
            session.cache.put(
                message.key, message.model, message.request, message.response,
                request_json=message.request_json,
            )  # fmt: skip
        elif isinstance(message, QuotaUsed):
            session.limiter.record(message.model, message.tokens, message.reservation)
        elif isinstance(message, Ask):
            self._answer(message, replies)
        elif isinstance(message, Ended):
            self._check_episode(message.episode, "an episode's end")
            spec = self._playing.pop(message.episode)
            if message.failure is not None:
                session.failed(spec, message.failure.error())
            else:
                session.finished(spec, list(message.payoffs or ()), message.unread)
        elif isinstance(message, PoolFigures):
            for name, servers in message.pools.items():
                if name in self._pools:
                    self._pools[name].report(message.worker, servers)
        elif isinstance(message, Crashed):
            raise WorkerCrashed(f"episode {message.episode} on a Ray worker:\n{message.traceback}")

    def _answer(self, ask: Ask, replies: list[Reply]) -> None:
        session = self._session
        if ask.what == "lookup":
            replies.append((ask.id, session.cache.get(ask.args[0]), None))
        elif ask.what == "admit":
            try:
                session.budget.check()
            except BudgetExceeded as exc:
                replies.append((ask.id, None, Failure.of(exc)))
            else:
                replies.append((ask.id, None, None))
        elif ask.what == "acquire":

            async def wait() -> None:
                reservation = await session.limiter.acquire(*ask.args)
                self._reply([(ask.id, reservation, None)])

            task = asyncio.ensure_future(wait())
            self.waits.add(task)
            task.add_done_callback(self.waits.discard)
        else:
            raise StratagemError(f"a Ray worker asked what no worker asks: {ask.what!r}")

    def _check_episode(self, episode: object, what: str) -> None:
        if not isinstance(episode, str) or episode not in self._playing:
            raise StratagemError(
                f"a Ray worker sent {what} for episode {episode!r}, which it was not given"
            )
