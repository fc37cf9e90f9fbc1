"""A run's progress as plain lines, for output that is not a terminal (a log file, a pipe, a
cluster job's output): rich's bar redraws in place, so written to a file it showed nothing until
the run ended. One line when the run starts, then at most one every `EVERY_S` seconds (or
`STRATAGEM_PROGRESS_EVERY`) as episodes end or calls return, and one at the end."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable

from rich.console import Console

from stratagem.errors import StratagemError

EVERY_S = 30.0
"""Seconds between two lines: a day-long run writes about 3,000, a short one a few."""
EVERY_ENV = "STRATAGEM_PROGRESS_EVERY"
"""Overrides `EVERY_S` (seconds, 0: a line at every episode and call)."""


def every_s() -> float:
    """The seconds between two lines: `EVERY_ENV` when set, else `EVERY_S`."""
    raw = os.environ.get(EVERY_ENV, "").strip()
    if not raw:
        return EVERY_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise StratagemError(
            f"{EVERY_ENV}={raw!r}: give the seconds between two progress lines, a number >= 0"
        )
    return value


class ProgressLog:
    def __init__(
        self,
        console: Console,
        name: str,
        total: int,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.name = name
        self.total = total
        self.every_s = every_s() if every is None else every
        self.clock = clock
        self.started = clock()
        self.last = self.started
        self._line(0, "")

    def tick(self, done: int, usage: str) -> None:
        """`done` episodes of `total` ended (finished or failed); a line if one is due."""
        if self.clock() - self.last >= self.every_s:
            self._line(done, usage)

    def close(self, done: int, usage: str) -> None:
        self._line(done, usage)

    def _line(self, done: int, usage: str) -> None:
        now = self.clock()
        self.last = now
        elapsed = now - self.started
        left = ""
        if 0 < done < self.total:
            left = f", about {_duration(elapsed / done * (self.total - done))} left"
        text = f"{self.name}: {done}/{self.total} episodes" + (f", {usage}" if usage else "")
        text += f", {_duration(elapsed)} elapsed{left}"
        # Markup off: the experiment's name is the user's text.
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
