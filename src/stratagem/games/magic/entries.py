"""MAgIC's five games (seed-004 §3) as built-in games, each with its settings file."""

from __future__ import annotations

from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.magic.chameleon import ChameleonGame
from stratagem.games.magic.cost_sharing import CostSharingGame
from stratagem.games.magic.magic_dilemma import magic_npd3
from stratagem.games.magic.public_good import magic_public_good
from stratagem.games.magic.undercover import UndercoverGame
from stratagem.games.registry import register_game

_S4 = "seed-004"

for _entry in [
    CatalogEntry(
        "npd3", magic_npd3().description(), f"{_S4} §3.4", _S4, magic_npd3, (5,),
        settings="npd3",
    ),
    CatalogEntry(
        "public-good", magic_public_good().description(), f"{_S4} §3.5", _S4,
        magic_public_good, settings="public-good",
    ),
    CatalogEntry(
        "cost-sharing", CostSharingGame().description(), f"{_S4} §3.3", _S4, CostSharingGame,
        settings="cost-sharing",
    ),
    CatalogEntry(
        "chameleon", ChameleonGame().description(), f"{_S4} §3.1", _S4, ChameleonGame,
        settings="chameleon",
    ),
    CatalogEntry(
        "undercover", UndercoverGame().description(), f"{_S4} §3.2", _S4, UndercoverGame,
        settings="undercover",
    ),
]:  # fmt: skip
    register_game(_entry)
