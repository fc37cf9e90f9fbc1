"""Who plays whom in stored MAgIC games: each seat's entity, and of each game between two
entities which one is the challenger and which the defender (seed-004 §4).

**Entities** (model × architecture, `records.split_entity`): a seat's entity is
`<model>|<architecture>`, the model as its rows are named (the model entry's `id`, else its
model string) and the architecture the agent entry's `kind` (`magic`, `pgm`, ...), read from the
episode's spec, else from the experiment's agent entries by the descriptor's agent name. When the
experiment has several agent entries of one kind, an entry whose name is not the kind is
`<kind>:<name>`: a fixed defender (`magic` with `replay`) and a challenger of the same model are
then two entities, not one playing itself. A seat without an agent (a strategy, a script) is
`<name>|<kind>`; every seat a person played is the one entity `human` (`analysis.rating_inputs`:
people enter the ratings as a population of their own).

**Challenger and defender** (seed-004 §4: a challenger against fixed defenders). Only a game
between exactly two entities is a competition. Of its two entities the defender is the one that
ranks first, experiment-wide, by:

1. being declared a defender: an entity with a seat that a rotation line-up of the experiment
   file names in `defenders` (`<agent>` or `<agent>@<model id>`);
2. the number of the experiment's two-entity games it sits in (the defender sits in every game
   of every challenger);
3. the number of seats it holds over those games (against a single challenger both sit in every
   game, but the defender holds two seats of each game-theory game);
4. its name (so the rule never depends on the store's order).

The challenger is the other entity; its seats are `challenger_seats`. A game with one entity
(self-play) or more than two is not a competition: it stays out of the leaderboard, with its
reason, but its seats still enter the rating (`extract.rating_results`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.rating_inputs import HUMAN, is_human


def _agent_kinds(config: Mapping[str, Any]) -> dict[str, str]:
    agents = config.get("agents") or []
    return {
        str(a.get("name")): str(a.get("kind") or "plain") for a in agents if isinstance(a, Mapping)
    }


def _architecture(name: str, kind: str, kinds: Mapping[str, str]) -> str:
    shared = sum(1 for k in kinds.values() if k == kind) > 1
    return f"{kind}:{name}" if shared and name and name != kind else kind


def seat_entities(episode: EpisodeData, config: Mapping[str, Any]) -> tuple[str, ...]:
    """Each seat's entity (module docstring)."""
    kinds = _agent_kinds(config)
    spec_seats = episode.spec.get("seats")
    out = []
    for k, seat in enumerate(episode.seats):
        spec_agent: Any = None
        if isinstance(spec_seats, list) and k < len(spec_seats):
            spec_seat = spec_seats[k]
            spec_agent = spec_seat.get("agent") if isinstance(spec_seat, Mapping) else None
        if is_human(seat):
            out.append(HUMAN)
            continue
        if seat.kind != "llm" and not seat.agent:
            out.append(f"{seat.name}|{seat.kind}")
            continue
        name = seat.agent or (str(spec_agent.get("name", "")) if spec_agent else "")
        kind = str(spec_agent.get("kind") or "") if isinstance(spec_agent, Mapping) else ""
        kind = kind or kinds.get(name) or name or seat.kind
        out.append(f"{seat.model or seat.name}|{_architecture(name, kind, kinds)}")
    return tuple(out)


def declared_defenders(config: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """(agent name, model name or None = any) of every `defenders` seat of the file's rotation
    line-ups (`experiments.config.RotationEntry`)."""
    out: list[tuple[str, str | None]] = []
    for entry in config.get("lineups") or []:
        if not isinstance(entry, Mapping):
            continue
        named = entry.get("defenders")
        for text in [named] if isinstance(named, str) else list(named or []):
            agent, sep, model = str(text).removeprefix("agent:").partition("@")
            out.append((agent, model if sep else None))
    return out


@dataclass(frozen=True)
class Competition:
    """A two-entity game's sides."""

    challenger: str
    defender: str
    seats: tuple[int, ...]
    """The challenger's seats."""


def competitions(
    episodes: Sequence[EpisodeData],
    entities: Mapping[str, tuple[str, ...]],
    config: Mapping[str, Any],
) -> dict[str, Competition]:
    """The competition of every two-entity episode, by episode id (module docstring's rule)."""
    declared = declared_defenders(config)
    present: Counter[str] = Counter()
    seats: Counter[str] = Counter()
    flagged: set[str] = set()
    pairs = [e for e in episodes if len(set(entities[e.record.id])) == 2]
    for e in pairs:
        mine = entities[e.record.id]
        present.update(set(mine))
        seats.update(mine)
        for k, seat in enumerate(e.seats):
            if any(seat.agent == a and m in (None, seat.model) for a, m in declared):
                flagged.add(mine[k])

    def rank(entity: str) -> tuple[bool, int, int, str]:
        return (entity not in flagged, -present[entity], -seats[entity], entity)

    out: dict[str, Competition] = {}
    for e in pairs:
        mine = entities[e.record.id]
        defender, challenger = sorted(set(mine), key=rank)
        seats_of = tuple(k for k, x in enumerate(mine) if x == challenger)
        out[e.record.id] = Competition(challenger, defender, seats_of)
    return out
