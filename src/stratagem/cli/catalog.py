"""Commands that list what can be played: games, strategies, architectures."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from stratagem.cli.common import app, out
from stratagem.games.catalog import GAMES
from stratagem.games.normal_form import NormalFormGame
from stratagem.strategies.registry import STRATEGIES, get_strategy


@app.command()
def games() -> None:
    """List the games of the catalog."""
    table = Table(title="games")
    for column in ("name", "players", "actions", "source", "description"):
        table.add_column(column)
    for entry in GAMES.values():
        game = entry.factory()
        actions = " / ".join(game.labels[0]) if isinstance(game, NormalFormGame) else "structured"
        table.add_row(entry.name, str(game.n_players), actions, entry.source, entry.description)
    out.print(table)


@app.command()
def strategies() -> None:
    """List the rule-based strategies and their classifiers."""
    table = Table(title="strategies (axl:<Name> plays any strategy of the axelrod library)")
    for column in ("name", "memory", "stochastic", "nice", "retaliating", "forgiving", "about"):
        table.add_column(column)
    for name in STRATEGIES:
        strategy = get_strategy(name)
        c = strategy.classifier
        doc = (type(strategy).__doc__ or "").strip().split(":")[0].splitlines()[0]
        table.add_row(
            name,
            "∞" if c.memory_depth == float("inf") else str(int(c.memory_depth)),
            *(
                "yes" if flag else "no"
                for flag in (c.stochastic, c.nice, c.retaliating, c.forgiving)
            ),
            doc,
        )
    out.print(table)


@app.command()
def architectures() -> None:
    """List the LLM agent architectures an agent entry's `kind` can name."""
    from stratagem.agents.registry import ARCHITECTURES

    table = Table("kind", "what it does")
    for arch in ARCHITECTURES.values():
        table.add_row(Text(arch.name), Text(arch.description))
    out.print(table)
