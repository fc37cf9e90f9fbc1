"""Group commit for one SQLite connection: while deferred, writes join one open transaction,
which is committed (or dropped) when the owner of the deferral says so.

The response cache and the result store each hold one; a run commits both once per event-loop
turn (`experiments/commits.py`), where a commit for every write cost more CPU than the writes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from contextlib import suppress

from stratagem.errors import StratagemError


class GroupCommit:
    """The shared transaction of `conn`. Its owner calls `join` before each write while
    `deferred` (holding `lock`); `on_open` is called as a write opens the transaction."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        lock: threading.Lock | threading.RLock,
        path: str,
        lost: str,
        forget: Callable[[], None] | None = None,
    ) -> None:
        self._conn = conn
        self._lock = lock
        self._path = path
        self._lost = lost
        """What a failed commit loses, in the words of its line."""
        self._forget = forget
        """Called as a deferral starts or ends and at a rollback: what the owner remembers of
        the file may not hold any more."""
        self._on_open: Callable[[], None] | None = None
        self._open = False
        self.failure: StratagemError | None = None
        """The failed commit, once there is one."""

    @property
    def deferred(self) -> bool:
        return self._on_open is not None

    @property
    def path(self) -> str:
        """The file, or ":memory:"."""
        return self._path

    def checkpoint_after(self, pages: int) -> None:
        """Let this connection checkpoint the WAL itself once it holds `pages` pages (SQLite's
        `wal_autocheckpoint`; 1,000 unless set)."""
        with self._lock:
            self._conn.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")

    def defer(self, on_open: Callable[[], None] | None) -> None:
        """Defer commits (`on_open` set) or stop deferring (None: commits what is open)."""
        self._on_open = on_open
        if on_open is None:
            self.commit()
        if self._forget is not None:
            self._forget()

    def join(self) -> None:
        """Before a write: open the shared transaction unless it is open."""
        if not self._open:
            self._conn.execute("BEGIN IMMEDIATE")
            self._open = True
            if self._on_open is not None:
                self._on_open()

    def commit(self) -> None:
        """Commit the shared transaction, if one is open; a failure is raised, and kept."""
        with self._lock:
            if not self._open:
                return
            self._open = False
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._roll_back()
                self.failure = StratagemError(
                    f"{self._path}: a commit failed ({exc}); {self._lost}"
                )
                raise self.failure from None

    def rollback(self) -> None:
        """Drop the shared transaction's writes, if one is open."""
        with self._lock:
            if self._open:
                self._open = False
                self._roll_back()

    def _roll_back(self) -> None:
        with suppress(sqlite3.Error):
            self._conn.execute("ROLLBACK")
        if self._forget is not None:
            self._forget()
