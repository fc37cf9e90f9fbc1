"""The worker actor: plays the episodes the coordinator assigns, many at once on its own event
loop, and streams what they record back (`messages`).

Its models are built once, when the actor starts: an in-process model (the embedded one) loads
once per actor, and every episode it plays shares it. The clients' cache, budget, quotas,
servers' caps and recorder are the coordinator's, through the proxies, so a call made here is
looked up, admitted, counted and stored exactly as in one process.
"""

from __future__ import annotations

import asyncio
import os
import socket
import traceback
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass

from stratagem.errors import StratagemError
from stratagem.experiments import provenance
from stratagem.experiments.clients import build_clients
from stratagem.experiments.distributed.messages import (
    Crashed,
    Ended,
    Failure,
    Message,
    PoolFigures,
    Reply,
)
from stratagem.experiments.distributed.proxies import (
    Outbox,
    RecordingStore,
    RemoteBudget,
    RemoteCache,
    RemoteQuotas,
    RemoteServers,
    RemoteSlots,
    recorder,
)
from stratagem.experiments.endpoint_progress import REFRESH_S, pools_of
from stratagem.experiments.episode import play_seats
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.seating import Seating
from stratagem.llm.pool import EndpointPool
from stratagem.llm.registry import ModelConfig
from stratagem.llm.retry import RetryPolicy

REPORT_S = REFRESH_S
"""Seconds between a worker's reports of its endpoint pools' figures (the progress lines')."""


@dataclass(frozen=True)
class WorkerSetup:
    """What every worker is started with (no key: each node reads its own environment)."""

    models: Mapping[str, ModelConfig]
    retry: RetryPolicy
    budgeted: bool
    """Whether the run has a cap: without one, calls need not ask the coordinator to start."""
    cwd: str
    """The coordinator's directory: relative paths of the file mean the same on a worker whose
    node shares it."""
    shared_slots: frozenset[str] = frozenset()
    """Entries whose `max_concurrency` (a server's) the coordinator holds for every worker."""
    shared_servers: frozenset[str] = frozenset()
    """Entries whose pool's servers' caps and quotas the coordinator holds for every worker."""
    plugins: tuple[tuple[str, str, str, Mapping[str, str]], ...] = ()
    """The coordinator's plugins (`provenance.in_use`): each worker loads the same versions."""


class EpisodeWorker:
    def __init__(self, setup: WorkerSetup) -> None:
        if os.path.isdir(setup.cwd):
            os.chdir(setup.cwd)
        self._name = f"{socket.gethostname()}:{os.getpid()}"
        provenance.require(setup.plugins, f"the Ray worker {self._name}")
        self._outbox = Outbox()
        self._store = RecordingStore(self._outbox)
        self._clients = build_clients(
            setup.models,
            setup.retry,
            cache=RemoteCache(self._outbox),
            limiter=RemoteQuotas(self._outbox),
            budget=RemoteBudget(self._outbox) if setup.budgeted else None,
            recorder=recorder(self._outbox),
        )
        for name in setup.shared_slots:
            self._clients[name].slots = RemoteSlots(self._outbox, name)
        for name in setup.shared_servers:
            pool = self._clients[name].provider
            if isinstance(pool, EndpointPool):
                pool.share(RemoteServers(self._outbox, name))
        self._seating = Seating(self._clients)
        self._pools = pools_of(self._clients)
        self._playing: set[asyncio.Task[None]] = set()
        self._reporting: asyncio.Future[None] | None = None

    async def messages(self) -> AsyncIterator[list[Message]]:
        """The stream to the coordinator: it ends once `close` was called and every assigned
        episode has ended."""
        if self._pools:
            self._reporting = asyncio.ensure_future(self._report())
        async for batch in self._outbox.batches(lambda: not self._playing):
            yield batch
        for client in self._clients.values():
            await client.aclose()

    async def _report(self) -> None:
        while True:
            await asyncio.sleep(REPORT_S)
            self._outbox.send(self._figures())

    def _figures(self) -> PoolFigures:
        pools = {name: pool.snapshot() for name, pool in self._pools.items()}
        return PoolFigures(self._name, pools)

    async def play(self, specs: Sequence[EpisodeSpec]) -> None:
        """Start these episodes (already opened in the coordinator's store)."""
        for spec in specs:
            task = asyncio.ensure_future(self._play(spec))
            self._playing.add(task)
            task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._playing.discard(task)
        self._outbox.wake()

    async def _play(self, spec: EpisodeSpec) -> None:
        try:
            payoffs, unread = await play_seats(self._store, spec, self._seating)
        except StratagemError as exc:
            self._outbox.send(Ended(spec.id, None, failure=Failure.of(exc)))
        except Exception:
            self._outbox.send(Crashed(spec.id, traceback.format_exc()))
        else:
            self._outbox.send(Ended(spec.id, payoffs, unread))
        finally:
            self._store.forget(spec.id)

    async def answer(self, replies: Sequence[Reply]) -> None:
        self._outbox.answer(replies)

    async def close(self) -> None:
        """No more episodes will come: end the stream once those playing have ended (the
        coordinator says so when none is playing: the pools' figures now are the last)."""
        if self._reporting is not None:
            self._reporting.cancel()
            self._outbox.send(self._figures())
        self._outbox.close()

    async def ready(self) -> None:
        """Answered once the worker started: a worker that could not (a plugin it lacks) is
        found before any episode is sent to it."""

    async def pid(self) -> int:
        """This worker's process id (the fault tests kill it)."""
        return os.getpid()
