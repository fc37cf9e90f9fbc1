"""Contracting: before play, one player proposes a binding contract and the other accepts or
rejects it; an accepted contract is enforced by the engine in every round (CoopEval's
contracts: outcome-conditional payments between the players).

A contract names an action profile, one action per player. In every round it is in force, a
player whose move is not its part of the profile pays `penalty` points to the other player
(both deviate: both pay, and the transfers cancel). The default penalty is the range of the
stage's payoffs (largest minus smallest), which no deviation can gain more than, so against a
partner who keeps the contract breaking it never pays. The proposer is drawn from the seed
(option `proposer` fixes it); it may propose no contract ("none"), which ends the phase. A
round with an invalid move is forfeited by the repeated game's rule and moves no points.

What the engine enforces is what it recorded: the profile proposed, the answer, and each
round's moves; a player's words about a contract (another profile, another penalty) are not an
action any phase accepts.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

from stratagem.errors import StratagemError
from stratagem.games.base import Event, chance
from stratagem.games.bounds import Rounds
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import Round
from stratagem.games.mechanisms.base import (
    MOVE,
    MechanismGame,
    MechanismObservation,
    MechanismState,
    Settled,
)
from stratagem.games.spaces import Action, ActionSpace, Choice

PROPOSE, ACCEPT = "propose", "accept"
"""The contract's phases: the proposer proposes, then the other player answers."""
NO_CONTRACT = "none"
ANSWERS = Choice(("accept", "reject"))
PROPOSAL, CONTRACT, ENFORCEMENT = "proposal", "contract", "enforcement"
"""The public events: what was proposed, whether it binds, and each round's transfers."""

Profile = tuple[int, int]


class ContractingGame(MechanismGame):
    mechanism = "contracting"

    def __init__(
        self, stage: NormalFormGame, rounds: Rounds, penalty: float | None, proposer: int | None
    ) -> None:
        super().__init__(stage, rounds)
        if penalty is None:
            penalty = float(stage.payoffs.max() - stage.payoffs.min())
        if isinstance(penalty, bool) or not isinstance(penalty, int | float):
            raise StratagemError(f"contracting: penalty must be a number, got {penalty!r}")
        if not math.isfinite(penalty) or penalty < 0:
            raise StratagemError(
                f"contracting: penalty must be a finite number of points from 0, got {penalty}"
            )
        self.penalty = float(penalty)
        self.proposer = proposer
        self.offers = tuple(_offers(stage, p) for p in (0, 1))
        """Each seat's proposals: its label ("own/other") -> the profile in seat order."""

    def description(self) -> str:
        return (
            f"{self.stage.description()}, {self.rounds} rounds under a contract proposed and "
            f"accepted before play (a deviation pays {self.penalty:g} to the other player)"
        )

    def decisions(self, seat: int) -> tuple[str, ...]:
        return (NO_CONTRACT, *self.offers[seat], *ANSWERS.labels)

    def initial_state(self, seed: int = 0) -> ContractingState:
        proposer = self.proposer
        if proposer is None:
            proposer = chance(seed, "proposer").randrange(2)
        return ContractingState(self, proposer=proposer)


def _offers(stage: NormalFormGame, seat: int) -> dict[str, Profile]:
    """Every profile of the stage as `seat` proposes it (`offer`)."""
    out: dict[str, Profile] = {}
    for own, other in itertools.product(range(stage.sizes[seat]), range(stage.sizes[1 - seat])):
        profile = (own, other) if seat == 0 else (other, own)
        out[offer(stage, seat, profile)] = profile
    return out


def offer(stage: NormalFormGame, seat: int, profile: tuple[int, ...]) -> str:
    """A proposal as its proposer names it, its own action first ("cooperate/defect": I
    cooperate, you defect), of a profile in seat order."""
    return f"{stage.labels[seat][profile[seat]]}/{stage.labels[1 - seat][profile[1 - seat]]}"


@dataclass(frozen=True)
class ContractingObservation(MechanismObservation):
    proposer: int = 0
    proposal: tuple[str, ...] = ()
    """The profile proposed, one label per seat (empty: none proposed yet, or none at all)."""
    contract: tuple[str, ...] = ()
    """The profile in force, one label per seat (empty: no contract binds)."""
    penalty: float = 0.0
    transfers: tuple[tuple[float, ...], ...] = ()
    """Per round played, the points the contract moved to each seat (negative: paid)."""


@dataclass(frozen=True)
class ContractingState(MechanismState):
    game: ContractingGame
    proposer: int = 0
    proposal: Profile | None = None
    contract: Profile | None = None
    at: str = PROPOSE
    """The phase: PROPOSE, ACCEPT, then MOVE for the rounds."""
    transfers: tuple[tuple[float, ...], ...] = ()

    @property
    def phase(self) -> str:
        return self.at

    def to_act(self) -> tuple[int, ...]:
        if self.phase == PROPOSE:
            return (self.proposer,)
        if self.phase == ACCEPT:
            return (1 - self.proposer,)
        return super().to_act()

    def space(self, player: int) -> ActionSpace:
        if self.phase == PROPOSE:
            return Choice((NO_CONTRACT, *self.game.offers[player]))
        return ANSWERS

    def fallback(self, player: int) -> Action:
        """No valid proposal proposes none; no valid answer rejects."""
        return NO_CONTRACT if self.phase == PROPOSE else "reject"

    def decide(self, actions: Mapping[int, Action]) -> tuple[ContractingState, list[Event]]:
        ((seat, action),) = actions.items()
        if self.phase == PROPOSE:
            profile = self.game.offers[seat].get(str(action))
            proposed = Event(PROPOSAL, {"proposer": seat, "profile": self._labels(profile)})
            if profile is None:
                bound = Event(CONTRACT, {"accepted": False, "profile": [], "penalty": None})
                return self.then([proposed, bound], at=MOVE)
            return self.then([proposed], proposal=profile, at=ACCEPT)
        accepted = action == "accept"
        bound = Event(
            CONTRACT,
            {
                "accepted": accepted,
                "profile": self._labels(self.proposal),
                "penalty": self.game.penalty if accepted else None,
            },
        )
        contract = self.proposal if accepted else None
        return self.then([bound], contract=contract, at=MOVE)

    def _labels(self, profile: Profile | None) -> list[str]:
        if profile is None:
            return []
        return [self.game.stage.labels[p][a] for p, a in enumerate(profile)]

    def settle(self, played: Round) -> Settled:
        if self.contract is None or not played.valid:
            return played, [], {"transfers": (*self.transfers, (0.0, 0.0))}
        fine = self.game.penalty
        deviated = [a != c for a, c in zip(played.actions, self.contract, strict=True)]
        moved = tuple(fine * (deviated[1 - p] - deviated[p]) for p in (0, 1))
        payoffs = tuple(x + m for x, m in zip(played.payoffs, moved, strict=True))
        enforced = Event(
            ENFORCEMENT,
            {"round": len(self.history) + 1, "deviated": deviated, "transfers": list(moved)},
        )
        return Round(played.actions, payoffs), [enforced], {"transfers": (*self.transfers, moved)}

    def observation(self, player: int) -> ContractingObservation:
        return ContractingObservation(
            **self.fields(player),
            proposer=self.proposer,
            proposal=tuple(self._labels(self.proposal)),
            contract=tuple(self._labels(self.contract)),
            penalty=self.game.penalty,
            transfers=self.transfers,
        )
