"""Shared test doubles for the model pipeline: a fake clock whose sleep advances time at once."""

from __future__ import annotations

import asyncio

import pytest


class FakeClock:
    """Wall-clock stand-in: `sleep` records the wait and moves time forward instead of waiting."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
