"""Pure game logic: rules, states, observations. No LLM, no I/O, deterministic given a seed.

The names below are the public game API; importing this package does not import the equilibrium
solver's dependencies (nashpy loads on the first equilibrium computation).
"""

from stratagem.games.base import Event, Game, Observation, State, chance, play
from stratagem.games.catalog import (
    GAMES,
    game_names,
    get_entry,
    get_game,
    get_stage,
    make_variant,
    n_player_prisoners_dilemma,
    rock_paper_scissors,
)
from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.magic.public_good import PublicGoodGame, PublicGoodObservation, PublicGoodState
from stratagem.games.matrix.normal_form import NormalFormGame, OneShotObservation, OneShotState
from stratagem.games.matrix.repeated import RepeatedGame, RepeatedObservation, RepeatedState, Round
from stratagem.games.matrix.solution import (
    dominant_action,
    expected_payoffs,
    is_equilibrium,
    iterated_strict_dominance,
    nash_equilibria,
    pareto_optimal,
    pure_nash_equilibria,
    strictly_dominated,
    symmetric_equilibria,
    symmetric_equilibrium,
)
from stratagem.games.spaces import (
    Action,
    ActionSpace,
    Choice,
    FreeText,
    IllegalAction,
    IntegerRange,
)
from stratagem.games.ultimatum import UltimatumGame, UltimatumObservation, UltimatumState

__all__ = [
    "GAMES",
    "Action",
    "ActionSpace",
    "CatalogEntry",
    "Choice",
    "Event",
    "FreeText",
    "Game",
    "IllegalAction",
    "IntegerRange",
    "NormalFormGame",
    "Observation",
    "OneShotObservation",
    "OneShotState",
    "PublicGoodGame",
    "PublicGoodObservation",
    "PublicGoodState",
    "RepeatedGame",
    "RepeatedObservation",
    "RepeatedState",
    "Round",
    "State",
    "UltimatumGame",
    "UltimatumObservation",
    "UltimatumState",
    "chance",
    "dominant_action",
    "expected_payoffs",
    "game_names",
    "get_entry",
    "get_game",
    "get_stage",
    "is_equilibrium",
    "iterated_strict_dominance",
    "make_variant",
    "n_player_prisoners_dilemma",
    "nash_equilibria",
    "pareto_optimal",
    "play",
    "pure_nash_equilibria",
    "rock_paper_scissors",
    "strictly_dominated",
    "symmetric_equilibria",
    "symmetric_equilibrium",
]
