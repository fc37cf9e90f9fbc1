"""`--executor ray`: the episodes play in worker actors on a Ray cluster; this process, the
coordinator, assigns them, applies everything they record (`Inbox`), and is the only writer of
the results directory.

- One long-lived async actor per alive node (or `workers` of them), each playing up to its share
  of the file's `concurrency` episodes at once on its own event loop. No Ray task per model call,
  no blocking `ray.get`: the coordinator awaits each worker's message stream.
- A worker whose process or node dies: its unfinished episodes go back to the queue and are
  opened again (their rows cleared, their calls kept, detached) and played by another worker,
  their answered calls replaying from the cache; a new worker takes the dead one's place, up to
  `MAX_REPLACEMENTS` times the number started.
- No node alive (every node marked dead: a worker started in a dead one's place would wait
  forever for one): the run stops in one line, and running the command again continues.
- The coordinator killed: its workers die with it (Ray ends the actors of a gone driver), and
  running the command again continues as a local run does.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import re
import socket
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments import provenance
from stratagem.experiments.distributed.inbox import Inbox
from stratagem.experiments.distributed.messages import Reply
from stratagem.experiments.distributed.shared_caps import Held, SharedCaps
from stratagem.experiments.distributed.worker import EpisodeWorker, WorkerSetup
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.run_session import RunSession
from stratagem.llm.pool_stats import MergedPool

MAX_REPLACEMENTS = 2
"""Workers started in place of dead ones, per worker started: past that the run stops."""
NODE_CHECK_S = 1.0
"""Seconds between two looks at the cluster's nodes; the run stops at the first with none
alive."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise StratagemError(
            "--executor ray needs Ray: pip install 'stratagem[ray]' (on every node)"
        ) from None
    return ray


_RAISED = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?([A-Za-z_]\w*(?:Error|Exception)): (.+)$")


