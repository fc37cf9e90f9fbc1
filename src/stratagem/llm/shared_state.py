"""What every call of a run consults besides its provider: the response cache, the budget and
the quotas, as the pipeline uses them.

In one process these are `ResponseCache`, `Budget` and `RateLimiter`. On a Ray cluster the
episodes play in worker actors while the `stratagem run` process keeps the one cache, budget and
quota state (`experiments.distributed`): a worker's client is given proxies with these shapes,
which ask the coordinator. So every method the pipeline awaits may cross the network, and the
ones it does not await only report (their order is kept).
"""

from __future__ import annotations

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
