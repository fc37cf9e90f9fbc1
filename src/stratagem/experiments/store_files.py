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
    """Every store `path` names (several only for a directory of results directories)."""
    direct = direct_store(path)
    if direct.is_file():
        return [direct]
    below = sorted(path.glob(f"*/{STORE_FILE}")) if path.is_dir() else []
    if not path.exists():
        raise StratagemError(f"result store '{path}' does not exist")
    if not below:
        raise StratagemError(
            f"no result store at '{path}' (no {STORE_FILE} there); `stratagem run FILE` makes "
            "one, or name a results directory"
        )
    return below
