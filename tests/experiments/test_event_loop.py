"""A run's event loop: uvloop's where it is installed, with asyncio's behaviour."""

from __future__ import annotations

import asyncio
import sys

import pytest

from stratagem.experiments import event_loop


def test_a_run_plays_on_uvloop_where_it_exists() -> None:
    async def which() -> str:
        await asyncio.sleep(0)
        return type(asyncio.get_running_loop()).__module__

    module = event_loop.run(which())
    if sys.platform == "win32":
        assert module.startswith("asyncio")
    else:  # a dependency there (pyproject), so a run must get it
        assert module.startswith("uvloop")


def test_errors_and_threads_behave_as_under_asyncio() -> None:
    async def off_loop() -> int:
        return await asyncio.to_thread(lambda: 41) + 1

    assert event_loop.run(off_loop()) == 42

    async def fails() -> None:
        raise ValueError("from the run")

    with pytest.raises(ValueError, match="from the run"):
        event_loop.run(fails())


def test_without_uvloop_the_loop_is_asyncios(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(event_loop, "LOOP_FACTORY", None)

    async def which() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert event_loop.run(which()).startswith("asyncio")
