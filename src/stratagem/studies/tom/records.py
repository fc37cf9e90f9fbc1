"""One finished TradeCraft game of the ToM study (seed-002) as every metric reads it.

The records are filled from the store (`extract`) or built by hand in tests, and checked here
once, so a damaged game fails with a one-line error naming the field instead of scoring wrong.

Conventions:

- **Seats are 0-based**: seat k is the spec's "Player k+1". The **focal** seat is the ToM-group
  agent (§3.3); the other seat is the same-model V0 **baseline**. In `V0 vs V0` the focal seat
  is the one whose agent entry is not marked `baseline` (§5 [A]: "the seat assigned as test").
- **Groups** (§3.3) are named by the highest order the focal agent reports: "V0", "V1", "V2".
- **Reports** are the V0/V1/V2 dictionaries of §3.1 over the report's domain (the items in any
  hand at report time, §3.2), scores whole numbers 0..10 after §3.2's repairs; an
  order the agent was asked for but whose report could not be read is absent (None) and counted
  in `report_failures`.
- **Turns** are the game's 1-based turn indices (§2.5 [R] turn_index); both seats report once per
  turn (§3.2): the proposer with its proposal, the decision maker with its decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from stratagem.errors import StratagemError

Group = Literal["V0", "V1", "V2"]
GROUPS: tuple[Group, ...] = ("V0", "V1", "V2")
"""§3.3: V0 vs V0, (V0,V1) vs V0, (V0,V1,V2) vs V0, named by the focal agent's highest order."""
Phase = Literal["proposal", "decision"]
Values = Mapping[str, int]
"""Item -> utility score 0..10 (§3.2)."""
Items = Mapping[str, float]
"""Item -> count (a proposal's offer or request): whole, unless the game was played with
`fractional_amounts` (seed-002 §2.6 says only "> 0")."""


def _fail(where: str, msg: str) -> StratagemError:
    return StratagemError(f"ToM record {where}: {msg}")


