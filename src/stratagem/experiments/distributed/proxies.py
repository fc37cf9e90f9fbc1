"""A worker's stand-ins for what the coordinator holds: the store its episodes write, the
response cache, the budget, the quotas and the servers' concurrency caps its calls consult
(`llm.shared_state`).

Writes and reports are queued in order on one `Outbox`, which the worker streams to the
coordinator; questions wait for the coordinator's answer. Nothing here blocks: every wait is an
awaited future on the worker's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from stratagem.experiments.distributed.messages import (
    Ask,
    CachePut,
    CallRecord,
    Charge,
    Message,
    Op,
    QuotaUsed,
    Reply,
    ServerFreed,
    SlotFreed,
    Writes,
)
from stratagem.experiments.records import AnswerRecord
from stratagem.llm.cache import ResponseCache
from stratagem.llm.pipeline import CallRecorder
from stratagem.llm.ratelimit import Limits
from stratagem.llm.types import Request, Response

BATCH = 512
"""Most messages in one streamed batch (a batch is what one loop turn queued, up to this)."""


class Outbox:
    """The worker's one ordered queue to the coordinator, and its questions awaiting answers."""

    def __init__(self) -> None:
        self._queue: list[Message] = []
        self._ready = asyncio.Event()
        self._asks: dict[int, tuple[asyncio.Future[Any], Callable[[Any], None] | None]] = {}
        self._next_id = 0
        self.closed = False

    def send(self, message: Message) -> None:
        self._queue.append(message)
        self._ready.set()

    async def ask(self, what: str, *args: Any, orphan: Callable[[Any], None] | None = None) -> Any:
        """The coordinator's answer. `orphan` is given an answer that comes after its asker was
        cancelled: what it grants (a slot) must then be given back."""
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._asks[self._next_id] = (future, orphan)
        self.send(Ask(self._next_id, what, args))
        return await future

    def answer(self, replies: Sequence[Reply]) -> None:
        for ask_id, value, failure in replies:
            future, orphan = self._asks.pop(ask_id, (None, None))
            if future is None:
                continue
            if future.done():
                if orphan is not None and failure is None:
                    orphan(value)
                continue
            if failure is None:
                future.set_result(value)
            else:
                future.set_exception(failure.error())

    def wake(self) -> None:
        """Look again whether the stream may end (an episode's task has ended)."""
        self._ready.set()

    def close(self) -> None:
        self.closed = True
        self._ready.set()

    async def batches(self, idle: Callable[[], bool]) -> AsyncIterator[list[Message]]:
        """Queued messages, a batch at a time, until closed with nothing queued while `idle()`."""
        while not (self.closed and idle() and not self._queue):
            await self._ready.wait()
            await asyncio.sleep(0)  # let this turn's other episodes queue theirs
            batch, self._queue = self._queue[:BATCH], self._queue[BATCH:]
            if not self._queue:
                self._ready.clear()
            if batch:
                yield batch


