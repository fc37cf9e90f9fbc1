"""A pool's servers' own caps and quotas held in one place for several processes: a Ray run's
coordinator keeps them for every worker's pool (`EndpointPool.share`), so the workers together
never have more calls in flight at a server than its `max_concurrency`, nor send more than its
`limits` allow.

A worker that asks for a slot names its candidate servers in its order of preference (its
episode's own first); the first with a free slot and quota is taken. Nothing is divided among
the workers beforehand: a cap of 1 with 2 workers is one call at a time, whichever worker makes
it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from stratagem.llm.pool import shown_url
from stratagem.llm.ratelimit import Limits, RateLimiter
from stratagem.llm.registry import EndpointConfig
from stratagem.llm.wakeups import Wakeups


@dataclass
class _Server:
    cap: float
    limits: Limits
    in_flight: int = 0


class PoolSlots:
    """`ServerSlots` for the servers of one model entry (`model`, as its pool names quotas)."""

    def __init__(self, model: str, endpoints: Sequence[EndpointConfig]) -> None:
        self.model = model
        self._servers = {
            shown_url(e.base_url): _Server(float(e.max_concurrency or math.inf), e.limits)
            for e in endpoints
        }
        quotas = any(not s.limits.unlimited for s in self._servers.values())
        self._limiter = RateLimiter() if quotas else None
        self._wakeups = Wakeups()

    @staticmethod
    def needed(endpoints: Sequence[EndpointConfig]) -> bool:
        """Whether any server has a cap or a quota to keep."""
        return any(e.max_concurrency or not e.limits.unlimited for e in endpoints)

    async def take(
        self, urls: Sequence[str], tokens: int, wait_s: float
    ) -> tuple[str | None, int | None]:
        deadline = time.monotonic() + wait_s
        while True:
            url, reservation, quota_wait = self._first(urls, tokens)
            left = deadline - time.monotonic()
            if url is not None or left <= 0:
                return url, reservation
            await self._wakeups.wait(min(left, quota_wait))

    def try_take(self, urls: Sequence[str], tokens: int) -> tuple[str | None, int | None]:
        """`take` without waiting."""
        url, reservation, _ = self._first(urls, tokens)
        return url, reservation

    def _first(self, urls: Sequence[str], tokens: int) -> tuple[str | None, int | None, float]:
        """The first of `urls` with a free slot and quota, taken; or None and the seconds until
        a quota frees (inf: waiting for a slot)."""
        quota_wait = math.inf
        for url in urls:
            server = self._servers.get(url)
            if server is None or server.in_flight >= server.cap:
                continue
            reservation, wait = self._reserve(url, server, tokens)
            if wait <= 0:
                server.in_flight += 1
                return url, reservation, 0.0
            quota_wait = min(quota_wait, wait)
        return None, None, quota_wait

    def give(self, url: str, tokens: int, reservation: int | None) -> None:
        server = self._servers.get(url)
        if server is None:
            return
        server.in_flight = max(0, server.in_flight - 1)
        if reservation is not None and self._limiter is not None:
            self._limiter.record(f"{self.model}@{url}", tokens, reservation)
        self._wakeups.wake()

    def in_flight(self, url: str) -> int:
        """Calls at that server now, every process's."""
        return self._servers[url].in_flight

    def _reserve(self, url: str, server: _Server, tokens: int) -> tuple[int | None, float]:
        if self._limiter is None or server.limits.unlimited:
            return None, 0.0
        return self._limiter.try_acquire(f"{self.model}@{url}", server.limits, tokens)