def _frozen(mapping: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Report:
    """The V reports one seat gave at one turn (§3.1); `v1`/`v2` None when not asked or unread."""

    turn: int
    seat: int
    phase: Phase
    v0: Values | None
    v1: Values | None = None
    v2: Values | None = None

    def __post_init__(self) -> None:
        where = f"report (turn {self.turn}, seat {self.seat})"
        if self.turn < 1 or self.seat not in (0, 1):
            raise _fail(where, "turn must be >= 1 and seat 0 or 1")
        if self.phase not in ("proposal", "decision"):
            raise _fail(where, f"phase must be proposal or decision, got {self.phase!r}")
        for name in ("v0", "v1", "v2"):
            values = getattr(self, name)
            if values is None:
                continue
            for item, score in values.items():
                if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= 10:
                    raise _fail(where, f"{name}[{item}] = {score!r} is not a whole score 0..10")
            object.__setattr__(self, name, _frozen(values))

    def order(self, k: int) -> Values | None:
        """The report of ToM order k (0, 1 or 2)."""
        return (self.v0, self.v1, self.v2)[k]


@dataclass(frozen=True)
class Proposal:
    """One proposal delivered to the decision maker (§2.5), with what became of it.

    `offer` is what the proposer gives, `request` what it asks for. `accepted` is None when the
    game ended before a decision (it never does in TradeCraft: every proposal gets one)."""

    turn: int
    proposer: int
    offer: Items
    request: Items
    accepted: bool | None
    message: str = ""

    def __post_init__(self) -> None:
        where = f"proposal (turn {self.turn})"
        if self.turn < 1 or self.proposer not in (0, 1):
            raise _fail(where, "turn must be >= 1 and proposer 0 or 1")
        for name in ("offer", "request"):
            items = getattr(self, name)
            for item, n in items.items():
                if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
                    raise _fail(where, f"{name}[{item}] = {n!r} is not a positive whole count")
            object.__setattr__(self, name, _frozen(items))

    @property
    def decider(self) -> int:
        return 1 - self.proposer

    @property
    def empty(self) -> bool:
        """Nothing offered and nothing requested: a pass (§2.6 [A])."""
        return not self.offer and not self.request


@dataclass(frozen=True)
class SeatCounts:
    """What one seat did that the outcome metrics of §7 count."""

    submissions: int = 0
    """Proposals it submitted, re-asked attempts included (§7)."""
    invalid_submissions: int = 0
    """Of those, the ones the engine refused (an illegal proposal) or that could not be read."""
    craft_checks: int = 0
    """`craft_recipe_check` calls it made (§2.3, §7)."""
    craft_errors: int = 0
    """Of those, the ones that failed (code 1 or 2)."""
    reports_expected: int = 0
    """V reports it was asked for (one per order per proposal or decision)."""
    report_failures: int = 0
    """Of those, the ones that could not be read (§3.2: logged, never replaced)."""
    invalid_decisions: int = 0
    """Moves (proposals, decisions, craft phases) recorded invalid after the re-asks."""
    calls: int = 0
    """Model calls it made, re-asks and tool calls included."""


@dataclass(frozen=True)
class TomGame:
    """One game: who played, what each seat reported and proposed, and how it ended."""

    episode_id: str
    model: str
    """The model both seats play (self-play, §10)."""
    group: Group
    focal: int
    instance: str
    """The game as the store names it (`tradecraft/3`)."""
    max_turn: int
    targets: tuple[Items, Items]
    """Each seat's private target (§2.1)."""
    reports: tuple[Report, ...]
    proposals: tuple[Proposal, ...]
    outcome: Literal["win", "tie", "timeout"]
    winners: tuple[int, ...]
    turns: int
    """Turns played (§7: game length, capped at max_turn)."""
    payoffs: tuple[float, float]
    counts: tuple[SeatCounts, SeatCounts] = field(default=(SeatCounts(), SeatCounts()))
    baseline_focal: bool = False
    """True in `V0 vs V0` games where neither seat is marked baseline and seat 0 was taken as
    focal by default; informational only."""
    repairs: tuple[str, ...] = ()
    """The §3.2 repairs made while reading the stored reports (`extract`), each naming its
    belief row: a report imported from another tool is read as the agent reads a reply."""
    duplicates: tuple[str, ...] = ()
    """Belief rows repeating a (turn, seat, phase, order) already read, each named: the first
    stored row is used, and the report says how many were ignored."""
    seed: int | str | None = None
    """The episode's seed: with `instance`, what pairs a game with its twin in another group
    (`section_comparisons`)."""

    def __post_init__(self) -> None:
        where = f"game {self.episode_id}"
        if self.group not in GROUPS:
            raise _fail(where, f"group must be one of {GROUPS}, got {self.group!r}")
        if self.focal not in (0, 1):
            raise _fail(where, f"focal seat must be 0 or 1, got {self.focal!r}")
        if self.outcome not in ("win", "tie", "timeout"):
            raise _fail(where, f"outcome must be win, tie or timeout, got {self.outcome!r}")
        if any(w not in (0, 1) for w in self.winners):
            raise _fail(where, f"winners must be seats 0/1, got {self.winners!r}")
        if (self.outcome == "win") != (len(self.winners) == 1) or (
            self.outcome == "tie" and len(self.winners) != 2
        ):
            raise _fail(where, f"outcome {self.outcome} does not match winners {self.winners}")
        if not 0 <= self.turns <= self.max_turn:
            raise _fail(where, f"turns {self.turns} outside 0..{self.max_turn}")
        object.__setattr__(self, "reports", tuple(self.reports))
        object.__setattr__(self, "proposals", tuple(self.proposals))
        object.__setattr__(self, "winners", tuple(self.winners))
        object.__setattr__(self, "repairs", tuple(self.repairs))
        object.__setattr__(self, "duplicates", tuple(self.duplicates))

    @property
    def opponent(self) -> int:
        return 1 - self.focal

    def report(self, turn: int, seat: int) -> Report | None:
        """The report `seat` gave at `turn` (the first, should there be two)."""
        return next((r for r in self.reports if r.turn == turn and r.seat == seat), None)
