"""OpenSpiel's games (the `open_spiel` package) as stratagem games: `openspiel:<game string>`.

Any game string OpenSpiel loads works, parameters included; `CURATED` lists a few for `stratagem
games`.
"""

from __future__ import annotations

import functools

from stratagem.games.openspiel.game import OpenSpielGame, OpenSpielObservation, OpenSpielState
from stratagem.games.openspiel.loader import PREFIX

CURATED: dict[str, str] = {
    "tic_tac_toe": "Tic-tac-toe: 3x3 board, perfect information",
    "connect_four": "Connect Four: 7x6 board, four in a row wins",
    "kuhn_poker": "Kuhn poker: 3 cards, one private card each, one betting round",
    "leduc_poker": "Leduc poker: 6 cards, a private and a public card, two betting rounds",
    "goofspiel(num_cards=5)": "Goofspiel: simultaneous bids for point cards drawn by chance",
    "liars_dice": "Liar's dice: private dice, bids and a call",
    "matrix_pd": "Prisoner's dilemma as a one-shot simultaneous matrix game",
    "chess": "Chess: moves in standard algebraic notation, the board in FEN",
}
"""Game strings `stratagem games` lists (OpenSpiel game string -> description); any other works."""


@functools.lru_cache(maxsize=64)
def load(game_string: str) -> OpenSpielGame:
    """A game string's game, loaded once per process (OpenSpiel games are immutable)."""
    return OpenSpielGame(game_string)


__all__ = ["CURATED", "PREFIX", "OpenSpielGame", "OpenSpielObservation", "OpenSpielState", "load"]
