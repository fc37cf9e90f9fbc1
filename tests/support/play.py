"""`stratagem play` through the installed command, with what a person types piped in: the helper
of the play tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

COMMAND = shutil.which("stratagem") or str(Path(sys.executable).parent / "stratagem")


def play(tmp_path: Path, typed: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`stratagem play ARGS --out TMP/play --seed 7` with `typed` on its standard input."""
    return subprocess.run(
        [COMMAND, "play", *args, "--out", str(tmp_path / "play"), "--seed", "7"],
        input=typed,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
