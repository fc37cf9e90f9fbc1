"""Where the result stores a path names are: a results directory, its `stratagem.db`, or a
folder of results directories. Every command and the viewer find them the same way."""

from __future__ import annotations

from pathlib import Path

from stratagem.errors import StratagemError

STORE_FILE = "stratagem.db"
"""The store's name inside a results directory (the runner's `STORE_FILE`)."""


def direct_store(path: Path) -> Path:
    """The store file `path` names itself: the file, or the one inside the directory."""
    return path if path.is_file() or path.suffix == ".db" else path / STORE_FILE


def stores_in(path: Path) -> list[Path]:
    """Every store `path` names: its own and those of the results directories under it (a
    tournament writes `results/stratagem.db` itself, a run `results/<name>/stratagem.db`; both
    are listed, so one never hides the other)."""
    direct = direct_store(path)
    if direct.is_file() and not path.is_dir():
        return [direct]
    below = sorted(path.glob(f"*/{STORE_FILE}")) if path.is_dir() else []
    if direct.is_file():
        return [direct, *below]
    if not path.exists():
        raise StratagemError(f"result store '{path}' does not exist")
    if not below:
        raise StratagemError(
            f"no result store at '{path}' (no {STORE_FILE} there); `stratagem run FILE` makes "
            "one, or name a results directory"
        )
    return below


def store_name(store: Path) -> str:
    """How a person names `store` to pick it: its results directory, or the file itself where
    that directory also holds others (a store directly in `results`)."""
    return str(store.parent) if not any(store.parent.glob(f"*/{STORE_FILE}")) else str(store)


def one_store(path: Path) -> Path:
    """The one store `path` names; several are an error that lists how to name each."""
    found = stores_in(path)
    if len(found) > 1:
        names = ", ".join(store_name(p) for p in found[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        raise StratagemError(f"'{path}' holds {len(found)} result stores ({names}{more}): name one")
    return found[0]
