"""WAL checkpoints for a run, in a thread of their own: the event loop never waits on one.

SQLite copies a WAL file's pages back into the database (a checkpoint), and syncs both to disk,
inside the commit that takes the WAL past 1,000 pages. At hundreds of episodes in flight a run's
commits did that several times a second, each holding the event loop about 10 ms. During a run a
thread checkpoints the store and the response cache every `INTERVAL_S` instead, on a connection of
its own, in SQLite's PASSIVE mode: it copies only what is committed and never makes a writer or a
reader wait. sqlite3 lets go of the GIL while SQLite works, so the copying and the syncs run beside
the event loop. The run's own connections still checkpoint past 10,000 pages, should the thread
fall behind. Durability is SQLite's either way: a kill at any point leaves every commit readable.

`benchmarks/throughput.py` prints a run with this thread and one without, alternated (its
"checkpoints" rows). Why every 0.25 s and not every second, from a scratch measurement the
benchmark does not repeat: once a second let the WAL grow to about 20 MB between checkpoints, and
writing new blocks of the file cost more CPU per call than the checkpoints saved.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path
from types import TracebackType

from stratagem.llm.group_commit import GroupCommit

INTERVAL_S: float | None = 0.25
"""Seconds between the thread's checkpoints; None: no thread, SQLite's own checkpoints."""
BACKSTOP_PAGES = 10_000
"""WAL pages past which a run's connection checkpoints itself (the thread fell behind)."""
SQLITE_DEFAULT_PAGES = 1_000


class BackgroundCheckpoints:
    """Checkpoints the WAL of each file (its `GroupCommit`) every `INTERVAL_S` while the block
    runs. In-memory databases have no WAL and are left alone."""

    def __init__(self, *files: GroupCommit) -> None:
        self.files = [f for f in files if f.path != ":memory:"]
        self.passes = 0
        """Rounds of checkpoints done so far (each file once)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> BackgroundCheckpoints:
        interval = INTERVAL_S
        if interval is None or not self.files:
            return self
        for f in self.files:
            f.checkpoint_after(BACKSTOP_PAGES)
        self._thread = threading.Thread(
            target=self._work, args=(interval,), name="stratagem-checkpoints", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        for f in self.files:
            with contextlib.suppress(sqlite3.Error):  # a damaged file is the run's to report
                f.checkpoint_after(SQLITE_DEFAULT_PAGES)

    def _work(self, interval: float) -> None:
        conns: dict[str, sqlite3.Connection] = {}
        try:
            while not self._stop.wait(interval):
                for f in self.files:
                    _checkpoint(f.path, conns)
                self.passes += 1
        finally:
            for conn in conns.values():
                conn.close()


def _checkpoint(path: str, conns: dict[str, sqlite3.Connection]) -> None:
    """One PASSIVE checkpoint of `path` on this thread's connection to it. A failure (the file
    busy, gone or damaged) skips this one; the run's own connection reports real damage."""
    try:
        conn = conns.get(path)
        if conn is None:
            uri = f"{Path(path).absolute().as_uri()}?mode=rw"  # never creates the file
            conn = conns[path] = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.Error:
        stale = conns.pop(path, None)
        if stale is not None:
            stale.close()
