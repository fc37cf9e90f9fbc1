"""An experiment's finished episodes with their rounds and events, read from the store once.

A report over 10,000 episodes must not query the store per episode per section: rounds and events
are read here in a few bulk queries (by chunks of episodes, so memory stays bounded), shared by
every section and study. Identical JSON texts (the same action profile in thousands of rounds)
are decoded once and their tuples shared.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stratagem.analysis.games import try_resolve
from stratagem.analysis.invalid import (
    DECISION_EVENT,
    INVALID_EVENT,
    invalid_rounds,
    seat_decisions,
)
from stratagem.errors import StratagemError
from stratagem.experiments.store import EpisodeRecord, EventRecord, ResultStore, RoundRecord
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.registry import get_strategy

CHUNK = 500
"""Episodes per bulk query (SQLite allows 999 parameters in older builds)."""

AGENT_PREFIX = "agent:"
"""An opponent spec naming an agent entry of the experiment (played by a model)."""


@dataclass(frozen=True)
class Seat:
    """Who sat in a seat, from the episode's player descriptor."""

    name: str
    kind: str
    """llm, strategy, scripted, human, ... (descriptor "kind"; inferred when absent)."""
    model: str = ""
    """The model entry's id where it has one (what names its rows), else the model string."""
    agent: str = ""


@functools.lru_cache(maxsize=1024)
def _is_strategy(name: str) -> bool:
    try:
        get_strategy(name)
    except StratagemError:
        return False
    return True


def seat_of(descriptor: Mapping[str, Any]) -> Seat:
    """A seat from a player descriptor; a descriptor without a kind that names a rule-based
    strategy is one (imported logs often give the opponent as a bare name)."""
    name = str(descriptor.get("name", ""))
    kind = descriptor.get("kind")
    if not isinstance(kind, str) or not kind:
        kind = "strategy" if _is_strategy(name) else "unknown"
    agent = descriptor.get("agent")
    return Seat(
        name=name,
        kind=kind,
        model=str(descriptor.get("model_id") or descriptor.get("model") or ""),
        agent=str(agent.get("name", "")) if isinstance(agent, Mapping) else str(agent or ""),
    )


@dataclass(frozen=True)
class EpisodeData:
    """One finished episode with everything the report reads about it."""

    record: EpisodeRecord
    rounds: tuple[RoundRecord, ...]
    events: tuple[EventRecord, ...]

    @property
    def spec(self) -> dict[str, Any]:
        return self.record.spec or {}

    @functools.cached_property
    def seats(self) -> tuple[Seat, ...]:
        return tuple(seat_of(p) for p in self.record.players)

    @functools.cached_property
    def game(self) -> NormalFormGame | str:
        """The resolved stage game, or why there is none (`analysis.games`)."""
        return try_resolve(self.record)

    @property
    def stage(self) -> NormalFormGame | None:
        game = self.game
        return game if isinstance(game, NormalFormGame) else None

    @property
    def agent(self) -> dict[str, Any]:
        """Seat 0's agent settings as the runner stored them in the spec: the shorthand's
        `agent`, or a line-up's first seat (empty if imported or not an LLM seat)."""
        agent = self.spec.get("agent")
        if agent is None:
            seats = self.spec.get("seats")
            first = seats[0] if isinstance(seats, list) and seats else None
            agent = first.get("agent") if isinstance(first, Mapping) else None
        return dict(agent) if isinstance(agent, Mapping) else {}

    @property
    def agent_name(self) -> str:
        """Seat 0's agent configuration: the spec's agent, or the descriptor's (imports)."""
        name = self.agent.get("name") or self.agent.get("kind")
        if name:
            return str(name)
        seat = self.seats[0] if self.seats else None
        if seat is None or seat.kind != "llm":
            return ""
        return (seat.agent or seat.name).split(":", 1)[0]

    @property
    def model(self) -> str:
        """Seat 0's model (its name when it has none)."""
        seat = self.seats[0] if self.seats else Seat("", "unknown")
        return str(self.spec.get("model_id") or self.spec.get("model") or seat.model or seat.name)

    @property
    def llm_first(self) -> bool:
        return bool(self.seats) and self.seats[0].kind == "llm"

    def opponent(self) -> str:
        """Seat 1 as the spec names it (a strategy spec, or `agent:<name>`), else its name."""
        opponent = self.spec.get("opponent")
        if opponent is None and len(self.seats) > 1:
            return self.seats[1].name
        return str(opponent)

    def opponent_kind(self) -> str:
        """The kind of seat 1: an `agent:` opponent is an LLM whatever its descriptor says."""
        if self.opponent().startswith(AGENT_PREFIX):
            return "llm"
        return self.seats[1].kind if len(self.seats) > 1 else "unknown"

    @functools.cached_property
    def _invalid(self) -> dict[int, frozenset[int]]:
        """Each seat's invalid rounds, found once (the headline, the tables and the studies
        all ask)."""
        return {}

    def invalid_rounds(self, seat: int) -> frozenset[int]:
        found = self._invalid.get(seat)
        if found is None:
            found = self._invalid[seat] = invalid_rounds(self.rounds, self.events, seat)
        return found

    def decisions(self, seat: int) -> tuple[int, int]:
        """(decisions, invalid) of a seat: `analysis.invalid`'s one definition."""
        return seat_decisions(self.rounds, self.events, seat, self.invalid_rounds(seat))

    @property
    def has_moves(self) -> bool:
        """Whether its moves are recorded (rounds, or decision events), not only a summary."""
        return bool(self.rounds) or any(
            e.kind in (DECISION_EVENT, INVALID_EVENT) for e in self.events
        )

    def has_event(self, kind: str) -> bool:
        return any(e.kind == kind for e in self.events)


