"""Group commit for a run: one commit per event-loop turn instead of one per write.

A run's writes (each model call, each step of each episode, each answer cached) used to commit
one by one: at hundreds of episodes in flight the commits were the largest single cost in the
runner (benchmarks/throughput.py). Under `TurnCommits` the store and the response cache defer
their commits (their `GroupCommit`): the writes of one turn of the event loop share one transaction,
committed at the start of the next turn. Each write is still all or none, a step still whole.

The store commits first: an answer in the cache always has its call record, so a resumed run,
which replays cached answers for free, never replays one whose spend went uncounted. A kill between
the two commits leaves answers recorded but not cached; the resumed run pays for them again and
counts both, as it does for the calls in flight at a kill. A kill before them loses the last
turn's writes (milliseconds of them); their calls, paid but unrecorded, are like those in flight,
which a kill loses either way. Leaving the block by any path (Ctrl-C, an error) commits what is
open. Once a commit fails, nothing more is committed: the later files drop their writes.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from types import TracebackType

from stratagem.errors import StratagemError
from stratagem.llm.group_commit import GroupCommit


class TurnCommits:
    """Commits `files` (in that order) once per event-loop turn while the block runs; to be
    entered inside the running loop. A failed commit is raised when the block ends (the store
    also raises it at its next write, so the episodes in flight fail with it)."""

    def __init__(self, *files: GroupCommit) -> None:
        self.files = files
        self._due = False
        self._loop: asyncio.AbstractEventLoop | None = None

    def __enter__(self) -> TurnCommits:
        self._loop = asyncio.get_running_loop()
        for f in self.files:
            f.defer(self._schedule)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._commit()
        for f in self.files:
            f.defer(None)  # nothing is open any more
        if self.failure is not None and exc is None:
            raise self.failure

    @property
    def failure(self) -> StratagemError | None:
        """The first failed commit, if any."""
        return next((f.failure for f in self.files if f.failure is not None), None)

    def _schedule(self) -> None:
        if not self._due:
            self._due = True
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._commit)

    def _commit(self) -> None:
        self._due = False
        for f in self.files:
            if self.failure is not None:
                f.rollback()
                continue
            with suppress(StratagemError):  # kept as `f.failure`
                f.commit()
