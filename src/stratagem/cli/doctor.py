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

    Exit status: 0 the store is sound; 1 it is damaged.
    """
    from stratagem.experiments.store import ResultStore

    path = store_to_read(directory)
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


def _salvage(path: Path, target: Path) -> None:
    from stratagem.experiments.episode_export import export_readable
    from stratagem.experiments.store import ResultStore

    try:
        with ResultStore(path) as db:
            salvage = export_readable(db, target)
    except StratagemError as exc:
        _say(out, f"nothing can be read back: {exc}")
        return
    lost = len(salvage.unreadable)
    _say(
        out,
        f"exported {salvage.exported} of {salvage.finished} finished episodes to {target}"
        + (f"; {lost} no longer read back: {', '.join(salvage.unreadable[:5])}" if lost else ""),
    )
