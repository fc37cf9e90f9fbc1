"""The one way every command names a result store: a results directory or its `stratagem.db`,
`results` by default. `run` writes `results/<name>/stratagem.db` and a tournament
`results/stratagem.db`, so reading the default finds the store in `results` and those of the
results directories under it: one is read, several are listed for the person to name one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from stratagem.errors import StratagemError
from stratagem.experiments.lock import WriterLock
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
def writing(path: Path) -> Iterator[ResultStore]:
    """The store `path` names, open for writing, with its directory's writer lock held: one
    writer per results directory, whether it runs, imports or stores a tournament."""
    file = store_to_write(path)
    with WriterLock(file.parent), ResultStore(file) as store:
        yield store


def require_file(path: Path, what: str) -> None:
    if not path.is_file():
        raise StratagemError(f"{what} '{path}' does not exist")
