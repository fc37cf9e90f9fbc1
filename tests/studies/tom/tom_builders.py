"""Hand-made ToM-study games (seed-002) for the metric tests: a report, a proposal and a game
with everything not under test left at a harmless default."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stratagem.studies.tom.records import Group, Phase, Proposal, Report, SeatCounts, TomGame


def rep(
    turn: int,
    seat: int,
    v0: Mapping[str, int] | None,
    v1: Mapping[str, int] | None = None,
    v2: Mapping[str, int] | None = None,
) -> Report:
    """A report; its phase follows seat 0 proposing on odd turns (it does not matter here)."""
    phase: Phase = "proposal" if (turn % 2 == 1) == (seat == 0) else "decision"
    return Report(turn, seat, phase, v0, v1, v2)


def prop(
    turn: int,
    proposer: int,
    offer: Mapping[str, int],
    request: Mapping[str, int],
    accepted: bool | None = False,
) -> Proposal:
    return Proposal(turn, proposer, offer, request, accepted)


def game(
    eid: str,
    *,
    group: Group = "V1",
    model: str = "m",
    focal: int = 0,
    reports: Sequence[Report] = (),
    proposals: Sequence[Proposal] = (),
    outcome: str = "timeout",
    winners: tuple[int, ...] = (),
    turns: int = 5,
    max_turn: int = 15,
    payoffs: tuple[float, float] = (0.0, 0.0),
    counts: tuple[SeatCounts, SeatCounts] = (SeatCounts(), SeatCounts()),
    targets: tuple[Mapping[str, int], Mapping[str, int]] = ({"x": 1}, {"y": 1}),
) -> TomGame:
    return TomGame(
        eid,
        model,
        group,
        focal,
        "tradecraft/0",
        max_turn,
        targets,
        tuple(reports),
        tuple(proposals),
        outcome,  # type: ignore[arg-type]
        winners,
        turns,
        payoffs,
        counts,
    )
