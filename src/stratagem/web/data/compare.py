"""Two episodes side by side (issue 25 item 6): steps aligned, the first differing step marked,
and the pairs worth comparing offered without the user hunting for them.

Alignment works on the episode dicts `Sources.episode()` returns, so a seat's perspective applies
to both sides by construction: an action hidden from the seat is not in its dict, so it is not
compared either. Pairs come from the stored records alone (their spec and game names), found
for one episode at a time through SQL on its seed, so every pair of a large experiment is
offered, not the first few of a global list.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from stratagem.analysis.episodes import seat_of
from stratagem.experiments.records import EPISODE_COLUMNS, EpisodeRecord, episode_from_row
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import GAMES, catalog_name


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


def _round_actions(episode: Mapping[str, Any]) -> dict[int, dict[str, Any]] | None:
    """Each round's actions, by round number, of an episode whose steps hold round results (a
    repeated game, played or imported); None for a game without rounds."""
    out: dict[int, dict[str, Any]] = {}
    for step in episode.get("steps") or []:
        if step.get("results") and isinstance(step.get("round"), int):
            out.setdefault(step["round"], {}).update(step_actions(step))
    return out or None


def align(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """The two episodes aligned, each row with both sides' rounds and actions, and the index of
    the first row whose actions differ (None when none does): by round when both store round
    results (a played game has a step per decision, an imported log one per round, so rounds are
    what the two share), else by step index. `by` says which."""
    rounds_a, rounds_b = _round_actions(a), _round_actions(b)
    sides: list[tuple[Any, Any, dict[str, Any] | None, dict[str, Any] | None]]
    if rounds_a is not None and rounds_b is not None:
        numbers = sorted(set(rounds_a) | set(rounds_b))
        sides = [(n, n, rounds_a.get(n), rounds_b.get(n)) for n in numbers]
        by = "round"
    else:
        steps_a, steps_b = a.get("steps") or [], b.get("steps") or []
        sides = []
        for i in range(max(len(steps_a), len(steps_b))):
            sa = steps_a[i] if i < len(steps_a) else None
            sb = steps_b[i] if i < len(steps_b) else None
            sides.append((
                None if sa is None else sa.get("round"), None if sb is None else sb.get("round"),
                None if sa is None else step_actions(sa), None if sb is None else step_actions(sb),
            ))  # fmt: skip
        by = "step"
    rows: list[dict[str, Any]] = []
    first: int | None = None
    for i, (round_a, round_b, acts_a, acts_b) in enumerate(sides):
        same = acts_a == acts_b
        if not same and first is None:
            first = i
        rows.append({"index": i, "round_a": round_a, "round_b": round_b,
                     "a": acts_a, "b": acts_b, "same": same})  # fmt: skip
    return {"by": by, "steps": rows, "first_difference": first}


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


def _signature(record: EpisodeRecord) -> tuple[Any, ...]:
    """What may differ within a pair: the game, the models (the seats' and the spec's), the
    agents."""
    return record.game, (_models(record), record.spec.get("model")), _agents(record)


def _differs(a: tuple[Any, ...], b: tuple[Any, ...]) -> str | None:
    """Why two episodes of one cell (their `_signature`s) are a pair: exactly one of the game
    (a variant), the models, or the agents differs; None otherwise."""
    changed = [x != y for x, y in zip(a, b, strict=True)]
    if changed.count(True) != 1:
        return None
    return "variant" if changed[0] else "model" if changed[1] else "agent"


def _side(source: str, record: EpisodeRecord) -> dict[str, Any]:
    return {"source": source, "episode": record.id, "game": record.game,
            "models": _models(record), "agents": _agents(record)}  # fmt: skip


_CANDIDATES = (
    f"SELECT {', '.join(f'e.{c.strip()}' for c in EPISODE_COLUMNS.split(','))} FROM episodes e "
    "WHERE e.experiment_id = ? AND e.id != ? AND e.seed IS ?"
)
"""The episodes of an experiment that may share a cell with one episode: its seed, and its
spec's rounds and repetition where they are numbers, text or absent (`_cell` then compares the
rest on the few rows this finds)."""


def _candidates(store: ResultStore, record: EpisodeRecord) -> list[EpisodeRecord]:
    sql = _CANDIDATES
    params: list[Any] = [record.experiment_id, record.id, record.seed]
    for key in ("rounds", "repetition"):
        value = record.spec.get(key)
        if value is None or (isinstance(value, int | float | str) and not isinstance(value, bool)):
            sql += f" AND json_extract(e.spec, '$.{key}') IS ?"
            params.append(value)
    return [episode_from_row(row) for row in store._rows(sql + " ORDER BY e.rowid", params)]


def pairs_of(
    store: ResultStore, source: str, record: EpisodeRecord, twins: Mapping[str, EpisodeRecord]
) -> list[dict[str, Any]]:
    """Every pair one episode of `source` has, itself as side a: the same id in another source
    (`twins`: source -> that source's episode of the same id), then the episodes of its
    experiment in its cell under another model, agent kind or variant, found through SQL on its
    seed, rounds and repetition, not by reading the whole experiment."""
    out = [{"kind": "same-id", "a": _side(source, record), "b": _side(other, twin)}
           for other, twin in twins.items()]  # fmt: skip
    cell, mine = _cell(record), _signature(record)
    for other in _candidates(store, record):
        kind = _differs(mine, _signature(other)) if _cell(other) == cell else None
        if kind is not None:
            out.append({"kind": kind, "a": _side(source, record), "b": _side(source, other)})
    return out


def pairs(
    source: str,
    records: Sequence[EpisodeRecord],
    others: Mapping[str, Mapping[str, EpisodeRecord]],
    wanted: Collection[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """`pairs_of` for each of an experiment's `records` at once, by episode id (the static
    export's: one pass over the records it holds, grouped by cell); `others` holds each
    other source's episodes of the same ids; `wanted` the ids whose pairs are asked (None:
    every record's), so an export of a few episodes pairs only those."""
    out: dict[str, list[dict[str, Any]]] = {
        r.id: [] for r in records if wanted is None or r.id in wanted
    }
    sides: dict[int, dict[str, Any]] = {}  # each record's side, made once (records by identity)

    def side(record: EpisodeRecord) -> dict[str, Any]:
        if id(record) not in sides:
            sides[id(record)] = _side(source, record)
        return sides[id(record)]

    by_cell: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        if record.id in out:
            for other, found in others.items():
                twin = found.get(record.id)
                if twin is not None:
                    out[record.id].append(
                        {"kind": "same-id", "a": side(record), "b": _side(other, twin)}
                    )
        by_cell[_cell(record)].append(record)
    for group in by_cell.values():
        if not any(r.id in out for r in group):
            continue
        signed = [(r, _signature(r)) for r in group]
        for first, sig in signed:
            if first.id not in out:
                continue
            for second, theirs in signed:
                kind = None if first is second else _differs(sig, theirs)
                if kind is not None:
                    out[first.id].append({"kind": kind, "a": side(first), "b": side(second)})
    return out
