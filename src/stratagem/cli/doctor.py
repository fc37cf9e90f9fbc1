"""`stratagem doctor`: what is wrong with a results directory's files and what can be saved.

SQLite's integrity check runs on the store read-only; the finished episodes that still read back can
be written out (--export) and imported into a fresh store. The response cache and the rate-limit
state hold nothing that a run cannot rebuild, so they are safe to delete.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stratagem.cli.common import _say, app, listed, out
from stratagem.cli.store_paths import DEFAULT, StoreArg, store_to_read
from stratagem.errors import StratagemError

REBUILDABLE = ("cache.db", "ratelimits.db")
"""The runner's response cache and rate-limit state: lost answers are asked again (and paid)."""


@app.command()
def doctor(
    directory: StoreArg = DEFAULT,
    export: Annotated[
        Path | None,
        typer.Option(
            help="Write the finished episodes that still read back to this JSONL file, for "
            "`stratagem import FILE --store NEW_DIR`."
        ),
    ] = None,
) -> None:
    """Check a results directory's store (SQLite's integrity check) and say what can be recovered.

    Exit status: 0 the store is sound; 1 it is damaged; 2 bad input (an --export path that
    cannot be written).
    """
    from stratagem.experiments.store import ResultStore

    path = store_to_read(directory)
    if export is not None:
        _check_target(export)
    problems = ResultStore.integrity_problems(path)
    for name in REBUILDABLE:
        other = path.parent / name
        if other.is_file():
            verdict = "sound" if not ResultStore.integrity_problems(other) else "damaged"
            _say(out, f"{other}: {verdict}; safe to delete (a run rebuilds it)")
    if not problems:
        _say(out, f"{path}: sound (SQLite integrity check: ok)")
        if export is not None:
            _salvage(path, export)
        return
    _say(out, f"{path}: damaged ({listed(problems)})")
    if export is None:
        _say(
            out,
            f"recover: `stratagem doctor {path.parent} --export saved.jsonl` writes the finished "
            "episodes that still read back; `stratagem import saved.jsonl --store NEW_DIR` puts "
            "them in a new store, and re-running the experiment there plays the rest",
        )
    else:
        _salvage(path, export)
    raise typer.Exit(1)


def _check_target(target: Path) -> None:
    """Refuse an --export path that can never be a file, before anything is read or written."""
    if target.is_dir():
        raise StratagemError(f"--export {target}: is a directory; name the JSONL file to write")
    above = next((p for p in target.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise StratagemError(f"--export {target}: {above} is a file, not a directory")


def _salvage(path: Path, target: Path) -> None:
    from stratagem.experiments.episode_export import export_readable
    from stratagem.experiments.store import ResultStore

    try:
        db = ResultStore(path)
    except StratagemError as exc:
        _say(out, f"nothing can be read back: {exc}")
        return
    with db:
        try:
            db.experiments()
            db.episodes()
        except StratagemError as exc:
            _say(out, f"nothing can be read back: {exc}")
            return
        # The store reads: an error now is the target's (it cannot be written), so it is
        # raised as bad input, never reported as a store that reads nothing.
        salvage = export_readable(db, target)
    lost = len(salvage.unreadable)
    _say(
        out,
        f"exported {salvage.exported} of {salvage.finished} finished episodes to {target}"
        + (f"; {lost} no longer read back: {', '.join(salvage.unreadable[:5])}" if lost else ""),
    )
