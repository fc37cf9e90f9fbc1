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
from pathlib import Path
from types import TracebackType

from stratagem.errors import StratagemError

LOCK_FILE = "writer.lock"


class WriterLock:
    """`with WriterLock(directory):` — raises StratagemError if another process holds it."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / LOCK_FILE
        self._fd: int | None = None

    def __enter__(self) -> WriterLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
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
