"""What every call of a run consults besides its provider: the response cache, the budget, the
quotas and the concurrency caps, as the pipeline (and a pool of servers) uses them.

In one process these are `ResponseCache`, `Budget` and `RateLimiter`. On a Ray cluster the
episodes play in worker actors while the `stratagem run` process keeps the one cache, budget and
quota state (`experiments.distributed`): a worker's client is given proxies with these shapes,
which ask the coordinator. So every method the pipeline awaits may cross the network, and the
ones it does not await only report (their order is kept).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from stratagem.llm.ratelimit import Limits
from stratagem.llm.types import Request, Response


class AnswerCache(Protocol):
    @staticmethod
    def key_and_request(model: str, request: Request, sample: int) -> tuple[str, str]: ...

    async def lookup(self, key: str) -> Response | None: ...

    def put(
        self,
        key: str,
        model: str,
        request: Request,
        response: Response,
        *,
        request_json: str | None = None,
    ) -> None: ...


class Spending(Protocol):
    async def admit(self) -> None:
        """Raise `BudgetExceeded` when no new call may start."""

    def charge(self, cost: float, tokens: int) -> None: ...


class Quotas(Protocol):
    async def acquire(self, model: str, limits: Limits, estimated_tokens: int = 0) -> int: ...

    def record(self, model: str, tokens: int, reservation: int | None = None) -> None: ...


class Slots(Protocol):
    """A model's `max_concurrency`: an `asyncio.Semaphore` in one process; on a Ray cluster the
    coordinator's one semaphore, so the workers together never pass a server's cap."""

    async def acquire(self) -> bool: ...

    def release(self) -> None: ...


class ServerSlots(Protocol):
    """A pool's servers' own caps and quotas kept for several processes at once (a Ray run's
    coordinator), so that together they never pass them."""

    async def take(
        self, urls: Sequence[str], tokens: int, wait_s: float
    ) -> tuple[str | None, int | None]:
        """The first of `urls` with a free slot and quota, taken (its url, the quota's
        reservation); (None, None) if none frees within `wait_s` seconds."""

    def give(self, url: str, tokens: int, reservation: int | None) -> None:
        """The slot back, with the tokens the call used (0 if it sent nothing)."""
