"""Cooperation mechanisms as an experimental axis (CoopEval, ICML 2026): wrappers over any
2-player matrix game of the catalog that change how the game is played, not its payoffs.

One module per mechanism: `repetition` (a random stopping time), `reputation` (a population
in rotating pairs with public records), `mediation` (recommendations by a rule of the engine),
`contracting` (a binding contract, enforced by transfers), `disarmament` (removing an action
before play). `base` holds what they share: rounds recorded as a repeated game records them, so
the matrix games' analyses read them; `family` names them (`contracting/sh`).
"""

from stratagem.games.mechanisms.base import (
    MOVE,
    MechanismGame,
    MechanismObservation,
    MechanismState,
)
from stratagem.games.mechanisms.contracting import ContractingGame
from stratagem.games.mechanisms.disarmament import DisarmamentGame
from stratagem.games.mechanisms.mediation import MediationGame
from stratagem.games.mechanisms.repetition import RepetitionGame
from stratagem.games.mechanisms.reputation import ReputationGame

MECHANISM_GAMES: tuple[type[MechanismGame], ...] = (
    RepetitionGame,
    ReputationGame,
    MediationGame,
    ContractingGame,
    DisarmamentGame,
)
"""Each mechanism's game class; its prompts are the folder named as its `mechanism`."""

__all__ = [
    "MECHANISM_GAMES",
    "MOVE",
    "ContractingGame",
    "DisarmamentGame",
    "MechanismGame",
    "MechanismObservation",
    "MechanismState",
    "MediationGame",
    "RepetitionGame",
    "ReputationGame",
]
