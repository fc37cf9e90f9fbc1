"""Per-server lines under a run's progress bar, and `endpoints.json` for `stratagem status`.

Issue 26, *Visible*: while a run plays, each server of each model's endpoint pool shows one line
(`pool_stats.EndpointFigures.line`), refreshed every second from the pools' snapshots; the same
figures are written every few seconds, and once more at the end, to `endpoints.json` in the
results directory, so `stratagem status` can show the live state of a running run.

    progress = ProgressWithEndpoints(...)       # a rich Progress that shows the lines
    with progress, EndpointProgress(progress, pools_of(clients), output, experiment) as endpoints:
        ...                                      # or {} and, once the clients are built:
        endpoints.watch(pools_of(clients))
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from rich.console import RenderableType
from rich.progress import Progress
from rich.text import Text

from stratagem.llm.pipeline import ModelClient
from stratagem.llm.pool import EndpointPool
from stratagem.llm.pool_stats import EndpointFigures

log = logging.getLogger(__name__)

ENDPOINTS_FILE = "endpoints.json"
REFRESH_S = 1.0
"""Seconds between updates of the lines."""
WRITE_EVERY_S = 5.0
"""Seconds between writes of `endpoints.json`."""


class ProgressWithEndpoints(Progress):
    """A rich Progress that shows `endpoint_lines` under its tasks, each cut to one line."""

    endpoint_lines: tuple[str, ...] = ()

    def get_renderables(self) -> Iterable[RenderableType]:
        yield from super().get_renderables()
        for line in self.endpoint_lines:  # never read as markup: a URL may hold [brackets]
            yield Text(line, no_wrap=True, overflow="ellipsis")


class FiguresSource(Protocol):
    """What the lines and the file read of a pool: an `EndpointPool`, or a `MergedPool` of the
    pools of Ray workers."""

    model: str

    def snapshot(self) -> list[EndpointFigures]: ...


def pools_of(clients: Mapping[str, ModelClient]) -> dict[str, FiguresSource]:
    """The model entries (by name) whose calls go through an endpoint pool, and their pools."""
    return {
        name: client.provider
        for name, client in clients.items()
        if isinstance(client.provider, EndpointPool)
    }


class EndpointProgress:
    """While it is entered (in a running event loop), keeps `progress`'s endpoint lines and
    `directory/endpoints.json` up to date with the pools it watches (`pools`, and those given
    to `watch` later); shows and writes nothing while it has none."""

    def __init__(
        self,
        progress: Progress,
        pools: Mapping[str, FiguresSource],
        directory: Path,
        experiment: str | None = None,
        *,
        refresh_s: float = REFRESH_S,
        write_every_s: float = WRITE_EVERY_S,
    ) -> None:
        self.progress = progress
        self.pools = dict(pools)
        self.path = directory / ENDPOINTS_FILE
        self.experiment = experiment
        self.refresh_s = refresh_s
        self.write_every_s = write_every_s
        self._task: asyncio.Task[None] | None = None
        self._warned = False

    def watch(self, pools: Mapping[str, FiguresSource]) -> None:
        """Show these pools too (of clients built after this was entered: `pools_of`)."""
        self.pools.update(pools)
        if self._task is not None and self.pools:
            self.update()
            self.write()

    def __enter__(self) -> EndpointProgress:
        if self.pools:
            self.update()
            self.write()
        self._task = asyncio.get_running_loop().create_task(self._loop())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self.pools:
            self.update()
            self.write()  # the state at the end, for `status` after the run

    def snapshot(self) -> dict[str, list[EndpointFigures]]:
        return {name: pool.snapshot() for name, pool in self.pools.items()}

    def update(self) -> None:
        """The lines under the bar: one per server, its model entry named when there are several."""
        if not isinstance(self.progress, ProgressWithEndpoints):
            return
        named = len(self.pools) > 1
        self.progress.endpoint_lines = tuple(
            f"  {f'{name}  ' if named else ''}{figures.line(short=True)}"
            for name, servers in self.snapshot().items()
            for figures in servers
        )

    def write(self) -> None:
        """`endpoints.json`, replaced whole (a reader never sees half of it); a failure to write
        it is logged once and does not stop the run."""
        data = {
            "written_at": time.time(),
            "experiment": self.experiment,
            "models": [
                {"name": name, "model": pool.model, "endpoints": [f.to_json() for f in figures]}
                for (name, pool), figures in zip(
                    self.pools.items(), self.snapshot().values(), strict=True
                )
            ],
        }
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            temporary.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError as exc:
            if not self._warned:
                log.warning("%s: cannot write it (%s)", self.path, exc.strerror or exc)
                self._warned = True
            with contextlib.suppress(OSError):
                temporary.unlink()

    async def _loop(self) -> None:
        written = time.monotonic()
        while True:
            await asyncio.sleep(self.refresh_s)
            if not self.pools:
                continue
            self.update()
            if time.monotonic() - written >= self.write_every_s:
                self.write()
                written = time.monotonic()


@dataclass(frozen=True)
class LiveFigures:
    """What `endpoints.json` said: when it was written, for which experiment, and each server's
    figures by (model string, URL)."""

    written_at: float
    experiment: str | None
    servers: Mapping[tuple[str, str], EndpointFigures]


def read_live_figures(directory: Path) -> LiveFigures | None:
    """`directory/endpoints.json`, or None when there is none or it is not one we wrote."""
    try:
        data: Any = json.loads((directory / ENDPOINTS_FILE).read_text(encoding="utf-8"))
        servers = {
            (str(model["model"]), figures.url): figures
            for model in data["models"]
            for figures in (EndpointFigures.from_json(e) for e in model["endpoints"])
        }
        experiment = data.get("experiment")
        return LiveFigures(
            float(data["written_at"]), None if experiment is None else str(experiment), servers
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
