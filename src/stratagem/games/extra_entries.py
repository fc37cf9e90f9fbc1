"""Built-in games not from a seed study: the ultimatum game and the Dilemma with cheap talk."""

from __future__ import annotations

from stratagem.games.bounds import Chars, Rounds, bounded
from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.matrix.cheap_talk import DEFAULT_MAX_CHARS, CheapTalkGame
from stratagem.games.matrix.entries import dilemma
from stratagem.games.registry import register_game
from stratagem.games.ultimatum import Pie, UltimatumGame


@bounded("ultimatum")
def _ultimatum(pie: Pie = 100) -> UltimatumGame:
    return UltimatumGame(pie)


@bounded("dilemma-talk")
def _dilemma_talk(rounds: Rounds = 5, max_chars: Chars = DEFAULT_MAX_CHARS) -> CheapTalkGame:
    # Not from a seed study: seed-001's Dilemma payoffs (§4.1) with a message before every move.
    return CheapTalkGame(dilemma(), rounds, max_chars, name="dilemma-talk")


register_game(
    CatalogEntry(
        "ultimatum", _ultimatum().description(),
        "not from a seed study; requested by peers (specs/peers.md, Axelrod#1328)",
        "bargaining", _ultimatum,
    )
)  # fmt: skip
register_game(
    CatalogEntry(
        "dilemma-talk", _dilemma_talk().description(),
        "not from a seed study: seed-001 §4.1's Dilemma with cheap talk", "cheap-talk",
        _dilemma_talk,
    )
)  # fmt: skip
