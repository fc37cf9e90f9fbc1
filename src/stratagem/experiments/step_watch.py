"""Someone watching the episodes played in this context (`stratagem play` with no person seated,
in the terminal or the browser): told after each stored step and awaited, so a watch can show
each step as it happens and pause the game at the pace it was asked for.

A context variable, not a parameter: the runner, its executor and the episode loop pass it on to
the tasks they start without knowing of it, and a run from a file has none. The step's writes are
committed at the event loop's next turn (`commits.TurnCommits`), so a watch that reads the store
yields once first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar

StepWatch = Callable[[str, int], Awaitable[None]]
"""Awaited with (episode id, step) after each step is stored; step 0: the game's opening."""

step_watch: ContextVar[StepWatch | None] = ContextVar("stratagem_step_watch", default=None)


async def stepped(episode_id: str, step: int) -> None:
    """Tell the watch of this context, if any, that `step` of the episode is stored."""
    watch = step_watch.get()
    if watch is not None:
        await watch(episode_id, step)
