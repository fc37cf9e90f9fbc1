"""The local executor: every item once, at most `concurrency` at a time, workers started in
groups so the first episodes' calls go out while later ones set up, no new item after `stop`,
and no worker outliving an error or a cancellation."""

from __future__ import annotations

import asyncio

import pytest

from stratagem.experiments.executors import STARTS_PER_TURN, LocalExecutor


def run(items: list[int], concurrency: int, log: list[tuple[str, int]], stop: bool = False) -> None:
    async def work(item: int) -> None:
        log.append(("set up", item))
        await asyncio.sleep(0)  # as an episode's first call leaves in a later turn
        log.append(("call", item))
        await asyncio.sleep(0.001)

    async def main() -> None:
        flag = asyncio.Event()
        if stop:
            flag.set()
        await LocalExecutor().run(items, work, concurrency, flag)

    asyncio.run(main())


def test_every_item_runs_once_at_most_concurrency_at_a_time() -> None:
    log: list[tuple[str, int]] = []
    run(list(range(100)), 40, log)
    assert sorted(i for kind, i in log if kind == "call") == list(range(100))
    in_flight = peak = 0
    for kind, _ in log:
        in_flight += kind == "set up"
        peak = max(peak, in_flight)
        in_flight -= kind == "call"
    assert peak <= 40


def test_the_first_calls_leave_before_every_worker_has_set_up() -> None:
    log: list[tuple[str, int]] = []
    run(list(range(3 * STARTS_PER_TURN)), 3 * STARTS_PER_TURN, log)
    first_call = log.index(("call", 0))
    assert first_call == STARTS_PER_TURN  # one group set up, then its calls went out


def test_no_item_starts_once_stop_is_set() -> None:
    log: list[tuple[str, int]] = []
    run(list(range(10)), 4, log, stop=True)
    assert log == []


def test_an_error_cancels_the_other_workers() -> None:
    finished: list[int] = []

    async def work(item: int) -> None:
        if item == 3:
            raise RuntimeError("a bug in one episode")
        await asyncio.sleep(0.05)
        finished.append(item)

    async def main() -> None:
        with pytest.raises(RuntimeError, match="a bug"):
            await LocalExecutor().run(range(40), work, 40, asyncio.Event())
        await asyncio.sleep(0.1)  # long enough for a worker left running to finish

    asyncio.run(main())
    assert finished == []  # the others were cancelled, not left running


def test_cancelling_the_run_cancels_its_workers() -> None:
    """As Ctrl-C cancels a run, even while its workers are still starting: every worker stops
    with it, none finishes later."""
    finished: list[int] = []

    async def work(item: int) -> None:
        await asyncio.sleep(0.05)
        finished.append(item)

    async def main() -> None:
        run = asyncio.ensure_future(LocalExecutor().run(range(40), work, 40, asyncio.Event()))
        await asyncio.sleep(0)  # the first group has started; the rest are still to start
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        await asyncio.sleep(0.1)  # long enough for a worker left running to finish

    asyncio.run(main())
    assert finished == []
