"""Where episodes run. `local` runs them as asyncio tasks in this process; the seam lets a later
executor (Ray) run the same episode function elsewhere."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, TypeVar

from stratagem.errors import unknown_name

T = TypeVar("T")


class Executor(Protocol):
    async def run(
        self,
        items: Iterable[T],
        work: Callable[[T], Awaitable[None]],
        concurrency: int,
        stop: asyncio.Event,
    ) -> None:
        """Run `work` on every item, at most `concurrency` at once; start no new item once `stop`
        is set. Items are drawn as they are needed, so a grid of any size takes no memory
        beyond the episodes in flight."""


class LocalExecutor:
    async def run(
        self,
        items: Iterable[T],
        work: Callable[[T], Awaitable[None]],
        concurrency: int,
        stop: asyncio.Event,
    ) -> None:
        pending = iter(items)

        async def worker() -> None:
            # One shared iterator: each `next` runs between awaits, so no item is taken twice.
            for item in pending:
                if stop.is_set():
                    return
                await work(item)

        await asyncio.gather(*(worker() for _ in range(concurrency)))


EXECUTORS: dict[str, Callable[[], Executor]] = {"local": LocalExecutor}


def get_executor(name: str) -> Executor:
    if name not in EXECUTORS:
        raise unknown_name("executor", name, EXECUTORS)
    return EXECUTORS[name]()
