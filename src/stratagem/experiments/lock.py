"""One writer per results directory: a second `stratagem run` on the same directory is refused, and
so is an `import` or a stored tournament while one writes there.

Two runs writing one store would play the same episodes twice, pay twice, and mix their rounds. The
lock is an advisory `flock` on a file in the directory, held for the whole run: the kernel releases
it when the process ends, however it ends (a crash or SIGKILL leaves no stale lock behind). The file
holds the writer's PID so the refusal can say who holds it.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from stratagem.errors import StratagemError

LOCK_FILE = "writer.lock"
PROBE_GRACE_S = 0.25
"""How long a writer retries a lock that `writer_active`'s probe holds (for microseconds)."""


class WriterLock:
    """`with WriterLock(directory):` — raises StratagemError if another process holds it."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / LOCK_FILE
        self._fd: int | None = None

    def __enter__(self) -> WriterLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # under a regular file, in /proc, read-only: bad input, one line
            raise StratagemError(
                f"{self.path.parent}: cannot write a results directory there "
                f"({exc.strerror or exc})"
            ) from None
        try:
            _lock_exclusive(fd)
        except OSError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StratagemError(
                f"{self.path.parent}: another stratagem process (PID {holder}) is writing to "
                "this directory; wait for it to finish or stop it, then try again"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        self._fd = fd
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def writer_active(directory: Path) -> bool:
    """Whether a process writes the directory now: it holds the lock. Episodes stored as
    "running" while nobody writes were interrupted (Ctrl-C, a kill, a crash)."""
    try:
        fd = os.open(Path(directory) / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _lock_exclusive(fd: int) -> None:
    """The writer's lock, retried briefly: `writer_active` in another process may hold it shared
    for a moment, and a run must not be refused for that."""
    deadline = time.monotonic() + PROBE_GRACE_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)
