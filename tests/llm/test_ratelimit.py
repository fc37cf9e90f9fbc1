"""The rate limiter: exact sliding windows (fake clock), shared by tasks and by processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from stratagem.llm.ratelimit import DAY, Limits, RateLimiter, estimate_tokens
from stratagem.llm.types import Message, Request

M = "openai/gpt-4o-mini"


def limiter_for(clock: Any, path: Path | None = None, **kw: Any) -> RateLimiter:
    return RateLimiter(path, clock=clock, sleep=clock.sleep, **kw)


def test_limits_validate_and_list_windows() -> None:
    with pytest.raises(ValueError, match="requests_per_minute"):
        Limits(requests_per_minute=0)
    assert Limits().unlimited
    limits = Limits(requests_per_minute=10, tokens_per_day=1000)
    assert [(w[0], w[1], w[3]) for w in limits.windows()] == [
        (60.0, "requests", 10),
        (DAY, "tokens", 1000),
    ]


def test_requests_per_minute_waits_exactly(clock: Any) -> None:
    limiter = limiter_for(clock)
    limits = Limits(requests_per_minute=2)

    async def main() -> list[float]:
        times = []
        for _ in range(5):
            await limiter.acquire(M, limits)
            times.append(clock.now - 1000.0)
        return times

    assert asyncio.run(main()) == [0.0, 0.0, 60.0, 60.0, 120.0]
    assert clock.sleeps == [60.0, 60.0]


def test_window_slides_rather_than_resetting(clock: Any) -> None:
    limiter = limiter_for(clock)
    limits = Limits(requests_per_minute=2)

    async def main() -> None:
        await limiter.acquire(M, limits)  # t=0
        clock.now += 30
        await limiter.acquire(M, limits)  # t=30
        await limiter.acquire(M, limits)  # must wait for t=0 to expire: t=60
        assert clock.now == 1060.0
        await limiter.acquire(M, limits)  # then for t=30 to expire: t=90
        assert clock.now == 1090.0

    asyncio.run(main())


def test_concurrent_tasks_share_the_quota(clock: Any) -> None:
    limiter = limiter_for(clock)
    limits = Limits(requests_per_minute=2)
    started: list[float] = []

    async def task() -> None:
        await limiter.acquire(M, limits)
        started.append(clock.now - 1000.0)

    async def main() -> None:
        await asyncio.gather(*(task() for _ in range(5)))

    asyncio.run(main())
    assert sorted(started) == [0.0, 0.0, 60.0, 60.0, 120.0]


def test_tokens_per_minute_uses_the_estimate_then_the_real_count(clock: Any) -> None:
    limiter = limiter_for(clock)
    limits = Limits(tokens_per_minute=1000)

    async def main() -> None:
        r = await limiter.acquire(M, limits, 900)
        assert clock.sleeps == []
        limiter.record(M, 100, r)  # the call used far less than estimated
        await limiter.acquire(M, limits, 800)  # 100 + 800 fits
        assert clock.sleeps == []
        await limiter.acquire(M, limits, 800)  # 900 + 800 does not
        assert clock.sleeps == [60.0]

    asyncio.run(main())
    assert limiter.usage(M, 60) == (1, 800)


def test_oversized_request_passes_once_the_window_is_empty(clock: Any) -> None:
    limiter = limiter_for(clock)
    limits = Limits(tokens_per_minute=100)

    async def main() -> None:
        await limiter.acquire(M, limits, 50)
        await limiter.acquire(M, limits, 5000)

    asyncio.run(main())
    assert clock.sleeps == [60.0]


def test_daily_quota(clock: Any) -> None:
    waits: list[tuple[str, float, str]] = []
    limiter = limiter_for(clock, on_wait=lambda m, s, why: waits.append((m, s, why)))
    limits = Limits(requests_per_minute=10, requests_per_day=3)

    async def main() -> None:
        for _ in range(3):
            await limiter.acquire(M, limits)
            clock.now += 100
        await limiter.acquire(M, limits)

    asyncio.run(main())
    assert clock.sleeps == [DAY - 300.0]
    assert waits == [(M, DAY - 300.0, "requests_per_day")]


def test_models_have_separate_quotas(clock: Any) -> None:
    limiter = limiter_for(clock)
    limits = Limits(requests_per_minute=1)

    async def main() -> None:
        await limiter.acquire("a/x", limits)
        await limiter.acquire("b/y", limits)

    asyncio.run(main())
    assert clock.sleeps == []


def test_two_limiters_on_one_state_file_share_the_quota(clock: Any, tmp_path: Path) -> None:
    path = tmp_path / "state" / "quotas.sqlite"
    first, second = limiter_for(clock, path), limiter_for(clock, path)
    limits = Limits(requests_per_minute=2)

    async def main() -> None:
        await first.acquire(M, limits)
        await first.acquire(M, limits)
        await second.acquire(M, limits)

    asyncio.run(main())
    assert clock.sleeps == [60.0]
    assert second.usage(M, 60) == (1, 0)
    first.close()
    second.close()


_OTHER_PROCESS = textwrap.dedent(
    """
    import asyncio, sys
    from stratagem.llm.ratelimit import Limits, RateLimiter
    limiter = RateLimiter(sys.argv[1])
    async def main():
        for _ in range(2):
            r = await limiter.acquire("openai/gpt-4o-mini", Limits(requests_per_minute=2), 10)
            limiter.record("openai/gpt-4o-mini", 7, r)
    asyncio.run(main())
    """
)


def test_quota_is_kept_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "quotas.sqlite"
    subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(path)], check=True, timeout=60)
    offset = 0.0
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        nonlocal offset
        sleeps.append(seconds)
        offset += seconds

    limiter = RateLimiter(path, clock=lambda: time.time() + offset, sleep=sleep)
    assert limiter.usage(M, 60) == (2, 14)
    asyncio.run(limiter.acquire(M, Limits(requests_per_minute=2)))
    assert len(sleeps) == 1 and 50.0 < sleeps[0] <= 60.0


def test_estimate_tokens() -> None:
    req = Request(messages=(Message("user", "x" * 400),), max_tokens=10)
    assert estimate_tokens(req) == 100 + 1 + 10
    assert estimate_tokens(Request(messages=())) == 1 + 256
