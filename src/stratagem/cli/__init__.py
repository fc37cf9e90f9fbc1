"""The `stratagem` command: parses arguments, calls the layers, prints. No logic of its own.

Errors a user can cause are `StratagemError`s: printed on one line, exit status 2, no traceback.
One module per group of commands; importing them registers their commands on `app`.
"""

from __future__ import annotations

import sys

from stratagem.cli import catalog, running, stores, strategy_runs
from stratagem.cli.common import app, err
from stratagem.errors import StratagemError

__all__ = ["app", "main"]
_COMMANDS = (catalog, strategy_runs, running, stores)


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit status 2."""
    # Usage errors (unknown option, bad value) are typer's own: it prints them and exits 2.
    try:
        app(args=argv)
    except StratagemError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
