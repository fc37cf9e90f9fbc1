"""A command run in a child process with its memory and time bounded, for tests of inputs that
once took the machine down (an 18 GB allocation, a segfault): a regression fails the test, not
the machine."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

MEMORY = 4 << 30
"""The child's address space, in bytes: a stratagem command needs far less."""
SECONDS = 180

COMMAND = str(Path(sys.executable).with_name("stratagem"))


def _bound() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def limited(argv: list[str], cwd: Path, typed: str = "") -> subprocess.CompletedProcess[str]:
    """`argv` run with bounded memory and time (exit status, stdout, stderr as text)."""
    return subprocess.run(argv, input=typed, capture_output=True, text=True, cwd=cwd,
                          timeout=SECONDS, preexec_fn=_bound)  # fmt: skip


def stratagem(*args: str, cwd: Path, typed: str = "") -> subprocess.CompletedProcess[str]:
    """The `stratagem` command with bounded memory and time."""
    return limited([COMMAND, *args], cwd, typed)


def python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Python code with bounded memory and time."""
    return limited([sys.executable, "-c", code], cwd)
