"""What each server of an endpoint pool did: calls, errors, latency, output tokens and state.

Issue 26, *Visible*: progress lines and `stratagem status` show them per server. The pool counts
every attempt it sends (`EndpointCounters`); `EndpointPool.snapshot()` freezes them into
`EndpointFigures`, which the progress lines and `endpoints.json` print. Memory stays bounded: only
the last `LATENCY_SAMPLES` latencies are kept for the percentiles.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

LATENCY_SAMPLES = 1000
"""Latencies kept per server for p50 and p95 (the most recent ones)."""
STATES = ("healthy", "cooling", "out", "waiting")
"""A server's state as shown: answering; failed lately and cooling down; refused for good
(bad key, no such model); not answered its health check yet."""


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank `q` quantile (0 < q <= 1) of `values`; None for none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@dataclass
class EndpointCounters:
    """A server's running totals, updated by the pool after each attempt it sent there."""

    calls: int = 0
    """Attempts sent to it, answered or not."""
    errors: int = 0
    """Attempts that failed (connection, timeout, 429, 5xx, malformed, refused)."""
    output_tokens: int = 0
    busy_s: float = 0.0
    """Seconds its answered calls took, summed: output tokens / busy_s is its speed per call."""
    latencies: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_SAMPLES))

    def answered(self, latency_s: float, output_tokens: int) -> None:
        self.calls += 1
        self.output_tokens += output_tokens
        self.busy_s += latency_s
        self.latencies.append(latency_s)

    def failed(self) -> None:
        self.calls += 1
        self.errors += 1


@dataclass(frozen=True)
class EndpointFigures:
    """One server's figures at one moment (live from a pool, or computed from stored calls)."""

    url: str
    state: str
    """One of `STATES`, or "" where unknown (figures from stored calls)."""
    calls: int
    errors: int
    p50_s: float | None
    p95_s: float | None
    output_tokens: int
    busy_s: float
    in_flight: int = 0
    reason: str = ""
    """Why it is cooling or out (the last error), as the pool last saw it."""

    @property
    def tokens_per_s(self) -> float | None:
        return self.output_tokens / self.busy_s if self.busy_s > 0 else None

    def line(self, short: bool = False) -> str:
        """`http://h1:8000/v1  healthy  812 calls  3 errors  p50 0.21 s  p95 0.40 s  55 tok/s`;
        `short`: the URL without its scheme and a `/v1` path (`h1:8000`), to fit 80 columns."""
        url = self.url.partition("://")[2].removesuffix("/v1") if short else self.url
        parts = [url, self.state or "-", f"{self.calls:,} calls", f"{self.errors:,} errors"]
        for name, value in (("p50", self.p50_s), ("p95", self.p95_s)):
            parts.append(f"{name} -" if value is None else f"{name} {value:.2f} s")
        speed = self.tokens_per_s
        parts.append("- tok/s" if speed is None else f"{speed:,.0f} tok/s")
        return "  ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "state": self.state,
            "calls": self.calls,
            "errors": self.errors,
            "p50_s": self.p50_s,
            "p95_s": self.p95_s,
            "output_tokens": self.output_tokens,
            "busy_s": self.busy_s,
            "in_flight": self.in_flight,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EndpointFigures:
        """Raises KeyError, TypeError or ValueError on a malformed object."""
        return cls(
            url=str(data["url"]),
            state=str(data["state"]),
            calls=int(data["calls"]),
            errors=int(data["errors"]),
            p50_s=None if data["p50_s"] is None else float(data["p50_s"]),
            p95_s=None if data["p95_s"] is None else float(data["p95_s"]),
            output_tokens=int(data["output_tokens"]),
            busy_s=float(data["busy_s"]),
            in_flight=int(data.get("in_flight", 0)),
            reason=str(data.get("reason", "")),
        )


def figures(
    url: str, counters: EndpointCounters, state: str, in_flight: int = 0, reason: str = ""
) -> EndpointFigures:
    """A frozen copy of `counters`, with the percentiles computed."""
    latencies = list(counters.latencies)
    return EndpointFigures(
        url=url,
        state=state,
        calls=counters.calls,
        errors=counters.errors,
        p50_s=percentile(latencies, 0.5),
        p95_s=percentile(latencies, 0.95),
        output_tokens=counters.output_tokens,
        busy_s=counters.busy_s,
        in_flight=in_flight,
        reason=reason,
    )


def stored_figures(
    rows: Iterable[tuple[str, str, float | None, int, bool]],
    pooled: Iterable[tuple[str, str]] = (),
) -> dict[tuple[str, str], EndpointFigures]:
    """Figures by (model, URL) from stored calls (`ResultStore.endpoint_calls` rows: model,
    URL, latency, output tokens, failed); the state is unknown there (""). `pooled`: servers
    known to be in the pools (the run's endpoints.json), each shown even when no call reached
    it (the pool sent every call elsewhere)."""
    grouped: dict[tuple[str, str], EndpointCounters] = {}
    for key in pooled:
        grouped[key] = EndpointCounters(latencies=deque())
    for model, url, latency, output_tokens, failed in rows:
        counters = grouped.setdefault((model, url), EndpointCounters(latencies=deque()))
        if failed:
            counters.failed()
        else:
            counters.answered(latency or 0.0, output_tokens)
    return {key: figures(key[1], c, "") for key, c in grouped.items()}


SEVERITY = {"out": 3, "cooling": 2, "waiting": 1, "healthy": 0, "": -1}
"""Which state to show when processes see one server differently: the most severe."""


def merged(parts: Iterable[EndpointFigures]) -> EndpointFigures:
    """One server's figures from several processes' pools (Ray workers): counts and time added,
    the percentiles the highest any process saw (each only knows its own latencies: an upper
    bound, not the exact percentile of all calls), the most severe state and its reason."""
    parts = list(parts)
    worst = max(parts, key=lambda f: SEVERITY.get(f.state, 0))

    def highest(values: Iterable[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return max(known) if known else None

    return EndpointFigures(
        url=worst.url,
        state=worst.state,
        calls=sum(f.calls for f in parts),
        errors=sum(f.errors for f in parts),
        p50_s=highest(f.p50_s for f in parts),
        p95_s=highest(f.p95_s for f in parts),
        output_tokens=sum(f.output_tokens for f in parts),
        busy_s=sum(f.busy_s for f in parts),
        in_flight=sum(f.in_flight for f in parts),
        reason=worst.reason,
    )


class MergedPool:
    """A model's endpoint pool as seen across Ray workers: each worker's last snapshot (kept
    after it dies: its calls happened), merged per server. It has what the progress lines and
    `endpoints.json` read of a pool: `model` and `snapshot()`."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._latest: dict[str, list[EndpointFigures]] = {}

    def report(self, worker: str, servers: list[EndpointFigures]) -> None:
        self._latest[worker] = servers

    def snapshot(self) -> list[EndpointFigures]:
        by_url: dict[str, list[EndpointFigures]] = {}
        for servers in self._latest.values():
            for f in servers:
                by_url.setdefault(f.url, []).append(f)
        return [merged(parts) for parts in by_url.values()]
