"""The cooperation mechanisms, registered as built-in games (`mechanisms.family`): each takes its
stage game as the option `stage`; `<mechanism>/<stage>` names are resolved by
`games.libraries`."""

from __future__ import annotations

from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.mechanisms.family import FAMILY, MECHANISMS, SOURCE, description
from stratagem.games.registry import register_game

for _name, (_factory, _) in MECHANISMS.items():
    register_game(CatalogEntry(_name, description(_name), SOURCE, FAMILY, _factory))
