"""What a prompt may say about an OpenSpiel game besides its state: which rules text is its own,
its parameters with OpenSpiel's defaults filled in, and what OpenSpiel's game type says of it.

The rules texts are data (`RULES`, one `<short name>.md` per game, written from the games'
published rules); they are jinja templates over these facts, so a text says "a 9x9 board" for
`go(board_size=9)` and the default 19x19 otherwise. A game without a text of its own is
described from the same facts by the general player's templates, which say that no rules text
exists for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stratagem.games.openspiel.game import OpenSpielGame
from stratagem.games.openspiel.loader import pyspiel

RULES = Path(__file__).with_name("rules")
"""The curated rules texts, `<OpenSpiel short name>.md` each."""

_WORDS: dict[str, dict[str, str]] = {
    "dynamics": {
        "SEQUENTIAL": "the players take turns",
        "SIMULTANEOUS": "the players move at once",
    },
    "chance": {
        "DETERMINISTIC": "there is no chance",
        "EXPLICIT_STOCHASTIC": "chance events (cards, dice) happen",
        "SAMPLED_STOCHASTIC": "chance events happen",
    },
    "information": {
        "PERFECT_INFORMATION": "every player sees the whole state",
        "IMPERFECT_INFORMATION": "some information is private to a player",
        "ONE_SHOT": "each player chooses once without seeing the others' choices",
    },
    "utility": {
        "ZERO_SUM": "zero-sum (one player's gain is the others' loss)",
        "CONSTANT_SUM": "constant-sum",
        "GENERAL_SUM": "general-sum (the players' scores need not add up to anything fixed)",
        "IDENTICAL": "cooperative (every player gets the same score)",
    },
}
"""OpenSpiel's game-type enums in words, for the text of a game without rules."""


def game_facts(game: OpenSpielGame) -> dict[str, Any]:
    """The facts the rules texts and the general player's templates read (module docstring)."""
    spiel = game.spiel_game
    kind = spiel.get_type()
    params = {**dict(kind.parameter_specification), **dict(spiel.get_parameters())}
    return {
        "short_name": kind.short_name,
        "params": params,
        "kind": {
            "dynamics": _word("dynamics", kind.dynamics),
            "chance": _word("chance", kind.chance_mode),
            "information": _word("information", kind.information),
            "utility": _word("utility", kind.utility),
        },
        "min_score": float(spiel.min_utility()),
        "max_score": float(spiel.max_utility()),
        "max_length": int(spiel.max_game_length()),
        "stage": _stage(spiel, params),
    }


def _word(enum: str, value: Any) -> str:
    name = str(value).rsplit(".", 1)[-1]
    return _WORDS[enum].get(name, name.lower().replace("_", " "))


def _stage(spiel: Any, params: dict[str, Any]) -> dict[str, Any] | None:
    """The payoff table of a 2-player matrix game, or of the stage game a repeated game repeats:
    rows and columns by their action names, each cell (row player's, column player's) payoff.
    None for other games."""
    stage = spiel
    if "stage_game" in params:
        inner = dict(params["stage_game"])
        stage = pyspiel().load_game(str(inner.pop("name")), inner)
    if not isinstance(stage, pyspiel().MatrixGame):
        return None
    rows = [stage.row_action_name(r) for r in range(stage.num_rows())]
    cols = [stage.col_action_name(c) for c in range(stage.num_cols())]
    cells = [
        [(stage.row_utility(r, c), stage.col_utility(r, c)) for c in range(len(cols))]
        for r in range(len(rows))
    ]
    return {"rows": rows, "cols": cols, "cells": cells}
