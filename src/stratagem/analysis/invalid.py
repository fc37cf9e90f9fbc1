"""What an invalid output is, defined once for every table that counts them.

A seat's move in a round is invalid when the round records no move for it (None: a forfeit, as
seed-003's logs store a reply that could not be parsed) or when an `invalid` event exists for that
seat and round (the runner writes one for every invalid decision, also when a default move was
played in its place, so the round keeps a label). Games without rounds (Ultimatum, Public Good)
record each decision as a `decision` event; one marked not valid is invalid too.

The headline, the invalid-output table, the per-setting table and `stratagem status` all count
through `seat_decisions`, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from stratagem.experiments.store import EventRecord, RoundRecord

INVALID_EVENT = "invalid"
DECISION_EVENT = "decision"


def invalid_rounds(
    rounds: Sequence[RoundRecord], events: Iterable[EventRecord], seat: int
) -> frozenset[int]:
    """The rounds (or steps) in which `seat` made an invalid move."""
    bad = {r.round for r in rounds if seat < len(r.actions) and r.actions[seat] is None}
    for e in events:
        if e.player != seat or e.round is None:
            continue
        if e.kind == INVALID_EVENT or (e.kind == DECISION_EVENT and _not_valid(e.data)):
            bad.add(e.round)
    return frozenset(bad)


def seat_decisions(
    rounds: Sequence[RoundRecord],
    events: Sequence[EventRecord],
    seat: int,
    invalid: frozenset[int] | None = None,
) -> tuple[int, int]:
    """(decisions, invalid decisions) of one seat in one episode (`invalid`: its
    `invalid_rounds`, when already known).

    A matrix game has one decision per seat and round; a game without rounds one per `decision`
    event of the seat.
    """
    if rounds:
        decisions = len(rounds)
    else:
        decisions = sum(1 for e in events if e.kind == DECISION_EVENT and e.player == seat)
    if invalid is None:
        invalid = invalid_rounds(rounds, events, seat)
    return decisions, len(invalid)


def _not_valid(data: object) -> bool:
    return isinstance(data, dict) and data.get("valid") is False
