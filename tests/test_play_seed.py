"""`stratagem play --seed N` a second time in the same directory: that game is stored already, so
it is refused in one line before anything is asked (issue 23 item 14), instead of printing
"game over" and then "the game did not finish"."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

COMMAND = shutil.which("stratagem") or str(Path(sys.executable).parent / "stratagem")


def play(tmp_path: Path, typed: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, "play", "ultimatum", "--seat", "0=human", "--seat", "1=scripted:accept",
         "--out", str(tmp_path / "play"), "--seed", "7"],
        input=typed, capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip


def test_a_seed_played_already_is_refused_before_anything_is_asked(tmp_path: Path) -> None:
    first = play(tmp_path, "40\n")
    assert first.returncode == 0, first.stderr
    assert "game over: seat 0: 60, seat 1: 40" in first.stdout
    again = play(tmp_path, "30\n")
    assert again.returncode == 2
    assert again.stdout == ""  # no game shown, no move asked, no "game over"
    (line,) = again.stderr.strip().splitlines()
    assert line.startswith("error: --seed 7: this game was played with this seed already in ")
    assert line.endswith("choose another seed, or leave --seed out for a new one")
