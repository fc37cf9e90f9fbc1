"""What every command shares: the Typer app, the two consoles, the options and the cell table.

Every piece of user, model or server text is printed without markup interpretation (`_say`, `Text`
cells): a name like `[/x]` must neither crash the command nor restyle the terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from stratagem.cli.shipped import DOCS, shipped
from stratagem.cli.tables import Col, fitted_table
from stratagem.experiments.limits import check_seed
from stratagem.experiments.store import ResultStore

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
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

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
