"""The one way every command names a result store: a results directory or its `stratagem.db`,
`results` by default. `run` writes `results/<name>/stratagem.db` and a tournament
`results/stratagem.db`, so reading the default finds the store in `results` and those of the
results directories under it: one is read, several are listed for the person to name one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Annotated

import typer

from stratagem.errors import StratagemError
from stratagem.experiments.lock import LOCK_FILE, WriterLock
from stratagem.experiments.store import ResultStore
from stratagem.experiments.store_files import STORE_FILE, direct_store, one_store, stores_in

__all__ = ["DEFAULT", "STORE_FILE", "StoreArg", "StoreOption", "store_to_read", "stores_in"]

DEFAULT = Path("results")
HELP = (
    "A results directory or its stratagem.db file; 'results' (the default) means the store there "
    "and those of the results directories under it (one, or name it)."
)

StoreArg = Annotated[Path, typer.Argument(help=HELP, show_default=True)]
StoreOption = Annotated[Path, typer.Option("--store", help=HELP)]


def store_to_read(path: Path) -> Path:
    """The one store `path` names; several are an error that lists them."""
    return one_store(path)


def store_to_write(path: Path) -> Path:
    """The store file `path` names, created if need be."""
    return direct_store(path)


@contextmanager
def writing(path: Path, *, undo_if_empty: bool = False) -> Iterator[ResultStore]:
    """The store `path` names, open for writing, with its directory's writer lock held: one
    writer per results directory, whether it runs, imports or stores a tournament.

    With `undo_if_empty`, a store this call creates is removed again when the block fails with
    no episode stored (its file, its lock, the directories made for it): an import that imports
    nothing leaves nothing behind. A store that existed before is never touched."""
    file = store_to_write(path)
    made = _not_there(file) if undo_if_empty else []
    undo = False
    try:
        with WriterLock(file.parent), ResultStore(file) as store:
            try:
                yield store
            except BaseException:
                undo = bool(made) and not any(store.status_counts().values())
                raise
    finally:
        if undo:
            _remove(made)


def _not_there(file: Path) -> list[Path]:
    """What opening the store `file` for writing would create, to remove in this order: none if
    it exists, else the file and its SQLite side files, the writer lock, then the missing
    directories above it, deepest first."""
    if file.exists():
        return []
    side = [file.with_name(file.name + end) for end in ("", "-wal", "-shm", "-journal")]
    made = [p for p in [*side, file.parent / LOCK_FILE] if not p.exists()]
    folder = file.parent
    while not folder.exists():
        made.append(folder)
        folder = folder.parent
    return made


def _remove(paths: list[Path]) -> None:
    """Remove what `_not_there` listed; a directory only if empty (someone else's file stays)."""
    for path in paths:
        with suppress(OSError):
            if path.is_dir():
                path.rmdir()
            else:
                path.unlink(missing_ok=True)


def require_file(path: Path, what: str) -> None:
    if not path.is_file():
        raise StratagemError(f"{what} '{path}' does not exist")
