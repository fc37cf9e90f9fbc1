"""What every command shares: the Typer app, the two consoles, the options and the cell table.

Every piece of user, model or server text is printed without markup interpretation (`_say`, `Text`
cells): a name like `[/x]` must neither crash the command nor restyle the terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from stratagem import plugins
from stratagem.cli.shipped import DOCS, shipped
from stratagem.cli.tables import Col, fitted_table
from stratagem.errors import StratagemError
from stratagem.experiments.limits import check_seed
from stratagem.experiments.plugin_names import name_plugin
from stratagem.experiments.store import ResultStore
from stratagem.experiments.store_files import stores_in
from stratagem.experiments.store_plugins import (
    check_store_provenance,
    failed_line,
    load_named,
    use_stored_plugins,
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    # Plain help: fits any width, and flags are not labelled `<bool>` as rich help labels them.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Measure how LLM-based agents reason and behave in strategic games.",
    epilog=(
        f"Documentation: {shipped(DOCS) / 'index.md'} (installed with the package: each "
        "docs/*.md a help text names is in that folder). Example experiments: `stratagem "
        "examples DIR` writes them, then `stratagem run DIR/quickstart.yaml`. `stratagem doctor` "
        "checks the install."
    ),
    pretty_exceptions_show_locals=False,  # locals may hold secrets (API keys) in later layers
)
# No emoji codes: a plugin's names hold colons (`thinker:notes:thinker/40`), which rich would
# otherwise print as `thinker🎶thinker/40`.
out = Console(highlight=False, emoji=False)
err = Console(stderr=True, highlight=False, emoji=False)

PIPE_WIDTH = 160
"""Width of tables written to a file or a pipe when COLUMNS does not say (rich would use 80)."""


def fit_consoles() -> None:
    """Size both consoles for this invocation: COLUMNS when set, else the terminal, else (piped)
    `PIPE_WIDTH` for stdout, so tables in a log file are not squeezed."""
    columns = os.environ.get("COLUMNS", "")
    for console, stream in ((out, sys.stdout), (err, sys.stderr)):
        if columns.isdigit() and int(columns) > 0:
            console.width = int(columns)
        elif stream.isatty():
            console.width = os.get_terminal_size(stream.fileno()).columns
        else:
            console.width = PIPE_WIDTH if console is out else 80


def _version(show: bool) -> None:
    if show:
        try:
            number = version("stratagem")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            number = "unknown"
        _say(out, f"stratagem {number}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Measure how LLM-based agents reason and behave in strategic games."""


StrategyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--strategy", "-s", help="A strategy, e.g. TitForTat or 'Random(0.3)'; repeat the option."
    ),
]
GameOption = Annotated[
    str, typer.Option("--game", "-g", help="A 2-player matrix game of the catalog.")
]


def checked_seed(value: int | None) -> int | None:
    """A `--seed` as `stratagem.env(...).reset(seed=...)` takes one (0 to `MAX_SEED`), else a
    one-line error: the callback of every command's `--seed`."""
    return None if value is None else check_seed("--seed", value)


SeedOption = Annotated[int, typer.Option(help="Seed of every random draw.", callback=checked_seed)]
NoiseOption = Annotated[float, typer.Option(help="Probability that an action is flipped.")]


PluginOption = Annotated[
    list[str] | None,
    typer.Option(
        "--plugin",
        metavar="MODULE_OR_FILE",
        help="A plugin whose names (<plugin>:<name>) this command may use: a module, or a .py "
        "file relative to the current directory; repeat the option. `stratagem plugins` lists "
        "those found.",
    ),
]
"""Every command that resolves names takes it; `use_plugins` names what it gives."""


def use_plugins(specs: Sequence[str] | None, *, load: bool = False) -> list[str]:
    """Name each `--plugin` (imported when one of its names is resolved; with `load`, now) and
    return them as an experiment stores them. With plugins off, they are ignored with one
    warning line."""
    if not specs:
        return []
    if not plugins.enabled():
        warn(f"plugins are off ({plugins.ENV_NO_PLUGINS}=1): --plugin ignored")
        return []
    forms = [name_plugin(spec, "command line") for spec in specs]
    if load:
        for line in load_named(forms):
            warn(line)
    return forms


def use_plugins_of(paths: Iterable[Path], *, load: bool = False) -> None:
    """Name the plugins the experiments stored under `paths` (results directories, store files
    or folders of them) were run with; one warning line for each that cannot be named, and one
    for each plugin their episodes were made with that is missing or another version
    (`experiments.provenance`)."""
    stores: list[Path] = []
    for path in paths:
        try:
            stores += stores_in(path)
        except StratagemError:
            continue  # the command says what is wrong with the path
    for line in use_stored_plugins(stores, load=load):
        warn(line)
    for line in check_store_provenance(stores):
        warn(line)


def load_every_plugin() -> None:
    """Import every plugin found, for a listing of names: a plugin that fails is one warning line
    on stderr, and its names are missing from the listing."""
    for plugin in plugins.load_all():
        if plugin.error is not None:
            warn(f"{failed_line(plugin)}; its names are not listed")


def warn(text: str) -> None:
    """A one-line warning on stderr (plugin and user text printed as written)."""
    _say(err, f"warning: {text}")


def _say(console: Console, text: str) -> None:
    """User, model and server text, printed as written (no markup, no highlighting)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def listed(items: Sequence[str], shown: int = 3) -> str:
    """The first `shown` items joined by `; `, and how many more there are."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return "; ".join(items[:shown]) + more


CELL_COLUMNS = (
    Col("model", keep=9),
    Col("agent", keep=8),
    Col("game", keep=7),
    Col("opponent", keep=6),
    Col("rounds", keep=4, justify="right", wrap=False),
    Col("eps.", keep=1, justify="right", wrap=False),
    Col("score", keep=10, justify="right", wrap=False),
    Col("opp.", keep=3, justify="right", wrap=False),
    Col("coop.", keep=5, justify="right", wrap=False),
    Col("invalid", keep=2, justify="right", wrap=False),
)
"""The results table: `keep` orders which columns a narrow terminal drops first (lowest first)."""


def _print_cells(db: ResultStore, experiment: str) -> None:
    from stratagem.analysis.cells import cell_table

    cells = cell_table(db, experiment)
    if not cells:
        return
    rows = [
        [
            c.model, c.agent, c.game, c.opponent, str(c.rounds), str(c.episodes),
            f"{c.score:.1f}", f"{c.opponent_score:.1f}",
            "-" if c.cooperation is None else f"{c.cooperation:.2f}",
            "-" if c.llm_invalid_rate is None else f"{c.llm_invalid_rate:.2f}",
        ]
        for c in cells
    ]  # fmt: skip
    title = Text(
        f"{experiment}: player 0 per cell (mean over episodes); invalid: every LLM seat's moves"
    )
    out.print(fitted_table(CELL_COLUMNS, rows, out.width, title=title))
