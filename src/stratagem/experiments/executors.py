"""Where episodes run. `local` runs them as asyncio tasks in this process; the seam lets a later
executor (Ray) run the same episode function elsewhere."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

from stratagem.errors import unknown_name

T = TypeVar("T")


class Executor(Protocol):
    async def run(
        self,
        items: Sequence[T],
        work: Callable[[T], Awaitable[None]],
        concurrency: int,
        stop: asyncio.Event,
    ) -> None:
        """Run `work` on every item, at most `concurrency` at once; start no new item once `stop`
        is set."""


class LocalExecutor:
    async def run(
        self,
        items: Sequence[T],
        work: Callable[[T], Awaitable[None]],
        concurrency: int,
        stop: asyncio.Event,
    ) -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(item: T) -> None:
            async with gate:
                if not stop.is_set():
                    await work(item)

        await asyncio.gather(*(one(item) for item in items))


EXECUTORS: dict[str, Callable[[], Executor]] = {"local": LocalExecutor}


def get_executor(name: str) -> Executor:
    if name not in EXECUTORS:
        raise unknown_name("executor", name, EXECUTORS)
    return EXECUTORS[name]()
