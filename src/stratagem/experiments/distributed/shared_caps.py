"""The concurrency caps and server quotas a Ray run's workers share, held by the coordinator.

A server's `max_concurrency` (the entry's, and each endpoint's of a pool) and each endpoint's
own `limits:` count every worker's calls: a worker asks for a slot before each call and gives it
back after, so together they never pass them, whatever the number of workers (issue 33 item 3:
dividing a cap of 1 among 2 workers rounded up gave 2; a quota divided rounded down, at least 1,
gave more than the quota). An in-process model's caps (`local/`, `scripted/`) are each worker's
own: each worker has its own model.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Mapping

from stratagem.errors import StratagemError
from stratagem.llm.pool_slots import PoolSlots
from stratagem.llm.registry import ModelConfig, parse_model

IN_PROCESS = frozenset({"local", "scripted"})
"""Providers whose model runs inside the worker: their concurrency cap is per worker."""
MAX_WAIT_S = 30.0
"""The longest a worker's ask for a server slot is held here before it is answered "none"."""


class Cap:
    """A semaphore whose free slot is taken at once, without awaiting (so the coordinator
    answers in the same batch: no reply of its own per call); waiters are served in order."""

    def __init__(self, size: int) -> None:
        self.free = size
        self._waiters: deque[asyncio.Future[None]] = deque()

    def try_take(self) -> bool:
        if self.free > 0 and not self._waiters:
            self.free -= 1
            return True
        return False

    async def take(self) -> None:
        if self.try_take():
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.give()  # given to this waiter as it was cancelled: the next one's
            raise

    def give(self) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)
                return
        self.free += 1


class SharedCaps:
    """One run's shared caps: a `Cap` per entry with a server's `max_concurrency`, and the
    servers' slots and quotas per entry with a pool that has any."""

    def __init__(self, models: Mapping[str, ModelConfig]) -> None:
        self.slots = {
            name: Cap(config.max_concurrency)
            for name, config in models.items()
            if config.max_concurrency and parse_model(config.model).provider not in IN_PROCESS
        }
        self.servers = {
            name: PoolSlots(config.model, config.endpoints)
            for name, config in models.items()
            if config.endpoints and PoolSlots.needed(config.endpoints)
        }


class Held:
    """What one worker holds of the shared caps, given back when it dies (its calls died with
    it). A worker cannot give back more than it holds. Each `try_` takes what is free now; its
    plain form waits for it."""

    def __init__(self, caps: SharedCaps) -> None:
        self._caps = caps
        self._slots: Counter[str] = Counter()
        self._servers: Counter[tuple[str, str]] = Counter()

    def try_slot(self, entry: object) -> bool:
        """A slot of the entry's cap if one is free (a name without a cap is refused)."""
        if not isinstance(entry, str) or entry not in self._caps.slots:
            raise StratagemError(f"a Ray worker asked for a slot of {entry!r}, which has no cap")
        if self._caps.slots[entry].try_take():
            self._slots[entry] += 1
            return True
        return False

    async def slot(self, entry: str) -> None:
        await self._caps.slots[entry].take()
        self._slots[entry] += 1

    def free_slot(self, entry: str) -> None:
        if self._slots[entry] > 0:
            self._slots[entry] -= 1
            self._caps.slots[entry].give()

    def try_server(
        self, entry: object, urls: tuple[str, ...], tokens: int
    ) -> tuple[str | None, int | None]:
        """The first of `urls` with a free slot and quota, taken (`ServerSlots.take`)."""
        if not isinstance(entry, str) or entry not in self._caps.servers:
            raise StratagemError(f"a Ray worker asked for a server of {entry!r}, which has none")
        url, reservation = self._caps.servers[entry].try_take(urls, tokens)
        if url is not None:
            self._servers[entry, url] += 1
        return url, reservation

    async def server(
        self, entry: str, urls: tuple[str, ...], tokens: int, wait_s: float
    ) -> tuple[str | None, int | None]:
        wait = min(max(wait_s, 0.0), MAX_WAIT_S)
        url, reservation = await self._caps.servers[entry].take(urls, tokens, wait)
        if url is not None:
            self._servers[entry, url] += 1
        return url, reservation

    def free_server(self, entry: str, url: str, tokens: int, reservation: int | None) -> None:
        if self._servers[entry, url] > 0:
            self._servers[entry, url] -= 1
            self._caps.servers[entry].give(url, tokens, reservation)

    def release(self) -> None:
        """Everything still held, given back."""
        for entry, count in self._slots.items():
            for _ in range(count):
                self._caps.slots[entry].give()
        for (entry, url), count in self._servers.items():
            for _ in range(count):
                self._caps.servers[entry].give(url, 0, None)
        self._slots.clear()
        self._servers.clear()
