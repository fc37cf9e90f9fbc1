"""Where episodes run. `local` plays them as asyncio tasks in this process; `ray` plays them in
worker actors on a Ray cluster (`experiments.distributed`). Either way the run's process keeps
the store, the cache, the budget and the quotas (`RunSession`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Protocol, TypeVar

from stratagem.errors import StratagemError, unknown_name
from stratagem.experiments.clients import build_clients
from stratagem.experiments.endpoint_progress import pools_of
from stratagem.experiments.episode import play_seats
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.run_session import RunSession
from stratagem.experiments.seating import Seating

T = TypeVar("T")


class Executor(Protocol):
    def check(self) -> None:
        """Refuse now, with the one-line error `play` would raise, what would keep it from
        starting (Ray not installed): `Runner.check` asks, for `--dry-run` and the run alike."""

    async def play(self, todo: Iterator[EpisodeSpec], session: RunSession) -> None:
        """Play every episode of `todo` (drawn as needed: a grid of any size takes no memory
        beyond the episodes in flight), at most the file's `concurrency` at once, each opened,
        ended and recorded through `session`; start none once `session.stop` is set."""


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

    def check(self) -> None:
        """Nothing to check: this process plays."""

    async def play(self, todo: Iterator[EpisodeSpec], session: RunSession) -> None:
        clients = build_clients(
            session.models,
            session.retry,
            cache=session.cache,
            limiter=session.limiter,
            budget=session.budget,
            recorder=session.record,
        )
        session.watch(pools_of(clients))
        seating = Seating(clients, session.human)

        async def one(spec: EpisodeSpec) -> None:
            try:
                session.open(spec)
                payoffs, unread = await play_seats(session.store, spec, seating)
            except StratagemError as exc:  # the episode's end (`session.failed` sorts it)
                session.failed(spec, exc)
            else:
                session.finished(spec, payoffs, unread)

        try:
            await self.run(todo, one, session.config.concurrency, session.stop)
        finally:
            for client in clients.values():
                await client.aclose()

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


def _local(address: str | None = None, workers: int | None = None) -> Executor:
    if address is not None or workers is not None:
        raise StratagemError("--address and --workers are options of --executor ray")
    return LocalExecutor()


def _ray(address: str | None = None, workers: int | None = None) -> Executor:
    from stratagem.experiments.distributed.coordinator import RayExecutor

    return RayExecutor(address=address, workers=workers)


EXECUTORS: dict[str, Callable[..., Executor]] = {"local": _local, "ray": _ray}
"""Executors by name, each made from the options `stratagem run` passes (`address`, `workers`)."""


def get_executor(name: str, **options: object) -> Executor:
    if name not in EXECUTORS:
        raise unknown_name("executor", name, EXECUTORS)
    return EXECUTORS[name](**options)
