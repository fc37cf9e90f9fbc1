"""The coordinator's side of a worker's stream: each message applied to the run's one store,
cache, budget, quotas and servers' caps, in the order the worker sent them, and each question
answered.

A worker is trusted to play, not to write at will: a write must be one an episode makes
(`EPISODE_WRITES`) and name an episode assigned to that worker, or the run stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
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
    ServerFreed,
    SlotFreed,
    Writes,
)
from stratagem.experiments.distributed.shared_caps import Held
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
        held: Held,
    ) -> None:
        """`pools`: the model entries' pools across workers, told each worker's figures.
        `held`: what this worker holds of the run's shared caps."""
        self._pools = pools
        self.held = held
        self._session = session
        self._playing = playing
        self._reply = reply
        self.waits: set[asyncio.Future[Any]] = set()
        """Quota and slot waits under way (each answered when the quota or a slot allows it)."""
        self._granted: list[Reply] = []

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
                message.error, message.retries, message.request_json, message.cache_key,
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
        elif isinstance(message, SlotFreed):
            self.held.free_slot(message.entry)
        elif isinstance(message, ServerFreed):
            self.held.free_server(message.entry, message.url, message.tokens, message.reservation)
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
            self._later(ask.id, session.limiter.acquire(*ask.args))
        elif ask.what == "slot":  # a free slot is answered in this batch's replies
            (entry,) = ask.args
            if self.held.try_slot(entry):
                replies.append((ask.id, None, None))
            else:
                self._later(ask.id, self.held.slot(entry))
        elif ask.what == "server":
            entry, urls, tokens, wait_s = ask.args
            taken = self.held.try_server(entry, urls, tokens)
            if taken[0] is not None or wait_s <= 0:
                replies.append((ask.id, taken, None))
            else:
                self._later(ask.id, self.held.server(entry, urls, tokens, wait_s))
        else:
            raise StratagemError(f"a Ray worker asked what no worker asks: {ask.what!r}")

    def _later(self, ask_id: int, granted: Awaitable[Any]) -> None:
        """Answer once `granted` is (a quota, a slot): the stream goes on meanwhile. The answers
        granted in one loop turn go to the worker together."""

        def done(task: asyncio.Future[Any]) -> None:
            self.waits.discard(task)
            if task.cancelled():
                return
            exc = task.exception()
            if not self._granted:
                asyncio.get_running_loop().call_soon(self._send_granted)
            if exc is None:
                self._granted.append((ask_id, task.result(), None))
            else:
                self._granted.append((ask_id, None, Failure.of(StratagemError(str(exc)))))

        task = asyncio.ensure_future(granted)
        self.waits.add(task)
        task.add_done_callback(done)

    def _send_granted(self) -> None:
        granted, self._granted = self._granted, []
        self._reply(granted)

    def _check_episode(self, episode: object, what: str) -> None:
        if not isinstance(episode, str) or episode not in self._playing:
            raise StratagemError(
                f"a Ray worker sent {what} for episode {episode!r}, which it was not given"
            )
