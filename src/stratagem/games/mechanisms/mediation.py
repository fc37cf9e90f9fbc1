"""Mediation: before every round a mediator recommends an action profile, announced to both
players; each is free to follow its part or not, and the record says who did (CoopEval's
mediators act for the players who delegate to them; here every move stays the player's own, so
following is itself the behaviour measured).

The mediator is part of the engine, not a seat: its recommendation comes from a stated rule
(`MEDIATORS`) over the public history, so no player can forge one (a player's text never
reaches the state), and whether a player followed is the engine's comparison of the move it
played with what the engine recommended, never a claim.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stratagem.errors import unknown_name
from stratagem.games.base import Event
from stratagem.games.bounds import Rounds
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import FORFEIT, Round
from stratagem.games.matrix.solution import pure_nash_equilibria
from stratagem.games.mechanisms.base import (
    MechanismGame,
    MechanismObservation,
    MechanismState,
    Settled,
    welfare_profile,
)

RECOMMENDATION = "recommendation"
"""The public event before each round: the profile the mediator recommends."""
MEDIATION = "mediation"
"""The public event after each round: what was recommended and who followed."""

Profile = tuple[int, ...]
Mediator = Callable[[NormalFormGame, tuple[Round, ...], tuple[Profile, ...]], Profile]
"""(stage, rounds played, what was recommended in them) -> this round's recommendation."""


def _welfare(
    stage: NormalFormGame, history: tuple[Round, ...], past: tuple[Profile, ...]
) -> Profile:
    """Always the profile with the largest total payoff (`welfare_profile`)."""
    return welfare_profile(stage)


def _trigger(
    stage: NormalFormGame, history: tuple[Round, ...], past: tuple[Profile, ...]
) -> Profile:
    """The welfare profile while both players have followed every recommendation; after a
    round in which one did not (an invalid move included), the stage's pure equilibrium with
    the least total payoff for the rest of the game, so that following is an equilibrium of the
    repeated game when the future weighs enough (a grim trigger kept by the mediator). A stage
    without a pure equilibrium keeps the welfare profile."""
    if all(r.actions == p for r, p in zip(history, past, strict=True)):
        return welfare_profile(stage)
    equilibria = pure_nash_equilibria(stage)
    if not equilibria:
        return welfare_profile(stage)
    return min(equilibria, key=lambda profile: sum(stage.payoff(profile)))


MEDIATORS: dict[str, Mediator] = {"welfare": _welfare, "trigger": _trigger}
"""The mediator's rules by name (the `mediator` option)."""


class MediationGame(MechanismGame):
    mechanism = "mediation"

    def __init__(self, stage: NormalFormGame, rounds: Rounds, mediator: str) -> None:
        super().__init__(stage, rounds)
        if mediator not in MEDIATORS:
            raise unknown_name("mediator", str(mediator), MEDIATORS)
        self.mediator = mediator
        self.rule = MEDIATORS[mediator]

    def description(self) -> str:
        return (
            f"{self.stage.description()}, {self.rounds} rounds, a mediator ({self.mediator}) "
            "recommending a profile before each"
        )

    def initial_state(self, seed: int = 0) -> MediationState:
        return MediationState(self, recommended=(self.rule(self.stage, (), ()),))


@dataclass(frozen=True)
class MediationObservation(MechanismObservation):
    mediator: str = ""
    """The rule the mediator follows (`MEDIATORS`), which the rules of the game state."""
    recommendation: tuple[str, ...] = ()
    """This round's recommended profile, one label per seat (empty once the game is over)."""
    recommended: tuple[tuple[str, ...], ...] = ()
    """The profiles recommended in the rounds played, one per round."""
    followed: tuple[tuple[bool | None, ...], ...] = ()
    """Per round played, whether each seat followed (None: its move was invalid)."""


@dataclass(frozen=True)
class MediationState(MechanismState):
    game: MediationGame
    recommended: tuple[Profile, ...] = ()
    """The recommendation of every round begun, this one's last."""

    def opening(self) -> tuple[Event, ...]:
        return (self._announce(1, self.recommended[0]),)

    def _announce(self, t: int, profile: Profile) -> Event:
        return Event(RECOMMENDATION, {"round": t, "profile": self._labels(profile)})

    def _labels(self, profile: Profile) -> list[str]:
        return [self.game.stage.labels[p][a] for p, a in enumerate(profile)]

    def settle(self, played: Round) -> Settled:
        t = len(self.history) + 1
        profile = self.recommended[-1]
        record = Event(
            MEDIATION,
            {
                "round": t,
                "recommended": self._labels(profile),
                "followed": _followed(played, profile),
            },
        )
        events = [record]
        changes: dict[str, Any] = {}
        if t < self.horizon():
            history = (*self.history, played)
            upcoming = self.game.rule(self.game.stage, history, self.recommended)
            events.append(self._announce(t + 1, upcoming))
            changes["recommended"] = (*self.recommended, upcoming)
        return played, events, changes

    def observation(self, player: int) -> MediationObservation:
        n = len(self.history)
        return MediationObservation(
            **self.fields(player),
            mediator=self.game.mediator,
            recommendation=() if self.is_terminal() else tuple(self._labels(self.recommended[n])),
            recommended=tuple(tuple(self._labels(p)) for p in self.recommended[:n]),
            followed=tuple(
                tuple(_followed(r, p))
                for r, p in zip(self.history, self.recommended[:n], strict=True)
            ),
        )


def _followed(played: Round, profile: Profile) -> list[bool | None]:
    """Per seat: whether its move was the recommended one (None: it made no valid move)."""
    return [None if a == FORFEIT else a == r for a, r in zip(played.actions, profile, strict=True)]
