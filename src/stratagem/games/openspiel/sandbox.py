"""A game string tried in a throwaway process before this one loads it (issue 33).

OpenSpiel's games check their parameters in C++, and some do not: within every bound `bounds`
sets on a single parameter, hanabi aborts the process, universal_poker segfaults, and blotto
enumerates every split of its coins until memory runs out. Only another process can find that
out and live, so `sandbox_child` loads the string there, with its memory and time bounded, and
measures the game; this process loads it only once that went well. It costs about 0.2 s per game
string, once per process (`openspiel.load` keeps the game).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from stratagem.errors import StratagemError
from stratagem.games.openspiel.bounds import SIZES, bound, check_sizes
from stratagem.games.openspiel.loader import PREFIX

SANDBOX_MEMORY = 1 << 30
"""Address space the trial load may use, in bytes (OpenSpiel's games take under 200 MB)."""
SANDBOX_SECONDS = 20
"""Time the trial load may take (OpenSpiel's games load in under a second)."""

CHILD = Path(__file__).with_name("sandbox_child.py")


def trial_load(game_string: str) -> dict[str, int]:
    """The game's sizes, measured in a throwaway process and checked against the bounds; a
    one-line `StratagemError` where OpenSpiel refuses the string, crashes or runs out of memory
    or time on it."""
    limits = json.dumps({size: bound(size) for size in SIZES})
    argv = [sys.executable, "-P", str(CHILD), game_string, str(SANDBOX_MEMORY), limits]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=SANDBOX_SECONDS
        )
    except subprocess.TimeoutExpired:
        raise _error(
            game_string,
            f"OpenSpiel took over {SANDBOX_SECONDS} seconds to load it; choose smaller parameters",
        ) from None
    except OSError as exc:  # no interpreter to start (an embedded Python): say so, once
        raise _error(game_string, f"cannot start a process to try it in ({exc})") from None
    report: dict[str, Any] = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            report.update(json.loads(line))
    if "error" in report:
        raise _refused(game_string, str(report["error"]), str(report.get("kind", "")))
    if "sizes" in report:
        check_sizes(game_string, report["sizes"])
    if "state" in report and done.returncode == 0:
        sizes: dict[str, int] = report["sizes"]
        return sizes
    if done.returncode < 0:
        name = _signal_name(-done.returncode)
        raise _error(
            game_string,
            f"OpenSpiel crashed loading it ({name}): its parameters are outside "
            "what the game supports",
        )
    if "MemoryError" in done.stderr or "bad_alloc" in done.stderr:
        raise _refused(game_string, "", "MemoryError")
    raise _error(game_string, f"OpenSpiel failed to load it (exit status {done.returncode})")


def _refused(game_string: str, said: str, kind: str) -> StratagemError:
    if kind == "MemoryError" or "bad_alloc" in said:
        gib = SANDBOX_MEMORY / (1 << 30)
        return _error(
            game_string,
            f"OpenSpiel needs over {gib:g} GiB of memory to load it; choose smaller parameters",
        )
    said = said.removeprefix("OpenSpiel exception: ")
    return _error(game_string, f"OpenSpiel says: {said or kind}")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _error(game_string: str, why: str) -> StratagemError:
    return StratagemError(f"game '{PREFIX}{game_string}': {why}")
