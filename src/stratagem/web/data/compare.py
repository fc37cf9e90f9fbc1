"""Two episodes side by side (issue 25 item 6): steps aligned, the first differing step marked,
and the pairs worth comparing offered without the user hunting for them.

Alignment works on the episode dicts `Sources.episode()` returns, so a seat's perspective applies
to both sides by construction: an action hidden from the seat is not in its dict, so it is not
compared either. Pairs come from the stored records alone (their spec and game names).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from stratagem.analysis.episodes import seat_of
from stratagem.experiments.records import EpisodeRecord
from stratagem.games.catalog import GAMES, catalog_name

MAX_PAIRS = 200
"""At most this many pairs are listed (issue 25 task: keep the page bounded)."""


def step_actions(step: Mapping[str, Any]) -> dict[str, Any]:
    """Each seat's action at a step, by seat number as text: the round results' actions (public
    once the round is over), and the `decision` events' actions the perspective holds."""
    out: dict[str, Any] = {}
    for result in step.get("results") or []:
        for seat, action in enumerate(result.get("actions") or []):
            out[str(seat)] = action
    for event in step.get("events") or []:
        data = event.get("data")
        decided = event.get("kind") == "decision" and event.get("player") is not None
        if decided and isinstance(data, dict) and "action" in data:
            out[str(event["player"])] = data["action"]
    return out


def align(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """The two episodes' steps aligned by index, each with both sides' rounds and actions, and
    the index of the first step whose actions differ (None when none does)."""
    steps_a, steps_b = a.get("steps") or [], b.get("steps") or []
    rows: list[dict[str, Any]] = []
    first: int | None = None
    for i in range(max(len(steps_a), len(steps_b))):
        sa = steps_a[i] if i < len(steps_a) else None
        sb = steps_b[i] if i < len(steps_b) else None
        acts_a = None if sa is None else step_actions(sa)
        acts_b = None if sb is None else step_actions(sb)
        same = acts_a == acts_b
        if not same and first is None:
            first = i
        rows.append({
            "index": i,
            "round_a": None if sa is None else sa.get("round"),
            "round_b": None if sb is None else sb.get("round"),
            "a": acts_a, "b": acts_b, "same": same,
        })  # fmt: skip
    return {"steps": rows, "first_difference": first}


def comparison(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """What `/api/compare` answers: both episode dicts and their alignment."""
    return {"a": dict(a), "b": dict(b), **align(a, b)}


def _base_game(game: str) -> str:
    """The default game a variant transforms (`games.catalog`'s `variant_of`), else the game."""
    entry = GAMES.get(catalog_name(game))
    if entry is not None and entry.variant_of is not None:
        return entry.variant_of
    return game


def _cell(record: EpisodeRecord) -> str:
    """What a pair shares: the base game, rounds, seed, repetition, game options and the seats
    without a model; what may differ within a pair: the model, the agents, or the variant."""
    spec = record.spec
    shared = {
        "game": _base_game(record.game),
        "rounds": spec.get("rounds"),
        "seed": record.seed,
        "repetition": spec.get("repetition"),
        "options": spec.get("game_options"),
        "opponent": spec.get("opponent"),
        # Seats without a model (strategies, people) are part of the cell, by name.
        "fixed": [s.name if not s.model else None for s in map(seat_of, record.players)],
    }
    return json.dumps(shared, sort_keys=True, default=str)


def _models(record: EpisodeRecord) -> list[str]:
    return [seat_of(p).model or "" for p in record.players]


def _agents(record: EpisodeRecord) -> list[str]:
    return [seat_of(p).agent or seat_of(p).name for p in record.players]


def _differs(a: EpisodeRecord, b: EpisodeRecord) -> str | None:
    """Why two episodes of one cell are a pair: exactly one of the game (a variant), the
    models, or the agents differs; None otherwise."""
    game = a.game != b.game
    models = _models(a) != _models(b) or a.spec.get("model") != b.spec.get("model")
    agents = _agents(a) != _agents(b)
    if [game, models, agents].count(True) != 1:
        return None
    return "variant" if game else "model" if models else "agent"


def _side(source: str, record: EpisodeRecord) -> dict[str, Any]:
    return {"source": source, "episode": record.id, "game": record.game,
            "models": _models(record), "agents": _agents(record)}  # fmt: skip


def pairs(
    source: str,
    records: Sequence[EpisodeRecord],
    others: Mapping[str, Mapping[str, EpisodeRecord]],
) -> list[dict[str, Any]]:
    """The pairs offered for an experiment's `records` of `source`: the same episode id in
    another source (`others`: source -> id -> record), then within the experiment the same cell
    under two models, two agent kinds, or a game and its variant. At most `MAX_PAIRS`."""
    out: list[dict[str, Any]] = []
    for record in records:
        for other, found in others.items():
            twin = found.get(record.id)
            if twin is not None:
                out.append({"kind": "same-id", "a": _side(source, record), "b": _side(other, twin)})
    by_cell: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        by_cell[_cell(record)].append(record)
    for group in by_cell.values():
        for i, first in enumerate(group):
            for second in group[i + 1 :]:
                kind = _differs(first, second)
                if kind is not None:
                    out.append({"kind": kind, "a": _side(source, first),
                                "b": _side(source, second)})  # fmt: skip
                if len(out) >= MAX_PAIRS:
                    return out[:MAX_PAIRS]
    return out[:MAX_PAIRS]
