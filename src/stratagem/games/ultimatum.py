"""The Ultimatum game: a turn-based game with an integer offer and an accept/reject reply.

It exists to exercise the game API beyond matrices: players act in turn, the action spaces differ by
player and by moment (an amount, then a choice), and what a player sees depends on what happened. It
is among the games the peers and Axelrod's maintainers list as missing (specs/peers.md).

The proposer (player 0) offers the responder (player 1) an amount out of a pie of integer points;
the responder accepts, splitting the pie as offered, or rejects, leaving both with nothing. The
default pie of 100 points is a choice of this module, not a number from the studies.

A player who produces no valid action (every reply invalid) ends the game without a deal: a
proposer who makes no offer, or a responder who gives no answer, leaves both with nothing, as a
rejection does; the record says the game was forfeited.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.bounds import Bounds, bounded
from stratagem.games.spaces import Action, Choice, IllegalAction, IntegerRange

PROPOSER, RESPONDER = 0, 1
ROLES: tuple[str, str] = ("proposer", "responder")
RESPONSES: tuple[str, str] = ("accept", "reject")
FORFEITED = "forfeit"
"""The response recorded when a player forfeits: the game ends and nobody gets anything."""

MAX_PIE = 1_000_000
"""Most points a pie may have: ten thousand times the default, a stake in cents of $10,000.
The game itself never lists the offers, but a PettingZoo seat's discrete space does
(`pettingzoo_spaces.MAX_VOCABULARY`), and a pie of 10**7 took 7 s and 1 GB there."""
Pie = Annotated[int, Bounds(1, MAX_PIE)]


class UltimatumGame(Game):
    """One proposal and one reply over `pie` points."""

    @bounded("ultimatum")
    def __init__(self, pie: Pie = 100, name: str = "ultimatum") -> None:
        self.pie = pie
        self.name = name
        self.n_players = 2

    def description(self) -> str:
        return (
            f"Ultimatum game: the proposer offers part of {self.pie} points; the responder "
            "accepts the split or rejects it and both get nothing"
        )

    def initial_state(self, seed: int = 0) -> UltimatumState:
        return UltimatumState(self, None, None)


@dataclass(frozen=True)
class UltimatumObservation(Observation):
    """A player's view: their role, the pie, and the offer and reply once they are made."""

    role: str = "proposer"
    pie: int = 0
    offer: int | None = None
    """Points offered to the responder, once proposed."""
    response: str | None = None
    """"accept" or "reject", once the responder has replied."""


@dataclass(frozen=True)
class UltimatumState(State):
    game: UltimatumGame
    offer: int | None
    response: str | None

    def to_act(self) -> tuple[int, ...]:
        if self.response is not None:
            return ()
        return (PROPOSER,) if self.offer is None else (RESPONDER,)

    def legal(self, player: int) -> IntegerRange | Choice:
        if player not in self.to_act():
            raise IllegalAction(f"player {player} does not act now in the ultimatum game")
        if player == PROPOSER:
            return IntegerRange(0, self.game.pie)
        return Choice(RESPONSES)

    def events(self) -> tuple[Event, ...]:
        """Everything that has happened; both events are public (the proposer knows the offer it
        made, the responder sees it, and the proposer learns the reply once it is given)."""
        out = []
        if self.offer is not None:
            out.append(
                Event("offer", {"offer": self.offer, "proposer_keeps": self.game.pie - self.offer})
            )
        if self.response == FORFEITED:
            forfeiter = PROPOSER if self.offer is None else RESPONDER
            out.append(Event("forfeit", {"player": forfeiter, "payoffs": list(self.payoffs())}))
        elif self.response is not None:
            out.append(
                Event("response", {"response": self.response, "payoffs": list(self.payoffs())})
            )
        return tuple(out)

    def observation(self, player: int) -> UltimatumObservation:
        if player not in (PROPOSER, RESPONDER):
            raise StratagemError(f"the ultimatum game has players 0 and 1, got {player}")
        return UltimatumObservation(
            player=player,
            legal=self.legal(player) if player in self.to_act() else None,
            events=tuple(e for e in self.events() if e.visible(player)),
            role=ROLES[player],
            pie=self.game.pie,
            offer=self.offer,
            response=self.response,
        )

    def is_terminal(self) -> bool:
        return self.response is not None

    def payoffs(self) -> tuple[float, ...]:
        """(pie - offer, offer) if accepted; (0, 0) if rejected or not yet decided."""
        if self.offer is None or self.response != "accept":
            return (0.0, 0.0)
        return (float(self.game.pie - self.offer), float(self.offer))

    def forfeit(self, actions: Mapping[int, Action | None]) -> tuple[UltimatumState, list[Event]]:
        """A missing offer or reply ends the game with no deal (module docstring)."""
        (player,) = self.to_act() or (None,)
        if player is None or actions.get(player) is not None:
            nxt, events = self.apply({p: a for p, a in actions.items() if a is not None})
            assert isinstance(nxt, UltimatumState)
            return nxt, events
        if set(actions) != {player}:
            raise IllegalAction(f"expected an action from player {player}, got {sorted(actions)}")
        nxt = UltimatumState(self.game, self.offer, FORFEITED)
        return nxt, [nxt.events()[-1]]

    def _next(self, actions: Mapping[int, Action]) -> tuple[UltimatumState, list[Event]]:
        if self.offer is None:
            nxt = UltimatumState(self.game, int(actions[PROPOSER]), None)
        else:
            nxt = UltimatumState(self.game, self.offer, str(actions[RESPONDER]))
        return nxt, [nxt.events()[-1]]
