"""Reputation: a population meets in rotating pairs, and every member's past moves, with other
partners, are public (CoopEval's "reputation": new co-players each round, whose past
interactions are available; indirect reciprocity, Nowak and Sigmund, Nature 2005).

The population is two groups of `members` each, A and B: seat 0 plays every member of group A
(the stage's row player), seat 1 every member of group B, so an episode keeps its two seats and
its rounds look like a repeated game's (one row per match, seat 0's move first), which is what
the cooperation rate and the studies' metrics read. Each round, every A member plays one match
against a B member, one match per step; the partners rotate: in round r (from 0), A_j meets
B_order[(j + r) mod members], where `order` is a permutation drawn once from the seed, so
within `members` rounds every A member meets every B member exactly once, and who meets whom
first is the seed's. A member deciding sees its partner's record (each past match: the
partner's move and its partner's), its own, and everyone's, all public.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from stratagem.errors import StratagemError
from stratagem.games.base import Event, chance
from stratagem.games.bounds import MAX_ROUNDS, Rounds
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import FORFEIT, Round
from stratagem.games.mechanisms.base import (
    MechanismGame,
    MechanismObservation,
    MechanismState,
    Settled,
)

GROUPS = ("A", "B")
"""The groups' letters: group A is seat 0's, group B seat 1's."""
MATCH = "match"
"""The public event after each match: which members played it."""


class ReputationGame(MechanismGame):
    mechanism = "reputation"

    def __init__(self, stage: NormalFormGame, rounds: Rounds, members: int) -> None:
        super().__init__(stage, rounds)
        if members * rounds > MAX_ROUNDS:
            raise StratagemError(
                f"reputation: {members} members x {rounds} rounds = {members * rounds:,} "
                f"matches, more than the {MAX_ROUNDS:,} one game may hold; use fewer of either"
            )
        self.members = members

    def description(self) -> str:
        return (
            f"{self.stage.description()}, two groups of {self.members} meeting in rotating "
            f"pairs for {self.rounds} rounds, every member's past moves public"
        )

    def initial_state(self, seed: int = 0) -> ReputationState:
        order = tuple(chance(seed, "partners").sample(range(self.members), self.members))
        return ReputationState(self, order=order)


@dataclass(frozen=True)
class Match:
    """One past match of a member, as its record shows it."""

    round: int
    """The match's number (the stored round), from 1."""
    partner: str
    own: str | None
    """The member's move (None: invalid, the match forfeited)."""
    other: str | None
    """The partner's move."""


@dataclass(frozen=True)
class ReputationObservation(MechanismObservation):
    """`round` counts matches (one per step); `period` counts rounds of the population."""

    member: str = ""
    """The member this seat plays in this match (`A2`)."""
    partner: str = ""
    period: int = 1
    periods: int = 1
    records: Mapping[str, tuple[Match, ...]] = field(default_factory=dict)
    """Every member's past matches, oldest first: the public record."""


@dataclass(frozen=True)
class ReputationState(MechanismState):
    game: ReputationGame
    order: tuple[int, ...] = ()
    """The seed's permutation of group B that the rotation starts from."""

    def horizon(self) -> int:
        return self.game.rounds * self.game.members

    def pairing(self, k: int) -> tuple[int, int]:
        """The A and B members (indices) of match k (from 0)."""
        m = self.game.members
        period, slot = divmod(k, m)
        return slot, self.order[(slot + period) % m]

    def names(self, k: int) -> tuple[str, str]:
        """The names of match k's members, seat 0's first (`A1`, `B3`)."""
        a, b = self.pairing(k)
        return f"{GROUPS[0]}{a + 1}", f"{GROUPS[1]}{b + 1}"

    def settle(self, played: Round) -> Settled:
        k = len(self.history)
        return played, [Event(MATCH, {"round": k + 1, "members": list(self.names(k))})], {}

    def records(self) -> dict[str, tuple[Match, ...]]:
        labels = self.game.stage.labels
        out: dict[str, list[Match]] = {
            f"{g}{i + 1}": [] for g in GROUPS for i in range(self.game.members)
        }
        for k, played in enumerate(self.history):
            names = self.names(k)
            moves = [labels[p][a] if a != FORFEIT else None for p, a in enumerate(played.actions)]
            for p in (0, 1):
                out[names[p]].append(Match(k + 1, names[1 - p], moves[p], moves[1 - p]))
        return {name: tuple(matches) for name, matches in out.items()}

    def observation(self, player: int) -> ReputationObservation:
        k = min(len(self.history), self.horizon() - 1)
        names = self.names(k)
        return ReputationObservation(
            **self.fields(player),
            member=names[player],
            partner=names[1 - player],
            period=k // self.game.members + 1,
            periods=self.game.rounds,
            records=self.records(),
        )