def load_episodes(
    store: ResultStore, experiment_id: str, *, event_kinds: Sequence[str] | None = None
) -> list[EpisodeData]:
    """The finished episodes of an experiment in store order, rounds and events attached.

    `event_kinds` limits the events read (all kinds when None).
    """
    records = store.episodes(experiment_id, status="finished")
    decode = _Decoder()
    out: list[EpisodeData] = []
    for start in range(0, len(records), CHUNK):
        chunk = records[start : start + CHUNK]
        ids = [r.id for r in chunk]
        rounds = _rounds(store, ids, decode)
        events = _events(store, ids, event_kinds)
        out.extend(
            EpisodeData(r, tuple(rounds.get(r.id, ())), tuple(events.get(r.id, ()))) for r in chunk
        )
    return out


def read_rounds(store: ResultStore, ids: Sequence[str]) -> dict[str, list[RoundRecord]]:
    """The rounds of these episodes, in order, as `load_episodes` attaches them."""
    decode = _Decoder()
    out: dict[str, list[RoundRecord]] = {}
    for start in range(0, len(ids), CHUNK):
        out.update(_rounds(store, ids[start : start + CHUNK], decode))
    return out


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _rounds(
    store: ResultStore, ids: Sequence[str], decode: _Decoder
) -> dict[str, list[RoundRecord]]:
    found: dict[str, list[RoundRecord]] = defaultdict(list)
    rows = store._rows(
        "SELECT episode_id, round, actions, payoffs, valid, tokens FROM rounds "
        f"WHERE episode_id IN ({_marks(len(ids))}) ORDER BY episode_id, round",
        ids,
    )
    for episode_id, number, actions, payoffs, valid, tokens in rows:
        found[episode_id].append(
            RoundRecord(
                episode_id=episode_id,
                round=number,
                actions=decode(actions) or (),
                payoffs=decode(payoffs),
                valid=bool(valid),
                # Token counts differ from round to round: decoded, never kept in the cache.
                tokens=_tuple(tokens),
            )
        )
    return found


def _events(
    store: ResultStore, ids: Sequence[str], kinds: Sequence[str] | None
) -> dict[str, list[EventRecord]]:
    sql = (
        "SELECT episode_id, seq, round, kind, player, data FROM events "
        f"WHERE episode_id IN ({_marks(len(ids))})"
    )
    params: list[Any] = list(ids)
    if kinds is not None:
        if not kinds:
            return {}
        sql += f" AND kind IN ({_marks(len(kinds))})"
        params += list(kinds)
    found: dict[str, list[EventRecord]] = defaultdict(list)
    for episode_id, seq, number, kind, player, data in store._rows(
        sql + " ORDER BY episode_id, seq", params
    ):
        found[episode_id].append(
            EventRecord(
                episode_id=episode_id,
                seq=seq,
                kind=kind,
                data=json.loads(data) if data is not None else None,
                round=number,
                player=player,
            )
        )
    return found


def _tuple(text: str | None) -> tuple[Any, ...] | None:
    if text is None:
        return None
    loaded = json.loads(text)
    return None if loaded is None else tuple(loaded)


class _Decoder:
    """JSON arrays as tuples, each distinct text decoded once (action profiles repeat a lot)."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[Any, ...]] = {}

    def __call__(self, text: str | None) -> tuple[Any, ...] | None:
        if text is None:
            return None
        value = self._seen.get(text)
        if value is None:
            loaded = json.loads(text)
            if loaded is None:
                return None
            value = tuple(loaded)
            if len(self._seen) < 100_000:
                self._seen[text] = value
        return value
