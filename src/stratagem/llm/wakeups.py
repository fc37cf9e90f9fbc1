"""Calls waiting until something they wait for may have changed (a slot given back, a server's
state), or their deadline: each `wake` lets every waiter look again, so none polls."""

from __future__ import annotations

import asyncio


class Wakeups:
    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] = []

    async def wait(self, seconds: float) -> None:
        """Until the next `wake`, at most `seconds`."""
        future = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        await asyncio.wait({future}, timeout=max(0.0, seconds))
        if future in self._waiters:
            self._waiters.remove(future)

    def wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)
