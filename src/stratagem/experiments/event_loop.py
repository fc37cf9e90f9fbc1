"""The event loop a run plays on: uvloop's where it is installed (Linux and macOS), else asyncio's.

A run at high concurrency is bound by this process's CPU, and uvloop's loop (libuv, in C) spends
less of it on each call's sockets, timers and callbacks than asyncio's selector loop:
`benchmarks/throughput.py`'s runner at 256 episodes, 10 alternated runs each, 0.995 -> 0.95 ms of
CPU per call. Behaviour is asyncio's: the same Ctrl-C handling (`asyncio.Runner`), the same tasks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:  # Windows: uvloop does not exist there
        return None
    return uvloop.new_event_loop


LOOP_FACTORY = _loop_factory()
"""What makes a run's loop: uvloop's, or None for asyncio's own."""


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the run's loop."""
    with asyncio.Runner(loop_factory=LOOP_FACTORY) as runner:
        return runner.run(main)
