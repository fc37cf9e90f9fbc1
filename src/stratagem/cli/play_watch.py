"""`stratagem play` with no person seated: the game watched as it is played, a pause of `--pace`
seconds after each step. In the terminal, each step is printed as it is stored: what every seat
could see (the public record) and each seat's move, in the words of `stratagem show`; with
`--web`, the viewer's episode page follows the game (`web.play.watch`). The episode is stored
like any played game; Ctrl-C leaves it unfinished with the steps played so far.
"""

from __future__ import annotations

import asyncio
import secrets
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from stratagem.cli.common import _say, err, out
from stratagem.errors import StratagemError
from stratagem.experiments.store import ResultStore
from stratagem.experiments.store_files import STORE_FILE
from stratagem.web.play import MAX_PACE

if TYPE_CHECKING:
    from stratagem.experiments.runner import Runner, RunSummary

SHOWN = frozenset({"event", "said", "round", "decision", "invalid"})
"""Transcript lines a watch prints (no prompts, replies or answers)..."""
RECORD_ONLY = frozenset({"decision", "invalid"})
"""...and of those seen by no seat only each seat's move, and its refusal."""


def checked_pace(value: float | None) -> float | None:
    """`--pace`: a number of seconds from 0 to `MAX_PACE`, else a one-line error."""
    if value is not None and not 0 <= value <= MAX_PACE:  # nan and inf too
        raise StratagemError(f"--pace {value:g}: a number of seconds from 0 to {MAX_PACE:g}")
    return value


class StepPrinter:
    """The step watch of the terminal: prints what each stored step added to the transcript."""

    def __init__(self, store_file: Path, pace: float, tell: Callable[[str], None]) -> None:
        self.store_file, self.pace, self.tell = store_file, pace, tell
        self._store: ResultStore | None = None
        self._printed: dict[int | None, int] = {}
        """Lines printed so far of each section (None: before the game)."""

    async def __call__(self, episode_id: str, step: int) -> None:
        await asyncio.sleep(0)  # the step's writes are committed at this turn
        self.show(episode_id)
        await asyncio.sleep(self.pace)

    def show(self, episode_id: str) -> None:
        from stratagem.analysis.transcript import build_transcript

        first = self._store is None
        store = self._store = self._store or ResultStore(self.store_file, read_only=True)
        episode = store.episode(episode_id)
        if episode is None:
            return
        transcript = build_transcript(store, episode)
        if first:
            self.tell(f"{episode.game}, seed {episode.seed}: {'; '.join(transcript.seats)}")
        for section in transcript.sections:
            lines = [ln for ln in section.lines if ln.kind in SHOWN
                     and (ln.seen_by is None or ln.kind in RECORD_ONLY)]  # fmt: skip
            done = self._printed.get(section.round)
            if done is None and lines:
                self.tell("before the game" if section.round is None else f"round {section.round}")
            for line in lines[done or 0 :]:
                who = "" if line.seat is None else f"seat {line.seat} "
                self.tell(f"  {who}{line.text}")
                for body in line.body.splitlines():
                    self.tell(f"      {body}")
            self._printed[section.round] = len(lines)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def watch_terminal(runner: Runner, out_dir: Path, pace: float) -> None:
    """Play and print the game, step by step."""
    from stratagem.analysis.transcript import clean
    from stratagem.experiments import event_loop
    from stratagem.experiments.step_watch import step_watch

    printer = StepPrinter(out_dir / STORE_FILE, pace, lambda text: _say(out, clean(text)))

    async def main() -> RunSummary:
        step_watch.set(printer)  # this task's context, which the runner's tasks inherit
        return await runner.run()

    try:
        summary = event_loop.run(main())
    except KeyboardInterrupt:
        _interrupted(runner, out_dir)
        return
    finally:
        printer.close()
    _over(runner, out_dir, summary)


def watch_web(
    runner: Runner, out_dir: Path, pace: float, port: int | None, host: str, open_browser: bool
) -> None:
    """Play the game while the viewer serves it; its episode page's link printed first."""
    from stratagem.cli.view import LOCAL_HOSTS, _listen
    from stratagem.experiments import event_loop
    from stratagem.web.play.watch import watch_served

    token = None if host in LOCAL_HOSTS else secrets.token_urlsafe(24)
    sock = _listen(host, port)
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{sock.getsockname()[1]}/" + (f"?token={token}" if token else "")

    def link(url: str) -> None:
        _say(out, f"watch: {url}")
        if open_browser:
            webbrowser.open(url)

    with sock:
        try:
            event_loop.run(
                watch_served(
                    runner, sock, base=base, token=token, pace=pace, shown=link,
                    over=lambda summary: _over(runner, out_dir, summary),
                )
            )  # fmt: skip
        except KeyboardInterrupt:
            _interrupted(runner, out_dir)


def _over(runner: Runner, out_dir: Path, summary: RunSummary) -> None:
    from stratagem.experiments.play import ending

    end = ending(runner, out_dir)
    if "payoffs" in end:
        _say(out, f"game over: {end['scores']}  (stratagem show {out_dir} {end['episode']})")
    if summary.failed:
        raise StratagemError(f"the game did not finish: {summary.errors[0]}")


def _interrupted(runner: Runner, out_dir: Path) -> None:
    """Ctrl-C: after the end (the browser's viewer lingering), nothing is lost; before it, the
    episode is left unfinished with its steps so far, and the command exits 130."""
    from stratagem.experiments.play import ending

    end: dict[str, Any] = ending(runner, out_dir) if (out_dir / STORE_FILE).is_file() else {}
    if "payoffs" in end:
        return
    _say(err, f"interrupted: the game is left unfinished, its steps so far stored "
              f"(stratagem show {out_dir} {runner.specs[0].id})")  # fmt: skip
    raise typer.Exit(130)
