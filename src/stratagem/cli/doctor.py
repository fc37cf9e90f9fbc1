"""`stratagem doctor`: what is wrong with the install (`install_checks`) and with a results
directory's files, and what can be saved.

SQLite's integrity check runs on the store read-only; the finished episodes that still read back can
be written out (--export) and imported into a fresh store. The response cache and the rate-limit
state hold nothing that a run cannot rebuild, so they are safe to delete.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stratagem.cli.common import _say, app, listed, out
from stratagem.cli.store_paths import DEFAULT, store_to_read, stores_in
from stratagem.errors import StratagemError

REBUILDABLE = ("cache.db", "ratelimits.db")
"""The runner's response cache and rate-limit state: lost answers are asked again (and paid)."""


@app.command()
def doctor(
    directory: Annotated[
        Path | None,
        typer.Argument(
            help="A results directory or its stratagem.db: check that store only. Without it: "
            "the install, then every store under 'results'.",
            show_default=False,
        ),
    ] = None,
    export: Annotated[
        Path | None,
        typer.Option(
            help="Write the finished episodes that still read back to this JSONL file, for "
            "`stratagem import FILE --store NEW_DIR`."
        ),
    ] = None,
) -> None:
    """Check the install (Python, dependencies, extras, the embedded model, a browser, API keys)
    and the result stores under `results`; with a DIRECTORY, that store only (SQLite's integrity
    check) and what can be recovered from it.

    Exit status: 0 all is sound; 1 a store is damaged or the install cannot work (a missing
    dependency, a model that does not load); 2 bad input (an --export path that cannot be
    written).
    """
    if export is not None:
        _check_target(export)
    broken = False
    if directory is None and export is None:
        broken = _check_install()
        stores = _stores_under(DEFAULT)
    else:
        stores = [store_to_read(directory or DEFAULT)]
    damaged = [path for path in stores if not _check_store(path, export)]
    if broken or damaged:
        raise typer.Exit(1)


def _check_install() -> bool:
    """Print one line per install check; True when one found the install broken."""
    from stratagem.cli.install_checks import install_findings

    broken = False
    for finding in install_findings():
        _say(out, finding.line())
        broken |= finding.broken
    return broken


def _stores_under(directory: Path) -> list[Path]:
    """The stores a bare `doctor` checks: none yet is a line, not an error."""
    try:
        return stores_in(directory)
    except StratagemError:
        _say(out, f"{directory}: no result store yet (`stratagem run FILE` makes one)")
        return []


def _check_store(path: Path, export: Path | None) -> bool:
    """Say whether the store at `path` is sound and what it can still give; True when sound."""
    from stratagem.experiments.store import ResultStore

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
        return True
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
    return False


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
    except StratagemError:
        _say(out, _unreadable(path))
        return
    with db:
        try:
            db.experiments()
            db.episodes()
        except StratagemError:
            _say(out, _unreadable(path))
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


def _unreadable(path: Path) -> str:
    """What to do with a store from which nothing reads back (the line above said why): the
    store's own error would send the person to `doctor`, which is what they ran."""
    from stratagem.experiments.store import ResultStore

    cache = path.parent / REBUILDABLE[0]
    free = cache.is_file() and not ResultStore.integrity_problems(cache)
    replay = (
        f"; the calls already answered come from {cache} at no cost"
        if free
        else " (its model calls are made, and paid, again)"
    )
    return (
        f"nothing can be read back from {path}: move it aside (e.g. to {path.name}.damaged) and "
        f"run the experiment's file again to play its episodes in a new store there{replay}"
    )
