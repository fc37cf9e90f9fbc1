"""What the result store holds, as plain records: experiments, episodes, rounds, events, model
calls, answers and beliefs, with the checks and conversions every writer and reader shares."""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from stratagem.errors import StratagemError
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.match import MatchResult

Status = Literal["pending", "running", "finished", "failed"]
STATUSES: tuple[Status, ...] = ("pending", "running", "finished", "failed")

PlayerLike = str | Mapping[str, Any]
"""A player as given by callers: a bare name, or a descriptor such as
{"name": ..., "kind": "strategy" | "llm", "model": ...}."""

SECRET_KEYS = frozenset(
    {"api_key", "apikey", "api-key", "x-api-key", "authorization", "password", "secret"}
)


# -- records --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExperimentRecord:
    id: str
    name: str
    config: dict[str, Any]
    created_at: str


@dataclass(frozen=True)
class EpisodeRecord:
    id: str
    experiment_id: str
    game: str
    players: tuple[dict[str, Any], ...]
    """Player descriptors by seat (0-based), each with at least a "name"."""
    seed: int | str | None
    status: Status
    spec: dict[str, Any] = field(default_factory=dict)
    labels: tuple[tuple[str, ...], ...] | None = None
    """Action labels per player, for matrix games."""
    game_payoffs: Any = None
    """The payoff tensor as nested lists (shape labels..., players), when known."""
    payoffs: tuple[float, ...] | None = None
    """Total payoff per player, once finished."""
    started_at: str | None = None
    finished_at: str | None = None
    source: str = "stratagem"
    error: str | None = None

    @property
    def player_names(self) -> tuple[str, ...]:
        return tuple(str(p.get("name", "")) for p in self.players)


@dataclass(frozen=True)
class RoundRecord:
    episode_id: str
    round: int
    """From 1."""
    actions: tuple[Any, ...]
    """One action per player: a label for matrix games, None for a missing (invalid) move."""
    payoffs: tuple[float, ...] | None
    valid: bool = True
    tokens: tuple[int | None, ...] | None = None
    """Tokens each player spent on this round (retries and samples included), when known."""


@dataclass(frozen=True)
class EventRecord:
    episode_id: str
    seq: int
    kind: str
    data: Any
    round: int | None = None
    player: int | None = None
    visible_to: tuple[int, ...] | None = None
    """The seats that may see it: None for every seat (public); () for none of them, only the
    record (a seat's hidden move, a moderator's note)."""

    def visible(self, seat: int) -> bool:
        return self.visible_to is None or seat in self.visible_to


@dataclass(frozen=True)
class LlmCallRecord:
    episode_id: str | None
    model: str
    seq: int | None = None
    player: int | None = None
    round: int | None = None
    cache_key: str | None = None
    request: Any = None
    response: Any = None
    text: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    cached: bool = False
    error: str | None = None
    created_at: str = ""
    id: int = field(default=0, compare=False)
    """Row id in this store; not part of the call's identity (differs after an import)."""
    cached_input_tokens: int = 0
    """Of `input_tokens`, those the provider's prompt cache read (billed at its discount)."""
    cache_write_tokens: int = 0
    """Of `input_tokens`, those written to the provider's prompt cache (Anthropic)."""
    saved_usd: float = 0.0
    """What the prompt cache saved on this call against full-rate input (`Response.saved_usd`)."""


@dataclass(frozen=True)
class AnswerRecord:
    episode_id: str
    round: int | None
    player: int
    question_id: str
    answer: str | None
    question: str | None = None
    parsed: Any = None
    correct: bool | None = None


@dataclass(frozen=True)
class BeliefRecord:
    episode_id: str
    round: int | None
    player: int
    order: int
    """Order of theory of mind: 0 = about its own situation, 1 = about another player, 2 = what
    it believes another believes, ... (`agents.base.Belief`)."""
    content: Any
    about_player: int | None = None
    score: float | None = None


@dataclass(frozen=True)
class EpisodeBundle:
    """A whole episode with everything recorded about it: what export writes and import reads."""

    episode: EpisodeRecord
    rounds: tuple[RoundRecord, ...] = ()
    events: tuple[EventRecord, ...] = ()
    llm_calls: tuple[LlmCallRecord, ...] = ()
    answers: tuple[AnswerRecord, ...] = ()
    beliefs: tuple[BeliefRecord, ...] = ()


@dataclass(frozen=True)
class MatchEntry:
    """One finished rule-based match, as `record_matches` takes it."""

    experiment_id: str
    episode_id: str
    game: NormalFormGame
    """The stage game: gives the labels, the payoff tensor and the per-round payoffs."""
    players: Sequence[PlayerLike]
    seed: int | str | None
    result: MatchResult
    spec: Mapping[str, Any] | None = None
    game_name: str | None = None
    """Name stored for the game; the stage game's name by default."""


# -- helpers --------------------------------------------------------------------------------------


