"""`stratagem play --seed N` a second time in the same directory: that game is stored already, so
it is refused in one line before anything is asked (issue 23 item 14), instead of printing
"game over" and then "the game did not finish"."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.play import play


def play_ultimatum(tmp_path: Path, typed: str) -> subprocess.CompletedProcess[str]:
    return play(tmp_path, typed, "ultimatum", "--seat", "0=human", "--seat", "1=scripted:accept")


def test_a_seed_played_already_is_refused_before_anything_is_asked(tmp_path: Path) -> None:
    first = play_ultimatum(tmp_path, "40\n")
    assert first.returncode == 0, first.stderr
    assert "game over: seat 0: 60, seat 1: 40" in first.stdout
    again = play_ultimatum(tmp_path, "30\n")
    assert again.returncode == 2
    assert again.stdout == ""  # no game shown, no move asked, no "game over"
    (line,) = again.stderr.strip().splitlines()
    assert line.startswith("error: --seed 7: this game was played with this seed already in ")
    assert line.endswith("choose another seed, or leave --seed out for a new one")