def death_reason(exc: BaseException) -> str:
    """One line on why a worker died: the error its code raised (the last one in Ray's
    traceback text), or Ray's own first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    raised = [m for m in map(_RAISED.match, lines) if m]
    if raised:
        return raised[-1][2]
    return lines[0] if lines else type(exc).__name__


CONNECT_TIMEOUT_S = 5.0


def _check_reachable(address: str | None) -> None:
    """A HOST:PORT that nothing answers on, refused in one line now: Ray itself would retry
    its connection for minutes."""
    if address is None or address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise StratagemError(f"--address {address!r}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise StratagemError(f"cannot connect to Ray at {address}: {exc.strerror or exc}") from None


@dataclass(eq=False)
class Worker:
    """A worker actor, and the episodes it plays now (sent back to the queue if it dies)."""

    handle: Any
    playing: dict[str, EpisodeSpec] = field(default_factory=dict)


class RayExecutor:
    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        """`address`: the cluster's ("auto", "HOST:PORT", "ray://HOST:10001"); None starts
        a cluster on this machine. `workers`: how many actors (default: one per alive node)."""
        if workers is not None and workers < 1:
            raise StratagemError(f"--workers must be at least 1, got {workers}")
        self.address = address
        self.workers = workers
        self.live: list[Worker] = []
        """The live workers: each actor's handle and the episodes it plays (for tests that
        kill one)."""

    def check(self) -> None:
        """Ray installed, and a HOST:PORT address answering: what `play` checks first, asked
        by `--dry-run` too."""
        _ray()
        _check_reachable(self.address)

    async def play(self, todo: Iterator[EpisodeSpec], session: RunSession) -> None:
        self.check()
        ray = _ray()
        connected_here = not ray.is_initialized()
        if connected_here:
            self._connect(ray)
        try:
            await _Dispatch(ray, self, todo, session).run()
        finally:
            if connected_here:
                ray.shutdown()

    def _connect(self, ray: Any) -> None:
        options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
        if self.address is None:
            options["include_dashboard"] = False
        try:
            ray.init(address=self.address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.address or "a new local cluster"
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StratagemError(f"cannot connect to Ray at {where}: {first}") from None


class _Dispatch:
    """One run's assignment of episodes to workers."""

    def __init__(
        self, ray: Any, owner: RayExecutor, todo: Iterator[EpisodeSpec], session: RunSession
    ) -> None:
        self.ray = ray
        self.owner = owner
        self.todo = todo
        self.session = session
        self.again: deque[EpisodeSpec] = deque()
        """Episodes to open before new ones: those of dead workers (played again)."""
        self.exhausted = False
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        self.nodes = [n["NodeID"] for n in nodes]
        self.count = owner.workers or max(1, len(self.nodes))
        self.slots = max(1, math.ceil(session.config.concurrency / self.count))
        self.caps = SharedCaps(session.models)
        self.setup = WorkerSetup(
            models=dict(session.models),
            retry=session.retry,
            budgeted=session.config.budget.max_usd is not None
            or session.config.budget.max_tokens is not None,
            cwd=os.getcwd(),
            shared_slots=frozenset(self.caps.slots),
            shared_servers=frozenset(self.caps.servers),
            plugins=tuple(provenance.in_use()),
        )
        self.pools = {
            name: MergedPool(config.model)
            for name, config in session.models.items()
            if config.endpoints
        }
        session.watch(self.pools)
        self.actor_class = ray.remote(num_cpus=0, max_restarts=0)(EpisodeWorker)
        self.replacements = MAX_REPLACEMENTS * self.count
        self.live: list[Worker] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.last_death = ""

    async def run(self) -> None:
        first = self._next()
        if first is None:  # nothing to play: no worker is started (nor its models loaded)
            return
        self.again.append(first)
        for i in range(self.count):
            self._start(self.nodes[i % len(self.nodes)] if self.nodes else None)
        nodes = asyncio.ensure_future(self._watch_nodes())
        try:
            while self.tasks:
                done, _ = await asyncio.wait(
                    {*self.tasks, nodes}, return_when=asyncio.FIRST_COMPLETED
                )
                for task in done:
                    self.tasks.discard(task)
                    task.result()  # a bug in a worker or here, or no node left, stops the run
        finally:
            nodes.cancel()
            for task in self.tasks:
                task.cancel()
            for worker in self.live:
                self.ray.kill(worker.handle, no_restart=True)
            self.owner.live = []

    async def _watch_nodes(self) -> None:
        """Stop the run when no node is alive: its workers are dead, and a worker started in
        their place would wait for a node forever, saying nothing (issue 33)."""
        while True:
            await asyncio.sleep(NODE_CHECK_S)
            if not any(n.get("Alive") for n in self.ray.nodes()):
                last = self.last_death.rstrip(".")
                died = f"; the last worker's end: {last}" if last else ""
                raise StratagemError(
                    f"no Ray node is alive: the cluster's nodes were marked dead{died}; "
                    "start the cluster again (or use --executor local) and run the command "
                    "again to continue"
                )

    def _start(self, node: str | None) -> None:
        options: dict[str, Any] = {}
        if node is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node, soft=True)
        worker = Worker(self.actor_class.options(**options).remote(self.setup))
        self.live.append(worker)
        self.owner.live = list(self.live)
        self.tasks.add(asyncio.ensure_future(self._drive(worker)))

    async def _drive(self, worker: Worker) -> None:
        def reply(replies: list[Reply]) -> None:
            if worker in self.live:
                worker.handle.answer.remote(replies)

        inbox = Inbox(self.session, worker.playing, reply, self.pools, Held(self.caps))
        try:
            await worker.handle.ready.remote()  # a worker that could not start gets nothing
            self._fill(worker)
            self._close_if_done()
            async for ref in worker.handle.messages.remote():
                inbox.apply(await ref)
                self._fill(worker)
                self._close_if_done()
        except self.ray.exceptions.RayActorError as exc:
            self._died(worker, exc)
        finally:
            for wait in list(inbox.waits):
                wait.cancel()
            inbox.held.release()  # its calls ended with it, or the run did

    def _next(self) -> EpisodeSpec | None:
        if self.again:
            return self.again.popleft()
        if self.session.stop.is_set() or self.exhausted:
            return None
        spec = next(self.todo, None)
        self.exhausted = spec is None
        return spec

    def _fill(self, worker: Worker) -> None:
        """Give the worker episodes up to its share, each opened in the store first."""
        batch = []
        while len(worker.playing) < self.slots and (spec := self._next()) is not None:
            try:
                self.session.open(spec)
            except StratagemError as exc:
                self.session.failed(spec, exc)
                continue
            worker.playing[spec.id] = spec
            batch.append(spec)
        if batch:
            worker.handle.play.remote(batch)

    def _close_if_done(self) -> None:
        if self.again or any(w.playing for w in self.live):
            return
        if self.exhausted or self.session.stop.is_set():
            for worker in self.live:
                worker.handle.close.remote()

    def _died(self, worker: Worker, exc: Any) -> None:
        if getattr(exc, "actor_init_failed", False):  # it would fail again: say why, once
            raise StratagemError(f"a Ray worker could not start: {death_reason(exc)}")
        self.live.remove(worker)
        self.owner.live = list(self.live)
        self.again.extend(worker.playing.values())
        self.last_death = death_reason(exc)
        self.session.replayed(self.last_death, len(worker.playing))
        worker.playing.clear()
        if self.replacements > 0 and (self.again or not self.exhausted):
            self.replacements -= 1  # on a node of the run's start; Ray places it elsewhere if gone
            self._start(self.nodes[len(self.live) % len(self.nodes)] if self.nodes else None)
        elif not self.live and (self.again or not self.exhausted):
            raise StratagemError(
                f"every Ray worker died ({MAX_REPLACEMENTS * self.count} replaced); the last: "
                f"{self.last_death}; run the command again to continue"
            )
        for other in self.live:
            self._fill(other)
        self._close_if_done()