class RecordingStore:
    """An `EpisodeSink` whose writes go to the coordinator's store: a transaction's writes as one
    message, applied there in one transaction. It keeps each playing episode's answers, which
    the episode reads back at its end."""

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox
        self._group: list[Op] | None = None
        self._answers: dict[str, list[AnswerRecord]] = {}

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self._group = []
        try:
            yield
        finally:
            ops, self._group = self._group, None
            if ops:
                self._outbox.send(Writes(tuple(ops)))

    def _write(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self._group is not None:
            self._group.append((name, args, kwargs))
        else:
            self._outbox.send(Writes(((name, args, kwargs),)))

    def add_event(
        self,
        episode_id: str,
        kind: str,
        data: Any = None,
        *,
        round: int | None = None,
        player: int | None = None,
        seq: int | None = None,
        visible_to: Sequence[int] | None = None,
    ) -> None:
        kwargs = {"round": round, "player": player, "seq": seq, "visible_to": visible_to}
        self._write("add_event", (episode_id, kind, data), kwargs)

    def add_round(
        self,
        episode_id: str,
        round: int,
        actions: Sequence[Any],
        payoffs: Sequence[float] | None = None,
        valid: bool = True,
        tokens: Sequence[int | None] | None = None,
    ) -> None:
        self._write("add_round", (episode_id, round, actions, payoffs, valid, tokens), {})

    def add_answer(
        self,
        episode_id: str,
        round: int | None,
        player: int,
        question_id: str,
        answer: str | None,
        *,
        question: str | None = None,
        parsed: Any = None,
        correct: bool | None = None,
    ) -> None:
        record = AnswerRecord(
            episode_id, round, player, question_id, answer, question, parsed, correct
        )
        self._answers.setdefault(episode_id, []).append(record)
        kwargs = {"question": question, "parsed": parsed, "correct": correct}
        self._write("add_answer", (episode_id, round, player, question_id, answer), kwargs)

    def add_belief(
        self,
        episode_id: str,
        round: int | None,
        player: int,
        order: int,
        content: Any,
        *,
        about_player: int | None = None,
        score: float | None = None,
    ) -> None:
        kwargs = {"about_player": about_player, "score": score}
        self._write("add_belief", (episode_id, round, player, order, content), kwargs)

    def answers(self, episode_id: str) -> list[AnswerRecord]:
        return list(self._answers.get(episode_id, ()))

    def forget(self, episode_id: str) -> None:
        self._answers.pop(episode_id, None)


class RemoteCache:
    """The coordinator's response cache: a lookup asks, a new answer is reported."""

    @staticmethod
    def key_and_request(model: str, request: Request, sample: int) -> tuple[str, str]:
        return ResponseCache.key_and_request(model, request, sample)

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    async def lookup(self, key: str) -> Response | None:
        hit: Response | None = await self._outbox.ask("lookup", key)
        return hit

    def put(
        self,
        key: str,
        model: str,
        request: Request,
        response: Response,
        *,
        request_json: str | None = None,
    ) -> None:
        self._outbox.send(CachePut(key, model, request, response, request_json))


class RemoteBudget:
    """The coordinator's budget: admitting a call asks it (after this worker's earlier charges,
    which the same ordered stream carries first), a paid call is charged there."""

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    async def admit(self) -> None:
        await self._outbox.ask("admit")

    def charge(self, cost: float, tokens: int) -> None:
        self._outbox.send(Charge(cost, tokens))


class RemoteQuotas:
    """The coordinator's rate limiter: a reservation is asked for, the tokens used reported."""

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    async def acquire(self, model: str, limits: Limits, estimated_tokens: int = 0) -> int:
        reservation: int = await self._outbox.ask("acquire", model, limits, estimated_tokens)
        return reservation

    def record(self, model: str, tokens: int, reservation: int | None = None) -> None:
        self._outbox.send(QuotaUsed(model, tokens, reservation))


class RemoteSlots:
    """The coordinator's one semaphore for an entry's `max_concurrency` (a server's cap, shared
    by every worker): a slot is asked for, given back by a message."""

    def __init__(self, outbox: Outbox, entry: str) -> None:
        self._outbox = outbox
        self._entry = entry

    async def acquire(self) -> bool:
        await self._outbox.ask("slot", self._entry, orphan=lambda _: self.release())
        return True

    def release(self) -> None:
        self._outbox.send(SlotFreed(self._entry))


class RemoteServers:
    """The coordinator's `ServerSlots` for an entry's pool of servers (their caps and quotas)."""

    def __init__(self, outbox: Outbox, entry: str) -> None:
        self._outbox = outbox
        self._entry = entry

    async def take(
        self, urls: Sequence[str], tokens: int, wait_s: float
    ) -> tuple[str | None, int | None]:
        def orphan(taken: tuple[str | None, int | None]) -> None:
            if taken[0] is not None:
                self.give(taken[0], 0, taken[1])

        url, reservation = await self._outbox.ask(
            "server", self._entry, tuple(urls), tokens, wait_s, orphan=orphan
        )
        return url, reservation

    def give(self, url: str, tokens: int, reservation: int | None) -> None:
        self._outbox.send(ServerFreed(self._entry, url, tokens, reservation))


def recorder(outbox: Outbox) -> CallRecorder:
    """A `CallRecorder` that reports each call to the coordinator's recorder (a `CallRecord`
    holds the recorder's arguments, in its order)."""
    return lambda *call: outbox.send(CallRecord(*call))
