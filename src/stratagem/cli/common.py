"""What every command shares: the Typer app, the two consoles, store paths and the cell table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from stratagem.errors import StratagemError
from stratagem.experiments.store import ResultStore

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Measure how LLM-based agents reason and behave in strategic games.",
    pretty_exceptions_show_locals=False,  # locals may hold secrets (API keys) in later layers
)
# Wide enough for the tables when the output is a file or a pipe (rich assumes 80 columns there).
out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

DEFAULT_STORE = Path("results/stratagem.db")

StrategyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--strategy", "-s", help="A strategy, e.g. TitForTat or 'Random(0.3)'; repeat the option."
    ),
]
GameOption = Annotated[str, typer.Option("--game", "-g", help="A matrix game of the catalog.")]
SeedOption = Annotated[int, typer.Option(help="Seed of every random draw.")]
NoiseOption = Annotated[float, typer.Option(help="Probability that an action is flipped.")]


def _say(console: Console, text: str) -> None:
    """User, model and server text, printed as written (no markup, no highlighting)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _store_path(path: Path) -> Path:
    """A results directory's store, or a store file given directly."""
    from stratagem.experiments.runner import STORE_FILE

    file = path / STORE_FILE if path.is_dir() else path
    _require_file(file, "store")
    return file


def _print_cells(db: ResultStore, experiment: str) -> None:
    from stratagem.analysis.cells import cell_table

    cells = cell_table(db, experiment)
    if not cells:
        return
    table = Table(title=f"{experiment}: player 0 per cell (mean over episodes)")
    for column in ("model", "agent", "game", "opponent", "rounds", "episodes"):
        table.add_column(column)
    for column in ("score", "opp. score", "cooperation", "invalid"):
        table.add_column(column, justify="right")
    for c in cells:
        cooperation = "-" if c.cooperation is None else f"{c.cooperation:.2f}"
        table.add_row(
            c.model, c.agent, c.game, c.opponent, str(c.rounds), str(c.episodes),
            f"{c.score:.1f}", f"{c.opponent_score:.1f}", cooperation, f"{c.invalid_rate:.2f}",
        )  # fmt: skip
    out.print(table)


StoreOption = Annotated[Path, typer.Option(help="The SQLite result store.")]


def _require_file(path: Path, what: str) -> None:
    if not path.is_file():
        raise StratagemError(f"{what} '{path}' does not exist")
