"""What every cooperation mechanism shares: a 2-player stage game played for rounds, each round
recorded exactly as a repeated matrix game records it (a public "round" event with the labels
played and the payoffs), so that the rounds table, the cooperation rate and the studies' metrics
read a mechanism's episodes as they read a repeated game's.

A mechanism adds decisions of its own (a contract to propose, an action to give up) in phases
before or between the moves; in every phase the engine validates the move against the phase's
action space, and a move that stays invalid is handled by the phase's own rule (`fallback`); an
invalid stage move forfeits the round as in `RepeatedGame` (it scores (0, 0)).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, State
from stratagem.games.bounds import Rounds, bounded
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import FORFEIT, RepeatedObservation, Round
from stratagem.games.spaces import Action, ActionSpace, Choice, IllegalAction

MOVE = "move"
"""The phase in which both players choose their stage actions at once."""
FORFEIT_PAYOFFS = (0.0, 0.0)
"""What a round with an invalid move scores, as in `RepeatedGame` (seed-003 §3.4)."""


Settled = tuple[Round, list[Event], dict[str, Any]]
"""A round as a mechanism scores it, its events, and the other changes of the state."""


@dataclass(frozen=True)
class MechanismObservation(RepeatedObservation):
    """The repeated game's view (stage, round, history) plus the phase the player is in."""

    phase: str = MOVE
    """"move" for a stage action, else the mechanism's own decision ("propose", ...)."""


class MechanismGame(Game):
    """A stage game under a mechanism: `rounds` rounds of the 2-player `stage`."""

    mechanism: ClassVar[str]
    """The mechanism's catalog name (`contracting`), which names the game with its stage."""

    @bounded("mechanism")
    def __init__(self, stage: NormalFormGame, rounds: Rounds) -> None:
        if stage.n_players != 2:
            raise StratagemError(
                f"{self.mechanism}: the stage game must have 2 players; "
                f"'{stage.name}' has {stage.n_players}"
            )
        self.stage = stage
        self.rounds = rounds
        self.name = f"{self.mechanism}/{stage.name}"
        self.n_players = 2

    def matrix(self) -> NormalFormGame:
        return self.stage

    def moves(self, seat: int) -> tuple[str, ...]:
        """Every move the seat may be asked for, in a fixed order (a PettingZoo seat's
        `Discrete` actions): its stage actions, then its decisions under the mechanism."""
        return tuple(dict.fromkeys((*self.stage.labels[seat], *self.decisions(seat))))

    def decisions(self, seat: int) -> tuple[str, ...]:
        """The labels of the seat's decisions under the mechanism besides its stage actions."""
        return ()


@dataclass(frozen=True)
class MechanismState(State):
    """Rounds played so far and every event, oldest first (all of a mechanism's events are
    public: what one player does under a mechanism, the other sees)."""

    game: MechanismGame
    history: tuple[Round, ...] = ()
    log: tuple[Event, ...] = field(default=(), repr=False)

    # -- what subclasses change -------------------------------------------------------------------

    @property
    def phase(self) -> str:
        return MOVE

    def horizon(self) -> int:
        """The number of rounds the game lasts."""
        return self.game.rounds

    def playable(self, player: int) -> Choice:
        """The stage actions `player` may play."""
        return self.game.stage.choices[player]

    def settle(self, played: Round) -> Settled:
        """The round as it scores under the mechanism, the mechanism's events about it, and
        what else of the state changes with it."""
        return played, [], {}

    def decide(self, actions: Mapping[int, Action]) -> tuple[MechanismState, list[Event]]:
        """Advance a phase of the mechanism's own decisions (validated actions)."""
        raise IllegalAction(f"{self.game.mechanism} has no '{self.phase}' phase")

    def space(self, player: int) -> ActionSpace:
        """The action space of a phase of the mechanism's own decisions."""
        raise IllegalAction(f"{self.game.mechanism} has no '{self.phase}' phase")

    # -- the protocol -----------------------------------------------------------------------------

    def to_act(self) -> tuple[int, ...]:
        return () if self.is_terminal() else (0, 1)

    def legal(self, player: int) -> ActionSpace:
        return self.playable(player) if self.phase == MOVE else self.space(player)

    def is_terminal(self) -> bool:
        return len(self.history) >= self.horizon()

    def payoffs(self) -> tuple[float, ...]:
        return tuple(sum(r.payoffs[p] for r in self.history) for p in range(2))

    def fields(self, player: int) -> dict[str, Any]:
        """The fields of every mechanism's observation (a subclass adds its own)."""
        return {
            "player": player,
            "legal": self.legal(player) if player in self.to_act() else None,
            "events": self.log,
            "stage": self.game.stage,
            "round": len(self.history) + 1,
            "rounds": self.horizon(),
            "history": self.history,
            "phase": self.phase,
        }

    def _next(self, actions: Mapping[int, Action]) -> tuple[MechanismState, list[Event]]:
        if self.phase != MOVE:
            return self.decide(actions)
        return self._round(actions)

    def forfeit(self, actions: Mapping[int, Action | None]) -> tuple[State, list[Event]]:
        """Outside the moves, a missing decision takes the phase's `fallback`; a missing stage
        move forfeits the round (the valid move is still checked and recorded)."""
        if self.phase != MOVE or None not in actions.values():
            return super().forfeit(actions)
        if self.is_terminal():
            raise IllegalAction("the game is over: no further actions are accepted")
        if set(actions) != set(self.to_act()):
            raise IllegalAction(f"expected actions from players {list(self.to_act())}")
        checked = {p: None if a is None else self.legal(p).validate(a) for p, a in actions.items()}
        return self._round(checked)

    def _round(self, actions: Mapping[int, Action | None]) -> tuple[MechanismState, list[Event]]:
        stage = self.game.stage
        profile = tuple(
            FORFEIT if actions[p] is None else stage.index(p, str(actions[p])) for p in range(2)
        )
        payoffs = FORFEIT_PAYOFFS if FORFEIT in profile else stage.payoff(profile)
        played, extra, changes = self.settle(Round(profile, payoffs))
        events = [round_event(stage, len(self.history) + 1, played), *extra]
        return self.then(events, history=(*self.history, played), **changes)

    def then(self, events: list[Event], **changes: Any) -> tuple[Self, list[Event]]:
        """The next state: `changes` to this one's fields, `events` added to the log."""
        nxt = dataclasses.replace(self, log=(*self.log, *events), **changes)
        return nxt, events


def round_event(stage: NormalFormGame, t: int, played: Round) -> Event:
    """A round as `RepeatedState` records it (the episode loop stores it as a row of the rounds
    table): the labels played (None for a forfeited move) and the payoffs."""
    return Event(
        "round",
        {
            "round": t,
            "actions": [
                stage.labels[p][a] if a != FORFEIT else None for p, a in enumerate(played.actions)
            ],
            "payoffs": list(played.payoffs),
            "valid": played.valid,
        },
    )


def welfare_profile(stage: NormalFormGame) -> tuple[int, ...]:
    """The action profile with the largest total payoff, the first in index order on a tie: the
    cooperative profile of a social dilemma (both cooperate in the Prisoner's Dilemma, both hunt
    the stag in the Stag Hunt), found from the payoffs rather than typed."""
    return max(stage.profiles(), key=lambda profile: sum(stage.payoff(profile)))
