"""Retries: exact counts, backoff doubling under a cap, full jitter, Retry-After as a floor."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

import pytest

from stratagem.llm.errors import PermanentError, TransientError
from stratagem.llm.retry import RetriesExhausted, RetryPolicy, call_with_retries


def failing(pattern: list[BaseException | None]) -> tuple[Callable[[], Awaitable[str]], list[int]]:
    """A call that raises the pattern's errors in turn (None = succeed)."""
    calls = [0]

    async def fn() -> str:
        outcome = pattern[min(calls[0], len(pattern) - 1)]
        calls[0] += 1
        if outcome is not None:
            raise outcome
        return "ok"

    return fn, calls


def run(
    fn: Callable[[], Awaitable[str]], policy: RetryPolicy, rng: random.Random | None = None
) -> tuple[int, list[float], list[tuple[int, float]]]:
    sleeps: list[float] = []
    hooks: list[tuple[int, float]] = []

    async def sleep(s: float) -> None:
        sleeps.append(s)

    result = asyncio.run(
        call_with_retries(
            fn, policy, rng or random.Random(0), sleep, lambda n, e, w: hooks.append((n, w))
        )
    )
    assert result.value == "ok"
    return result.retries, sleeps, hooks


def test_succeeds_after_exactly_k_retries_with_doubling_backoff() -> None:
    fn, calls = failing([TransientError("429"), TransientError("503"), TransientError("x"), None])
    retries, sleeps, hooks = run(fn, RetryPolicy(jitter=False))
    assert retries == 3 and calls[0] == 4
    assert sleeps == [0.5, 1.0, 2.0]
    assert hooks == [(1, 0.5), (2, 1.0), (3, 2.0)]


def test_no_retry_when_the_first_attempt_works() -> None:
    fn, calls = failing([None])
    assert run(fn, RetryPolicy())[:2] == (0, [])
    assert calls[0] == 1


def test_gives_up_after_max_attempts_with_the_last_error() -> None:
    fn, calls = failing([TransientError("first"), TransientError("last")])

    async def sleep(s: float) -> None:
        pass

    with pytest.raises(RetriesExhausted) as info:
        asyncio.run(call_with_retries(fn, RetryPolicy(max_attempts=3), random.Random(0), sleep))
    assert calls[0] == 3
    assert info.value.retries == 2
    assert str(info.value.last) == "last"


def test_permanent_errors_are_not_retried() -> None:
    fn, calls = failing([PermanentError("400 bad request")])

    async def sleep(s: float) -> None:
        raise AssertionError("must not wait")

    with pytest.raises(PermanentError):
        asyncio.run(call_with_retries(fn, RetryPolicy(), random.Random(0), sleep))
    assert calls[0] == 1


def test_backoff_is_capped() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=1.0, max_delay=5.0, jitter=False)
    rng = random.Random(0)
    assert [policy.delay(k, rng) for k in range(1, 7)] == [1.0, 2.0, 4.0, 5.0, 5.0, 5.0]


def test_full_jitter_stays_in_range_and_is_seeded() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    draws = [policy.delay(k, random.Random(k)) for k in range(1, 6)]
    for k, d in enumerate(draws, start=1):
        assert 0.0 <= d <= min(8.0, 2 ** (k - 1))
    assert draws == [policy.delay(k, random.Random(k)) for k in range(1, 6)]
    assert len(set(draws)) == len(draws)


def test_retry_after_is_a_floor() -> None:
    fn, _ = failing([TransientError("429", retry_after=7.0), TransientError("429", 0.01), None])
    retries, sleeps, _ = run(fn, RetryPolicy(base_delay=0.5, max_delay=1.0))
    assert retries == 2
    assert sleeps[0] == 7.0  # above both the backoff and max_delay: the server knows best
    assert 0.01 <= sleeps[1] <= 1.0


def test_policy_validates() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError):
        RetryPolicy(base_delay=-1)
