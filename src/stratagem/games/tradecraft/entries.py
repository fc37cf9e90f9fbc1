"""TradeCraft (seed-002 §2) as a built-in game: `tradecraft/<k>` is instance k of the study set."""

from __future__ import annotations

from stratagem.games.bounds import Rounds, bounded
from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.registry import register_game
from stratagem.games.tradecraft.game import DEFAULT_MAX_TURN, Fuel, Proposer, TradecraftGame
from stratagem.games.tradecraft.game import INSTANCES as TRADECRAFT_INSTANCES


@bounded("tradecraft")
def _tradecraft(
    setting: int = 0,
    rounds: Rounds = DEFAULT_MAX_TURN,
    scoring: str = "game_init",
    first_proposer: Proposer = 0,
    fuel_per_craft: Fuel = "1/8",
    fractional_amounts: bool = False,
) -> TradecraftGame:
    # seed-002 §2.4, §3.3: `tradecraft/<k>` is instance k of the 40-instance study set; the
    # experiment file's `rounds` is the turn limit (§2.7: 15, "study"; 30 as a sensitivity check).
    # `fractional_amounts`: may a proposal trade fractions (§2.6 says only "> 0"; default no).
    return TradecraftGame(
        setting, rounds, scoring, first_proposer, fuel_per_craft, fractional_amounts
    )


register_game(
    CatalogEntry(
        "tradecraft", TradecraftGame().description(), "seed-002 §2", "seed-002",
        _tradecraft, settings=TRADECRAFT_INSTANCES,
    )
)  # fmt: skip
