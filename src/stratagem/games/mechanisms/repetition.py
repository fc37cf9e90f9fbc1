"""Repetition with a continuation probability: after each round the game goes on with probability
`continuation`, so no player knows which round is the last. Players are told the probability,
never the horizon: what can sustain cooperation is the shadow of the future, not a known number
of rounds that unravels from the end (the indefinitely repeated games of experimental economics,
Dal Bó and Fréchette, J. Econ. Lit. 2018; CoopEval's "repetition").

The stopping time is drawn from the episode's seed (`chance(seed, "continue", t)` after round
t), so two episodes of one seed last equally long under every stage game, and a paired
comparison compares games of the same length. `rounds` caps it: a bound on cost, never told.
"""

from __future__ import annotations

from dataclasses import dataclass

from stratagem.errors import StratagemError
from stratagem.games.base import Event, chance
from stratagem.games.bounds import Rounds
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import Round
from stratagem.games.mechanisms.base import (
    MechanismGame,
    MechanismObservation,
    MechanismState,
    Settled,
)

STOPPED = "stopped"
"""The public event after the last round: the draw ended the game."""


class RepetitionGame(MechanismGame):
    mechanism = "repetition"

    def __init__(self, stage: NormalFormGame, rounds: Rounds, continuation: float) -> None:
        super().__init__(stage, rounds)
        if isinstance(continuation, bool) or not isinstance(continuation, int | float):
            raise StratagemError(f"repetition: continuation must be a number, got {continuation!r}")
        if not 0 <= continuation <= 1:
            raise StratagemError(
                f"repetition: continuation must be a probability from 0 to 1, got {continuation}"
            )
        self.continuation = float(continuation)

    def description(self) -> str:
        return (
            f"{self.stage.description()}, played again after each round with probability "
            f"{self.continuation:g} (at most {self.rounds} rounds)"
        )

    def initial_state(self, seed: int = 0) -> RepetitionState:
        return RepetitionState(self, stop=stopping_time(seed, self.continuation, self.rounds))


def stopping_time(seed: int, continuation: float, cap: int) -> int:
    """The last round: after round t the game goes on when the seed's draw for t falls below
    `continuation`, up to `cap` rounds."""
    t = 1
    while t < cap and chance(seed, "continue", t).random() < continuation:
        t += 1
    return t


@dataclass(frozen=True)
class RepetitionObservation(MechanismObservation):
    """`rounds` is 0: the horizon is not told; `continuation` is."""

    continuation: float = 0.0


@dataclass(frozen=True)
class RepetitionState(MechanismState):
    game: RepetitionGame
    stop: int = 1
    """The last round, drawn from the seed: the engine's secret until the game stops."""

    def horizon(self) -> int:
        return self.stop

    def settle(self, played: Round) -> Settled:
        t = len(self.history) + 1
        stopped = [Event(STOPPED, {"round": t})] if t == self.stop else []
        return played, stopped, {}

    def observation(self, player: int) -> RepetitionObservation:
        return RepetitionObservation(
            **(self.fields(player) | {"rounds": 0}), continuation=self.game.continuation
        )
