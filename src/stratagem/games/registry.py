"""The games by name: stratagem's own families and every plugin's, registered one way.

Each built-in family registers its named games in a module of its own (`games/matrix/entries.py`,
...), imported the first time a game is looked up, through `register_game`, the function a
plugin reaches through `stratagem.register.game`. A plugin's games are `<namespace>:<name>`.
"""

from __future__ import annotations

import dataclasses

from stratagem.games.catalog_entry import CatalogEntry
from stratagem.plugins import Registry

BUILTIN_MODULES = (
    "stratagem.games.matrix.entries",
    "stratagem.games.magic.entries",
    "stratagem.games.tradecraft.entries",
    "stratagem.games.extra_entries",
    "stratagem.games.mechanisms.entries",
)
"""stratagem's own game families, in listing order."""

GAMES: Registry[CatalogEntry] = Registry("game", BUILTIN_MODULES)
"""Every named game: built-in names in listing order, then plugins' names as they load."""


def register_game(entry: CatalogEntry) -> CatalogEntry:
    """Register a named game; while a plugin loads, its name becomes `<namespace>:<name>`.
    Returns the entry as registered (with its full name)."""
    name = GAMES.add(entry.name, entry)
    if name == entry.name or GAMES.get(name) is not entry:  # the name's first owner keeps it
        return entry if name == entry.name else dataclasses.replace(entry, name=name)
    full = dataclasses.replace(entry, name=name)
    GAMES.replace(name, full)
    return full
