"""Commands that list what can be played: games, strategies, architectures.

Names a user types next (a game, a strategy, an alias) are printed whole, on one line; the
descriptions wrap, and a narrow terminal drops the least useful columns first."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from rich.text import Text

from stratagem import plugins
from stratagem.cli.common import PluginOption, app, load_every_plugin, out, use_plugins, warn
from stratagem.cli.tables import Col, fitted_table
from stratagem.errors import StratagemError
from stratagem.games import openspiel, settings_data, textarena
from stratagem.games.catalog import GAMES, CatalogEntry, rule_options
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.registry import (
    ALIASES,
    GAME_BOTS,
    STRATEGIES,
    get_strategy,
)

T = TypeVar("T")

GAME_COLUMNS = (
    Col("name", keep=9, wrap=False),
    Col("players", keep=4, justify="right", wrap=False),
    Col("actions", keep=6, least=11),
    Col("run", keep=8, wrap=False),
    Col("tournament", keep=7, wrap=False),
    Col("source", keep=1),
    Col("description", keep=5, least=20),
)


@app.command()
def games(plugin: PluginOption = None) -> None:
    """List the games of the catalog and of the plugins, and the commands that play them."""
    use_plugins(plugin)
    load_every_plugin()
    built = {name: _built(name, partial(_game_row, entry)) for name, entry in GAMES.items()}
    rows = [row for row in built.values() if row is not None]
    rows.extend(_openspiel_rows())
    rows.extend(
        [f"{textarena.PREFIX}{env_id}", str(players), "free text", "yes", "no", "TextArena", about]
        for env_id, (players, about) in textarena.CURATED.items()
    )
    out.print(fitted_table(GAME_COLUMNS, rows, out.width, title=Text("games")))
    out.print(
        Text(
            "run: every game, in an experiment file's games or line-ups; tournament and moran: "
            "2-player matrix games (--game)."
        )
    )
    out.print(
        Text(
            f"{openspiel.PREFIX}<game string>: any OpenSpiel game, parameters included "
            f"({openspiel.PREFIX}goofspiel(num_cards=5)); those above are a few. Bots: "
            "openspiel-random, openspiel-mcts:<simulations>. Needs pip install "
            "'stratagem[openspiel]'."
        )
    )
    out.print(
        Text(
            f"{textarena.PREFIX}<env id>: any TextArena environment (those above play offline; "
            "many others fetch word lists or call a judge model over the network); options: "
            "players, max_steps. Needs pip install 'stratagem[textarena]'."
        )
    )
    ruled = [
        f"{name}: {', '.join(rule_options(name))}"
        for name, row in built.items()
        if row is not None and rule_options(name)
    ]
    out.print(Text(f"rule options (an experiment file's game_options): {'; '.join(ruled)}."))


def _game_row(entry: CatalogEntry) -> list[str]:
    game = entry.factory()
    matrix = game if isinstance(game, NormalFormGame) else None
    stage = matrix or game.matrix()  # a repeated game's moves are its stage game's
    actions = " / ".join(stage.labels[0]) if stage else "structured"
    if entry.settings is not None:
        played = len(settings_data.selected(entry.settings))
        every = len(settings_data.settings(entry.settings))
        actions += f"; {played} settings" + (f" ({every} in all)" if every > played else "")
    in_tournament = matrix is not None and matrix.n_players == 2
    return [
        entry.name, str(game.n_players), actions, "yes",
        "yes" if in_tournament else "no", entry.source, entry.description,
    ]  # fmt: skip


def _built(name: str, make: Callable[[], T]) -> T | None:
    """What `make` builds; for a plugin's name, a failure is a warning line and the name is left
    out of the listing (a built-in's failure is stratagem's bug, and raises)."""
    if plugins.split(name)[0] is None:
        return make()
    try:
        return make()
    except Exception as exc:  # a plugin's own bug must not end the listing
        text = " ".join(str(exc).split()) or "(no message)"
        warn(f"'{name}' is not listed: {type(exc).__name__}: {text}")
        return None


def _openspiel_rows() -> list[list[str]]:
    """A few OpenSpiel games, where OpenSpiel is installed (any game string works)."""
    rows = []
    for string, about in openspiel.CURATED.items():
        try:
            game = openspiel.load(string)
        except StratagemError:
            return []  # OpenSpiel is not installed: the note under the table says how
        rows.append(
            [f"{openspiel.PREFIX}{string}", str(game.n_players), "legal moves",
             "yes", "no", "OpenSpiel", about]
        )  # fmt: skip
    return rows


STRATEGY_COLUMNS = (
    Col("name", keep=9, wrap=False),
    Col("also", keep=8),
    Col("memory", keep=2, justify="right", wrap=False),
    Col("stochastic", keep=1, wrap=False),
    Col("nice", keep=1, wrap=False),
    Col("retaliating", keep=1, wrap=False),
    Col("forgiving", keep=1, wrap=False),
    Col("about", keep=7, least=20),
)


LONG_ALIAS = 12
"""Aliases longer than this are listed under the strategies table, not in it."""


def _form(name: str, factory: Callable[..., object]) -> str:
    """How the strategy is typed: `Random(p)`, `Pattern(a, b, ...)`, or the bare name."""
    params = list(inspect.signature(factory).parameters.values())
    if not params:
        return name
    if params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return f"{name}(a, b, ...)"
    return f"{name}({', '.join(p.name for p in params)})"


@app.command()
def strategies(plugin: PluginOption = None) -> None:
    """List the rule-based strategies (the plugins' too), the other names they answer to, and
    their classifiers."""
    use_plugins(plugin)
    load_every_plugin()
    aliases: dict[str, list[str]] = {}
    bots = []  # seed-003's long bot names, listed under the table so no column has to fold them
    for alias, target in ALIASES.items():
        if len(alias) > LONG_ALIAS:
            bots.append(f"{alias} = {target}")
        else:
            aliases.setdefault(target, []).append(alias)
    rows = []
    for name, factory in STRATEGIES.items():
        strategy = _built(name, partial(get_strategy, name))
        if strategy is None:
            continue
        c = strategy.classifier
        doc = (type(strategy).__doc__ or "").strip().split(":")[0].splitlines()[0]
        rows.append(
            [
                _form(name, factory),
                " ".join(aliases.get(name, [])),
                "∞" if c.memory_depth == float("inf") else str(int(c.memory_depth)),
                *("yes" if flag else "no" for flag in (c.stochastic, c.nice, c.retaliating,
                                                       c.forgiving)),
                doc,
            ]
        )  # fmt: skip
    out.print(fitted_table(STRATEGY_COLUMNS, rows, out.width, title=Text("strategies")))
    out.print(
        Text(
            f"Also: {', '.join(bots)}. Bots of whole games, seated like strategies: "
            f"{', '.join(_form(name, factory) for name, factory in GAME_BOTS.items())}. "
            "Names and aliases ignore case, spaces, '-' and '_'; "
            "arguments go in parentheses, e.g. 'Random(0.3)'. axl:<Name> plays any strategy of "
            "the axelrod library."
        )
    )


@app.command()
def architectures(plugin: PluginOption = None) -> None:
    """List the LLM agent architectures (the plugins' too) an agent entry's `kind` can name."""
    from stratagem.agents.registry import ARCHITECTURES

    use_plugins(plugin)
    load_every_plugin()

    columns = (Col("kind", keep=2, wrap=False), Col("what it does", keep=1))
    rows = [[arch.name, arch.description] for arch in ARCHITECTURES.values()]
    out.print(fitted_table(columns, rows, out.width))
