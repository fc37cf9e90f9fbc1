"""`stratagem examples`: the example experiments written out of the package, for an install that
has no checkout (a wheel) as much as for one that does."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stratagem.cli.common import _say, app, listed, out
from stratagem.cli.shipped import example_files
from stratagem.errors import StratagemError


@app.command()
def examples(
    directory: Annotated[
        Path, typer.Argument(help="Folder to write them into (made if need be).")
    ] = Path("examples"),
) -> None:
    """Write the example experiments (the quickstart, each study's full and offline grid, other
    providers) into a folder; an existing file is never overwritten."""
    found = example_files()
    if not found:
        raise StratagemError("this install holds no example experiments (a damaged install?)")
    if directory.exists() and not directory.is_dir():
        raise StratagemError(f"'{directory}' is a file; name a folder to write the examples into")
    taken = [str(directory / f.name) for f in found if (directory / f.name).exists()]
    if taken:
        raise StratagemError(
            f"{listed(taken)} already exist{'s' if len(taken) == 1 else ''}; nothing written "
            "(name another folder, or move them away)"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for f in found:
            (directory / f.name).write_bytes(f.read_bytes())
    except OSError as exc:
        raise StratagemError(
            f"cannot write the examples to '{directory}': {exc.strerror}"
        ) from None
    _say(out, f"wrote {len(found)} example experiments to {directory}")
    _say(out, f"start with: stratagem run {directory / 'quickstart.yaml'}")
