"""The persistent response cache: a re-run replays every answer exactly and costs nothing.

One SQLite table maps a key (a hash of the model, the request and the sample index) to the response.
The file may be shared by several processes (WAL journal, busy timeout); within a process every
operation is a short synchronous statement, so concurrent asyncio tasks never interleave inside one.
The first response stored under a key wins and is never replaced, so replays are stable.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import threading
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Any

from stratagem.errors import StratagemError
from stratagem.llm.group_commit import GroupCommit
from stratagem.llm.types import Request, Response, ToolCall, Usage

CACHE_FORMAT = "stratagem-cache-v1"
"""Part of every key: changing how requests are hashed must not replay answers to other requests."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _canonical(value: Any) -> str:
    return _CANONICAL.encode(value)


@functools.lru_cache(maxsize=64)
def _key_head(model: str) -> str:
    """What every key of `model` starts with, encoded once per model."""
    return f'{{"format":{_canonical(CACHE_FORMAT)},"model":{_canonical(model)},"request":'


def _response_from_json(data: dict[str, Any]) -> Response:
    return Response(
        text=data["text"],
        tool_calls=tuple(ToolCall(**c) for c in data.get("tool_calls", ())),
        reasoning=data.get("reasoning"),
        usage=Usage(**data.get("usage", {})),
        latency_s=float(data.get("latency_s", 0.0)),
        cost_usd=float(data.get("cost_usd", 0.0)),
        cached=bool(data.get("cached", False)),
        model=str(data.get("model", "")),
    )


class ResponseCache:
    """Responses by key, in a SQLite file (or ":memory:" for tests)."""

    def __init__(self, path: str | PathLike[str] = ":memory:", *, busy_timeout_s: float = 30.0):
        self.path = str(path)
        memory = self.path == ":memory:"
        try:
            if not memory:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise StratagemError(f"{self.path}: cannot open the response cache ({exc})") from None
        self._conn = conn
        self._lock = threading.Lock()
        self.group = GroupCommit(
            conn, self._lock, self.path, "the answers since the previous commit were not cached"
        )
        """Group commit (a run's, once per event-loop turn): while deferred, puts join one
        transaction."""
        try:
            if not memory:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StratagemError(
                f"{self.path}: cannot be used as a response cache ({exc})"
            ) from None

    @staticmethod
    def key(model: str, request: Request, sample: int) -> str:
        """The key of one sample: `n` is left out, so asking for more samples reuses the first.

        Every other request field (messages, tools, choices, schema, temperature, max_tokens, seed)
        changes the answer, so it is part of the key.
        """
        return ResponseCache.key_and_request(model, request, sample)[0]

    @staticmethod
    def key_and_request(model: str, request: Request, sample: int) -> tuple[str, str]:
        """The key, and the request as the key reads it (canonical JSON, without `n`): what `put`
        stores, so a call encodes its request once for both."""
        body = request.to_json()
        body.pop("n", None)
        if body.get("temperature") is not None:
            body["temperature"] = float(body["temperature"])  # 1 and 1.0 ask the same thing
        request_json = _canonical(body)
        # _canonical({"format": ..., "model": ..., "request": body, "sample": ...}), keys sorted,
        # with the request encoded once.
        payload = f'{_key_head(model)}{request_json},"sample":{int(sample)}}}'
        return hashlib.sha256(payload.encode("utf-8")).hexdigest(), request_json

    async def lookup(self, key: str) -> Response | None:
        """`get` as the pipeline asks it: an answer cache kept elsewhere (a Ray coordinator's)
        answers over the network, so the pipeline awaits every lookup."""
        return self.get(key)

    def get(self, key: str) -> Response | None:
        """The stored response, marked `cached=True`; None on a miss."""
        with self._lock:
            row = self._conn.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        data["cached"] = True
        return _response_from_json(data)

    def put(
        self,
        key: str,
        model: str,
        request: Request,
        response: Response,
        *,
        request_json: str | None = None,
    ) -> None:
        """Store a response; an entry already under this key is kept (first writer wins).
        `request_json`: the request as `key_and_request` encoded it, if at hand."""
        if request_json is None:
            request_json = ResponseCache.key_and_request(model, request, 0)[1]
        stored = response.to_json()
        stored["cached"] = False
        row = (
            key,
            model,
            request_json,
            _canonical(stored),
            datetime.now(UTC).isoformat(timespec="seconds"),
        )
        with self._lock:
            try:
                if self.group.deferred:
                    self.group.join()
                self._conn.execute(
                    "INSERT OR IGNORE INTO responses (key, model, request, response, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    row,
                )
            except sqlite3.Error as exc:
                raise StratagemError(f"{self.path}: cannot cache an answer ({exc})") from None

    def __contains__(self, key: object) -> bool:
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone()
        return row is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
