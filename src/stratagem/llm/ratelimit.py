"""Requests and tokens per minute, hour and day: wait before a call rather than be refused.

This is the thesis' Sleeper (seed-001 spec §3.3: usage loaded from a `quotas.env` file,
`update_usage` after each call, `check_and_sleep` suspending until the limit clears), made safe for
concurrency: usage is a log of (time, requests, tokens) rows in a small SQLite file, and every
`acquire` checks the sliding windows and reserves its slot in one short transaction. All tasks of
a process share a limiter; all processes given the same state file share the quotas. Without a
state file the log lives in memory and quotas are per process.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields
from os import PathLike
from pathlib import Path
from types import TracebackType

from stratagem.errors import StratagemError
from stratagem.llm.types import Request

Clock = Callable[[], float]
"""Seconds since the epoch. Wall-clock time, because processes must agree on it."""
Sleep = Callable[[float], Awaitable[None]]
WaitHook = Callable[[str, float, str], None]
"""(model, seconds, which limit) -> None: told before each wait, e.g. to show progress."""

MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    model TEXT NOT NULL,
    ts REAL NOT NULL,
    requests INTEGER NOT NULL,
    tokens INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_by_model ON usage(model, ts);
"""


@dataclass(frozen=True)
class Limits:
    """A model's quotas; None means unlimited. Windows slide: "per day" is any 24 hours."""

    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    requests_per_day: int | None = None
    tokens_per_day: int | None = None
    requests_per_hour: int | None = None
    tokens_per_hour: int | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and (isinstance(value, bool) or value <= 0):
                raise ValueError(f"{f.name} must be a positive integer or unset, got {value!r}")

    def windows(self) -> list[tuple[float, str, str, int]]:
        """(seconds, 'requests' | 'tokens', field name, limit) for every limit that is set."""
        out = []
        for span, unit in ((MINUTE, "minute"), (HOUR, "hour"), (DAY, "day")):
            for kind in ("requests", "tokens"):
                name = f"{kind}_per_{unit}"
                limit = getattr(self, name)
                if limit is not None:
                    out.append((span, kind, name, int(limit)))
        return out

    @property
    def unlimited(self) -> bool:
        return not self.windows()


def estimate_tokens(request: Request, default_output: int = 256) -> int:
    """A rough token count before the call (4 characters a token, plus the output allowance).

    Only used to decide whether a call fits the tokens-per-window limits; `record` replaces it
    with the real count afterwards.
    """
    chars = sum(len(m.content) for m in request.messages)
    chars += sum(len(t.description) + len(str(t.parameters)) for t in request.tools)
    output = request.max_tokens if request.max_tokens is not None else default_output
    return chars // 4 + 1 + output


class RateLimiter:
    """Sliding-window quotas per model, shared by all tasks and (state file) all processes."""

    def __init__(
        self,
        state_path: str | PathLike[str] | None = None,
        *,
        clock: Clock = time.time,
        sleep: Sleep = asyncio.sleep,
        on_wait: WaitHook | None = None,
        busy_timeout_s: float = 30.0,
    ) -> None:
        self.path = None if state_path is None else str(state_path)
        self._clock = clock
        self._sleep = sleep
        self._on_wait = on_wait
        self._locks: dict[str, asyncio.Lock] = {}
        target = ":memory:" if self.path is None else self.path
        try:
            if self.path is not None:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(target, timeout=busy_timeout_s, isolation_level=None)
            if self.path is not None:
                self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StratagemError(f"{target}: cannot open the rate-limit state ({exc})") from None

    async def acquire(self, model: str, limits: Limits, estimated_tokens: int = 0) -> int:
        """Wait until one request of about `estimated_tokens` fits every window, then reserve it.

        Returns the reservation's id, for `record` to replace the estimate with the real count.
        Waiters for one model are served in arrival order; a request larger than a token limit
        is let through once its window is empty, rather than waiting forever.
        """
        lock = self._locks.setdefault(model, asyncio.Lock())
        async with lock:
            while True:
                reservation, wait, reason = self._try_reserve(model, limits, estimated_tokens)
                if reservation is not None:
                    return reservation
                if self._on_wait is not None:
                    self._on_wait(model, wait, reason)
                await self._sleep(wait)

    def try_acquire(
        self, model: str, limits: Limits, estimated_tokens: int = 0
    ) -> tuple[int | None, float]:
        """`acquire` without waiting: (the reservation, 0) if the request fits every window now,
        else (None, seconds until it would), for a caller with other places to send it."""
        reservation, wait, _ = self._try_reserve(model, limits, estimated_tokens)
        return reservation, wait

    def record(self, model: str, tokens: int, reservation: int | None = None) -> None:
        """Count the tokens a call really used (the Sleeper's `update_usage`)."""
        if reservation is not None:
            self._conn.execute(
                "UPDATE usage SET tokens = ? WHERE id = ? AND model = ?",
                (max(tokens, 0), reservation, model),
            )
        else:
            self._conn.execute(
                "INSERT INTO usage (model, ts, requests, tokens) VALUES (?, ?, 0, ?)",
                (model, self._clock(), max(tokens, 0)),
            )

    def usage(self, model: str, window_s: float) -> tuple[int, int]:
        """Requests and tokens of `model` in the last `window_s` seconds."""
        now = self._clock()
        row = self._conn.execute(
            "SELECT COALESCE(SUM(requests), 0), COALESCE(SUM(tokens), 0) FROM usage "
            "WHERE model = ? AND ts > ?",
            (model, now - window_s),
        ).fetchone()
        return int(row[0]), int(row[1])

    def _try_reserve(
        self, model: str, limits: Limits, estimated_tokens: int
    ) -> tuple[int | None, float, str]:
        """One transaction: check every window; reserve if all fit, else say how long to wait."""
        windows = limits.windows()
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            now = self._clock()
            conn.execute("DELETE FROM usage WHERE ts <= ?", (now - DAY,))
            rows: list[tuple[float, int, int]] = []
            if windows:
                longest = max(w[0] for w in windows)
                rows = conn.execute(
                    "SELECT ts, requests, tokens FROM usage WHERE model = ? AND ts > ? "
                    "ORDER BY ts, id",
                    (model, now - longest - 1.0),
                ).fetchall()
            wait, reason = 0.0, ""
            for span, kind, name, limit in windows:
                amounts = [
                    (ts, req if kind == "requests" else tok)
                    for ts, req, tok in rows
                    if now - ts < span
                ]
                need = 1 if kind == "requests" else min(max(estimated_tokens, 0), limit)
                used = sum(a for _, a in amounts)
                if used + need <= limit:
                    continue
                for ts, amount in amounts:  # oldest first: when has enough expired?
                    used -= amount
                    if used + need <= limit:
                        span_wait = ts + span - now
                        break
                else:  # pragma: no cover - the loop always frees enough (need <= limit)
                    span_wait = span
                if span_wait > wait:
                    wait, reason = span_wait, name
            if wait > 0:
                conn.execute("COMMIT")
                return None, max(wait, 1e-3), reason
            cur = conn.execute(
                "INSERT INTO usage (model, ts, requests, tokens) VALUES (?, ?, 1, ?)",
                (model, now, max(estimated_tokens, 0)),
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        assert cur.lastrowid is not None
        return cur.lastrowid, 0.0, ""

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RateLimiter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
