"""Retries with exponential backoff and full jitter, for failures worth retrying only.

Only `TransientError` (429, 5xx, timeouts, lost connections) is retried: retrying a bad request
would just spend money. Full jitter spreads the retries of many concurrent tasks, and a server's
Retry-After is a floor: we never come back sooner than asked.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from stratagem.llm.errors import TransientError

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[None]]
RetryHook = Callable[[int, TransientError, float], None]
"""(retry number from 1, the error that caused it, seconds about to be waited) -> None."""


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts, and how long to wait between them."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: bool = True

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("retry delays must not be negative")

    def delay(self, retry: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (1 = the first retry).

        The backoff doubles each time up to `max_delay`; with jitter it is drawn uniformly from
        [0, backoff]. A Retry-After from the server is honoured even above `max_delay`.
        """
        backoff = min(self.max_delay, self.base_delay * 2 ** (retry - 1))
        wait = rng.uniform(0.0, backoff) if self.jitter else backoff
        if retry_after is not None and retry_after > wait:
            wait = retry_after
        return wait


@dataclass(frozen=True)
class Retried(Generic[T]):
    """A result and the number of retries it took."""

    value: T
    retries: int


class RetriesExhausted(Exception):
    """Every attempt failed with a transient error; `last` is the final one."""

    def __init__(self, last: TransientError, retries: int) -> None:
        super().__init__(f"gave up after {retries + 1} attempts: {last}")
        self.last = last
        self.retries = retries


async def call_with_retries(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    rng: random.Random | None = None,
    sleep: Sleep = asyncio.sleep,
    on_retry: RetryHook | None = None,
) -> Retried[T]:
    """Await `fn()` until it succeeds, retrying `TransientError` as `policy` allows.

    Any other exception propagates at once (use `on_retry` to count the retries made before it).
    When the attempts run out, raises `RetriesExhausted` with the last error and the retry count.
    """
    rng = rng if rng is not None else random.Random()
    retries = 0
    while True:
        try:
            return Retried(await fn(), retries)
        except TransientError as exc:
            if retries + 1 >= policy.max_attempts:
                raise RetriesExhausted(exc, retries) from exc
            retries += 1
            wait = policy.delay(retries, rng, exc.retry_after)
            if on_retry is not None:
                on_retry(retries, exc, wait)
            await sleep(wait)
