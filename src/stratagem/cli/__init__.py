"""The `stratagem` command: parses arguments, calls the layers, prints. No logic of its own.

Errors a user can cause are `StratagemError`s: printed on one line, exit status 2, no traceback.
One module per group of commands; importing them registers their commands on `app`.
"""

from __future__ import annotations

import sqlite3
import sys
from types import TracebackType

from rich.text import Text

from stratagem.cli import (
    catalog,
    doctor,
    examples,
    magic,
    planning,
    play,
    plugin_list,
    rescore,
    running,
    scaffold,
    stores,
    strategy_runs,
    view,
)
from stratagem.cli.common import app, err, fit_consoles
from stratagem.errors import StratagemError
from stratagem.experiments.store_base import damage_message, is_damage

__all__ = ["app", "main"]
_COMMANDS = (
    catalog,
    strategy_runs,
    running,
    planning,
    play,
    stores,
    doctor,
    examples,
    magic,
    view,
    plugin_list,
    scaffold,
    rescore,
)


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit status 2."""
    # Usage errors (unknown option, bad value) are typer's own: it prints them and exits 2.
    fit_consoles()
    try:
        app(args=argv)
    except StratagemError as exc:
        _fail(str(exc))
    except sqlite3.DatabaseError as exc:  # met outside the store's own reporting (cache, limits)
        path = _sqlite_file(exc.__traceback__)
        if is_damage(exc):
            _fail(damage_message(path or "a SQLite file", exc))
        _fail(f"{path or 'a SQLite file'}: {exc}")


def _fail(message: str) -> None:
    err.print(Text("error: ", style="bold red") + Text(message), soft_wrap=True)
    sys.exit(2)


def _sqlite_file(tb: TracebackType | None) -> str | None:
    """The file of the innermost object on the traceback that names one (a store, the cache, the
    rate limiter all keep theirs in `path`)."""
    found = None
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        path = getattr(owner, "path", None)
        if isinstance(path, str) and path:
            found = path
        tb = tb.tb_next
    return found
