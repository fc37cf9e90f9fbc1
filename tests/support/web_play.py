"""`stratagem play GAME --web` in a second process, for the browser-play tests: the seats' links
it prints, and its end (exit status and output) once the game is over."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stratagem.web.play.app import SEAT_HEADER
from support.play import COMMAND

LINK = re.compile(r"seat (\d+): (http://127\.0\.0\.1:\d+/play#[\w-]+)")


@dataclass
class Played:
    links: dict[int, str]
    proc: subprocess.Popen[str]
    out: str = ""
    err: str = ""
    rc: int | None = None
    lines: list[str] = field(default_factory=list)

    def api(self, seat: int) -> str:
        """The seats' API URL (the same for every seat: the token goes in a header)."""
        return self.links[seat].partition("#")[0].removesuffix("play") + "api/seat"

    def token(self, seat: int) -> dict[str, str]:
        """The header that names the seat: its token, the link's fragment."""
        return {SEAT_HEADER: self.links[seat].partition("#")[2]}

    def news(self, seat: int, after: int = 0, wait: int = 0) -> dict[str, Any]:
        url = f"{self.api(seat)}?after={after}&wait={wait}"
        with urllib.request.urlopen(urllib.request.Request(url, headers=self.token(seat))) as r:
            return dict(json.load(r))

    def send(self, seat: int, line: str, turn: int) -> tuple[int, dict[str, Any]]:
        """POST the line for move `turn` (the turn the seat's page showed)."""
        request = urllib.request.Request(
            self.api(seat), data=json.dumps({"line": line, "turn": turn}).encode(),
            headers={**self.token(seat), "content-type": "application/json"}, method="POST",
        )  # fmt: skip
        return _answer(request)

    def wait_move(self, seat: int, turn: int | None = None) -> dict[str, Any]:
        """The seat's state once it is asked for a move (a turn after `turn`), or the game ends."""
        for _ in range(300):
            state = self.news(seat, wait=2)
            move = state["move"]
            if state["end"] or (move and (turn is None or move["turn"] > turn)):
                return state
        raise AssertionError(f"seat {seat} was never asked to move")


def _answer(request: urllib.request.Request) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(request) as r:
            return r.status, dict(json.load(r))
    except urllib.error.HTTPError as exc:
        return exc.code, dict(json.load(exc))


@contextmanager
def web_play(tmp_path: Path, *args: str, humans: int = 1) -> Iterator[Played]:
    """`stratagem play ARGS --web --out TMP/play --seed 7`; the block plays it, and the process's
    end is read when the block ends (killed after 120 s)."""
    proc = subprocess.Popen(
        [COMMAND, "play", *args, "--web", "--out", str(tmp_path / "play"), "--seed", "7"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdout is not None
    links: dict[int, str] = {}
    while len(links) < humans:
        line = proc.stdout.readline()
        match = LINK.fullmatch(line.strip())
        assert match, (line, proc.stderr.read() if proc.stderr and not line else "")
        links[int(match[1])] = match[2]
    played = Played(links, proc)
    try:
        yield played
    finally:
        try:
            rest, played.err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            rest, played.err = proc.communicate()
        played.out, played.rc = rest, proc.returncode
