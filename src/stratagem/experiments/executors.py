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


STARTS_PER_TURN = 16
"""Workers started per event-loop turn (see `LocalExecutor`)."""


class LocalExecutor:
    """Episodes as asyncio tasks: `concurrency` workers drawing from one iterator.

    Workers start `STARTS_PER_TURN` at a time, one loop turn apart. Started all at once, every
    episode set up before any first call left (an episode's decisions are tasks of their own,
    queued behind all the workers, and so are the connections they open), so the first calls left
    together and the process then waited a whole latency with nothing to do. Started in groups,
    the first group's calls leave while later groups set up. Measured with
    `benchmarks/throughput.py`'s runner at 256 episodes (5 alternated runs each): 0.61 -> 0.69
    of the limit; groups of 8 gave 0.66, and one per turn lost the gain to more, shorter turns
    (each with its select and its commit)."""

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

        workers: list[asyncio.Future[None]] = []
        try:
            for i in range(concurrency):
                if i and i % STARTS_PER_TURN == 0:
                    await asyncio.sleep(0)  # the next turn: the last group's calls go out
                if stop.is_set():
                    break
                workers.append(asyncio.ensure_future(worker()))
            await asyncio.gather(*workers)
        except BaseException:  # an error, or the run cancelled: no worker outlives it
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise


EXECUTORS: dict[str, Callable[[], Executor]] = {"local": LocalExecutor}


def get_executor(name: str) -> Executor:
    if name not in EXECUTORS:
        raise unknown_name("executor", name, EXECUTORS)
    return EXECUTORS[name]()