def now() -> str:
    """The current time as an ISO-8601 UTC string (millisecond precision)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


_STORED_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)
"""Built once: `json.dumps` with options builds an encoder per call, and a step stores several."""


def dump_json(value: Any, what: str) -> str:
    try:
        return _STORED_JSON.encode(value)
    except (TypeError, ValueError) as exc:
        raise StratagemError(f"cannot store {what}: not JSON ({exc})") from None


def dump_optional(value: Any, what: str) -> str | None:
    return None if value is None else dump_json(value, what)


def load_json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


_SECRET_KEY_JSON = re.compile(
    '"(?:' + "|".join(re.escape(key) for key in sorted(SECRET_KEYS)) + ')":', re.IGNORECASE
)
_KELVIN = "\\u212a"
"""The one non-ASCII letter whose lower case is a letter of a secret key ("K" -> "k"), as stored
JSON (ASCII only) writes it."""


@dataclass(frozen=True)
class EncodedJson:
    """A value given as its JSON text, encoded already (a request as its cache key encoded it):
    stored as it is, after the same check for credentials."""

    text: str


def dump_redacted(value: Any, what: str) -> str | None:
    """`value` as stored JSON with credentials redacted. Redacting walks every message of a
    request, so it runs only when the JSON holds a secret-looking key (in any case, as `redact`
    compares them): most calls carry none, and the walk cost more than the insert."""
    if value is None:
        return None
    text = value.text if isinstance(value, EncodedJson) else dump_json(value, what)
    # The Kelvin sign raw (an encoded request keeps non-ASCII text) or escaped (ours).
    if "\u212a" in text or _KELVIN in text or _SECRET_KEY_JSON.search(text):
        text = dump_json(redact(json.loads(text)), what)
    return text


def redact(value: Any) -> Any:
    """Drop credentials that a request or response might carry: no secret is ever stored."""
    if isinstance(value, Mapping):
        return {
            k: "[redacted]" if str(k).lower() in SECRET_KEYS else redact(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def player_descriptor(player: PlayerLike, kind: str | None = None) -> dict[str, Any]:
    """A player descriptor from a bare name or a mapping; a mapping must have a "name"."""
    if isinstance(player, str):
        desc: dict[str, Any] = {"name": player}
    else:
        desc = dict(player)
        if not isinstance(desc.get("name"), str):
            raise StratagemError(f"player descriptor {desc!r} needs a 'name' string")
    if kind is not None:
        desc.setdefault("kind", kind)
    return desc


def check_numbers(values: Sequence[Any], n: int, what: str) -> list[float]:
    if len(values) != n:
        raise StratagemError(f"{what}: expected {n} numbers, got {len(values)}")
    out = []
    for x in values:
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
            raise StratagemError(f"{what}: expected finite numbers, got {x!r}")
        out.append(float(x))
    return out


def check_tokens(values: Sequence[Any] | None, n: int, what: str) -> list[int | None] | None:
    if values is None:
        return None
    if len(values) != n:
        raise StratagemError(f"{what}: expected {n} token counts, got {len(values)}")
    for x in values:
        if x is not None and (isinstance(x, bool) or not isinstance(x, int) or x < 0):
            raise StratagemError(f"{what}: token counts must be integers >= 0 or null, got {x!r}")
    return list(values)


def check_seed(seed: Any) -> int | str | None:
    if seed is None or isinstance(seed, str):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise StratagemError(f"seed must be an integer, a string or None, got {seed!r}")
    return seed


EPISODE_COLUMNS = (
    "id, experiment_id, game, players, seed, status, spec, labels, game_payoffs, payoffs, "
    "started_at, finished_at, source, error"
)


def episode_from_row(row: sqlite3.Row) -> EpisodeRecord:
    labels = load_json(row["labels"])
    payoffs = load_json(row["payoffs"])
    return EpisodeRecord(
        id=row["id"],
        experiment_id=row["experiment_id"],
        game=row["game"],
        players=tuple(load_json(row["players"])),
        seed=row["seed"],
        status=row["status"],
        spec=load_json(row["spec"]),
        labels=None if labels is None else tuple(tuple(ls) for ls in labels),
        game_payoffs=load_json(row["game_payoffs"]),
        payoffs=None if payoffs is None else tuple(payoffs),
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        source=row["source"],
        error=row["error"],
    )


def check_visibility(value: Any, what: str) -> tuple[int, ...] | None:
    """Seats an event is visible to: None (public) or a list of seat numbers >= 0."""
    if value is None:
        return None
    if not isinstance(value, list | tuple) or any(
        isinstance(p, bool) or not isinstance(p, int) or p < 0 for p in value
    ):
        raise StratagemError(f"{what}: visible_to must be null or a list of seats, got {value!r}")
    return tuple(sorted(set(value)))


def event_from_row(row: sqlite3.Row) -> EventRecord:
    visible = load_json(row["visible_to"])
    return EventRecord(
        row["episode_id"],
        row["seq"],
        row["kind"],
        load_json(row["data"]),
        row["round"],
        row["player"],
        None if visible is None else tuple(visible),
    )


def round_from_row(row: sqlite3.Row) -> RoundRecord:
    payoffs = load_json(row["payoffs"])
    tokens = load_json(row["tokens"])
    return RoundRecord(
        episode_id=row["episode_id"],
        round=row["round"],
        actions=tuple(load_json(row["actions"])),
        payoffs=None if payoffs is None else tuple(payoffs),
        valid=bool(row["valid"]),
        tokens=None if tokens is None else tuple(tokens),
    )
