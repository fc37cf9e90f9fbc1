"""Who a rating rates, and which episodes stand behind each rated entity.

**People are one population.** Seats that people played (`stratagem play --seat 0=human`, the
browser's play page) are stored with the descriptor kind "human". Each person plays a handful of
games, and a rating per person would be mostly noise, so every human seat is rated as the one
entity `HUMAN`: "people, as they played here", ranked beside the models on the same scale.

**Episodes behind a number.** Every leaderboard row should lead back to the games it was computed
from (the viewer's filtered episode list): `episodes_by_entity` collects, for pairwise results,
the ids of the games each entity took part in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from stratagem.analysis.episodes import Seat
from stratagem.analysis.rating import PairResult
from stratagem.experiments.lineups import HUMAN as HUMAN_KIND

HUMAN = "human"
"""The entity every human seat is rated as."""


def is_human(seat: Seat) -> bool:
    return seat.kind == HUMAN_KIND


def default_entity(seat: Seat) -> str:
    """`model|agent` for a model's seat (the model alone without an agent name), else the seat's
    name (a strategy, a script)."""
    if seat.kind == "llm":
        model = seat.model or seat.name
        return f"{model}|{seat.agent}" if seat.agent else model
    return seat.name


def rating_entity(seat: Seat, name: Callable[[Seat], str] = default_entity) -> str:
    """The entity a seat is rated as: `HUMAN` for every person, else `name(seat)`."""
    return HUMAN if is_human(seat) else name(seat)


def rating_entities(
    seats: Sequence[Seat], name: Callable[[Seat], str] = default_entity
) -> tuple[str, ...]:
    """`rating_entity` of each seat of an episode."""
    return tuple(rating_entity(s, name) for s in seats)


def episodes_by_entity(results: Iterable[PairResult]) -> dict[str, tuple[str, ...]]:
    """Each entity's episode ids (the results' `game_id`s), sorted; entities sorted."""
    found: dict[str, set[str]] = {}
    for r in results:
        for e in (r.a, r.b):
            ids = found.setdefault(e, set())
            if r.game_id:
                ids.add(r.game_id)
    return {e: tuple(sorted(found[e])) for e in sorted(found)}
