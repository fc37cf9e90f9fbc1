"""Games of other libraries, named `<library>:<game string>` (`openspiel:kuhn_poker`,
`textarena:TicTacToe-v0`): any game string resolves to a catalog entry wherever a catalog name
does, so a new game of either library needs no new code (issue 27). A library is one resolver
registered by its prefix."""

from __future__ import annotations

from collections.abc import Callable

from stratagem.games import openspiel, textarena
from stratagem.games.base import Game
from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.mechanisms import family as mechanisms


def _openspiel(name: str) -> CatalogEntry:
    """`openspiel:<game string>`: any game OpenSpiel loads, parameters included."""
    game = openspiel.load(name.removeprefix(openspiel.PREFIX))
    return CatalogEntry(name, game.description(), "OpenSpiel", "openspiel", lambda: game)


def _textarena(name: str) -> CatalogEntry:
    """`textarena:<env id>`: any TextArena environment; the library is loaded when it is built."""
    env_id = name.removeprefix(textarena.PREFIX)
    about = textarena.CURATED.get(env_id, (0, "a TextArena environment"))[1]

    def build(players: int = 0, max_steps: int = textarena.DEFAULT_MAX_STEPS) -> Game:
        return textarena.TextArenaGame(env_id, players, max_steps)

    return CatalogEntry(name, f"TextArena: {about}", "TextArena", "textarena", build)


LIBRARIES: dict[str, Callable[[str], CatalogEntry]] = {
    openspiel.PREFIX: _openspiel,
    textarena.PREFIX: _textarena,
    **{f"{name}/": mechanisms.staged_entry for name in mechanisms.MECHANISMS},
}
"""Name prefix -> the entry of any game string of that library (`stratagem games` lists a few);
a cooperation mechanism over a stage game of the catalog (`contracting/sh`) too."""


def library_entry(name: str) -> CatalogEntry | None:
    """The entry of another library's game string (`openspiel:chess`); None for other names."""
    for prefix, resolve in LIBRARIES.items():
        if name.startswith(prefix):
            return resolve(name)
    return None


def is_library_name(name: str) -> bool:
    """Whether `name` names another library's game (by its prefix; the game is not loaded)."""
    return name.startswith(tuple(LIBRARIES))
