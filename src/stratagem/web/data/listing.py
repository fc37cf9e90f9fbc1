"""An experiment's episodes one page at a time, filtered and searched in SQL.

10,000 episodes must stay fast: the filters and the search are SQL conditions, the page is cut
with LIMIT/OFFSET, and only the page's rows are decoded. The search is SQL LIKE over the replies
(plain text) and over the requests' messages and the events (stored JSON, where a quote, a
newline or a non-ASCII letter is escaped, so the query is looked for escaped too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stratagem.analysis.episodes import EpisodeData, seat_of
from stratagem.errors import StratagemError
from stratagem.experiments.records import EPISODE_COLUMNS, STATUSES, episode_from_row
from stratagem.experiments.store import ResultStore


class BadQuery(StratagemError):
    """A request the data layer cannot answer as asked (a filter's value, a page): the server
    answers it 400, where an unknown source, experiment or episode is 404."""


MAX_PER_PAGE = 500
"""The most episodes one page may ask for (a page is one response)."""

_ANY_SEAT = "EXISTS (SELECT 1 FROM json_each(e.players) p WHERE {})"
_INVALID_MOVES = (
    "SELECT a.key AS seat, r.round FROM rounds r, json_each(r.actions) a "
    "WHERE r.episode_id = e.id AND a.type = 'null' UNION "
    "SELECT v.player, v.round FROM events v WHERE v.episode_id = e.id AND v.player IS NOT NULL "
    "AND v.round IS NOT NULL AND (v.kind = 'invalid' OR (v.kind = 'decision' "
    "AND json_type(v.data, '$.valid') = 'false'))"
)
"""Each (seat, round) in which a seat moved invalidly, as `analysis.invalid.invalid_rounds`
defines it for the cells table: a round that stores no move for the seat (an imported log's
forfeit), an `invalid` event, or a decision stored as not valid (played episodes)."""
_INVALID = f"EXISTS ({_INVALID_MOVES})"


def _game(value: str) -> tuple[str, list[Any]]:
    return "e.game = ?", [value]


def _status(value: str) -> tuple[str, list[Any]]:
    if value not in STATUSES:
        raise BadQuery(f"filter status='{value}': expected one of {', '.join(STATUSES)}")
    return "e.status = ?", [value]


def _model(value: str) -> tuple[str, list[Any]]:
    seat = "json_extract(p.value, '$.model_id') = ? OR json_extract(p.value, '$.model') = ?"
    spec = "json_extract(e.spec, '$.model_id') = ? OR json_extract(e.spec, '$.model') = ?"
    return f"({_ANY_SEAT.format(seat)} OR {spec})", [value] * 4


_NAME = "json_extract(p.value, '$.name')"
_UNNAMED_AGENT = (
    "(json_extract(p.value, '$.agent') IS NULL AND json_extract(p.value, '$.kind') = 'llm' AND "
    f"(CASE WHEN instr({_NAME}, ':') > 0 THEN substr({_NAME}, 1, instr({_NAME}, ':') - 1) "
    f"ELSE {_NAME} END) = ?)"
)
"""An LLM seat that names no agent (an imported log's `{"name": "zs", "kind": "llm"}`) is the
agent its name says, before any `:`: what `EpisodeData.agent_name`, and so the cells table and
the episode list's agent column, read from it."""


def _agent(value: str) -> tuple[str, list[Any]]:
    seat = (
        "json_extract(p.value, '$.agent') = ? OR json_extract(p.value, '$.agent.name') = ? OR "
        + _UNNAMED_AGENT
    )
    return f"({_ANY_SEAT.format(seat)} OR json_extract(e.spec, '$.agent.name') = ?)", [value] * 4


def _seat_kind(value: str) -> tuple[str, list[Any]]:
    return _ANY_SEAT.format("json_extract(p.value, '$.kind') = ?"), [value]


def _invalid(value: str) -> tuple[str, list[Any]]:
    if value not in ("0", "1"):
        raise BadQuery(f"filter invalid='{value}': expected 1 (invalid > 0) or 0 (none)")
    return (_INVALID if value == "1" else f"NOT {_INVALID}"), []


_TOP = "(SELECT MAX(t.value) FROM json_each(e.payoffs) t)"
_FINISHED = "e.payoffs IS NOT NULL AND json_array_length(e.payoffs) > 1"
_SPY = (
    "EXISTS (SELECT 1 FROM events o WHERE o.episode_id = e.id AND o.kind = 'outcome' "
    "AND json_type(o.data, '$.win_flag') = 'integer' AND json_extract(o.data, '$.win_flag') {})"
)
_SEAT_WON = re.compile(r"seat (\d+) won")
OUTCOMES = {
    # All seats' stored totals equal.
    "draw": f"{_FINISHED} AND {_TOP} = (SELECT MIN(t.value) FROM json_each(e.payoffs) t)",
    # Two or more seats, not all, share the highest total.
    "tie": f"{_FINISHED} AND (SELECT COUNT(*) FROM json_each(e.payoffs) t WHERE t.value = {_TOP})"
    f" BETWEEN 2 AND json_array_length(e.payoffs) - 1",
    # seed-004 §6.4 [C]: the spy (chameleon, undercover) won when its outcome's win_flag != 0.
    "spy won": _SPY.format("!= 0"),
    "spy lost": _SPY.format("= 0"),
}
"""The outcomes an episode can be filtered by, besides "seat K won" (seat K alone has the highest
stored total): each the SQL condition that defines it, over the stored payoffs (the episode's
totals) or, for the MAgIC social-deduction games, the stored outcome's win flag."""


def _outcome(value: str) -> tuple[str, list[Any]]:
    """The one place an episode's outcome is derived (the export's filter index uses it too)."""
    if value in OUTCOMES:
        return OUTCOMES[value], []
    won = _SEAT_WON.fullmatch(value)
    if won is None:
        raise BadQuery(f"filter outcome='{value}': expected 'seat K won', {', '.join(OUTCOMES)}")
    seat = int(won.group(1))
    return (
        f"{_FINISHED} AND json_array_length(e.payoffs) > ? AND NOT EXISTS (SELECT 1 FROM "
        "json_each(e.payoffs) t WHERE t.key != ? AND t.value >= json_extract(e.payoffs, ?))",
        [seat, seat, f"$[{seat}]"],
    )


def outcome_values(seats: int) -> list[str]:
    """Every outcome an episode of at most `seats` seats can have, as the filter takes it."""
    return [*(f"seat {k} won" for k in range(seats)), *OUTCOMES]


FILTERS: dict[str, Callable[[str], tuple[str, list[Any]]]] = {
    "game": _game,
    "model": _model,
    "agent": _agent,
    "seat_kind": _seat_kind,
    "status": _status,
    "invalid": _invalid,
    "outcome": _outcome,
}
"""Each filter a page may set, as the SQL condition it adds."""
GROUP = "group"
"""The filter to a leaderboard row's episodes (`web.data.analysis`): its value is the row's
group key, which the caller resolves to the ids (`episode_page`'s `groups`)."""


def _group(value: str, groups: Mapping[str, Sequence[str]]) -> tuple[str, list[Any]]:
    ids = groups.get(value)
    if ids is None:
        raise BadQuery(f"filter group='{value}': no leaderboard row of this experiment has it")
    return "e.id IN (SELECT value FROM json_each(?))", [json.dumps(list(ids))]


CELL = "cell"
"""The filter to one cell's finished episodes (the cells table's rows): its value is the cell's
key as `cell_text` writes it, which the caller resolves to the ids (`episode_page`'s `cells`)."""


def cell_text(key: Sequence[Any]) -> str:
    """A cell's key (`analysis.cells.cell_key`) as one filter value: compact JSON."""
    return json.dumps(list(key), ensure_ascii=False, separators=(",", ":"))


def _cell(value: str, cells: Mapping[str, Sequence[str]]) -> tuple[str, list[Any]]:
    ids = cells.get(value)
    if ids is None:
        raise BadQuery(f"filter cell='{value}': no cell of this experiment has this key")
    return "e.id IN (SELECT value FROM json_each(?))", [json.dumps(list(ids))]


def _like(text: str) -> str:
    return "%" + text.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%"


def _search(query: str) -> tuple[str, list[Any]]:
    """Episodes with `query` in a reply, a request's messages or an event (SQL LIKE)."""
    raw, escaped = _like(query), _like(json.dumps(query)[1:-1])
    sql = (
        "(EXISTS (SELECT 1 FROM llm_calls c WHERE c.episode_id = e.id AND (c.text LIKE ? "
        "ESCAPE '!' OR c.request LIKE ? ESCAPE '!' OR c.request LIKE ? ESCAPE '!')) "
        "OR EXISTS (SELECT 1 FROM events d WHERE d.episode_id = e.id AND (d.data LIKE ? "
        "ESCAPE '!' OR d.data LIKE ? ESCAPE '!')))"
    )
    return sql, [raw, raw, escaped, raw, escaped]


def episode_page(
    store: ResultStore,
    experiment: str,
    filters: Mapping[str, str],
    query: str | None,
    page: int,
    per_page: int,
    groups: Mapping[str, Sequence[str]] | None = None,
    cells: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The page of `Sources.episodes` (see `stratagem.web.data`); `groups` the leaderboard
    rows' episode ids by group key, for a `group` filter; `cells` each cell's, for `cell`."""
    if page < 0 or not 1 <= per_page <= MAX_PER_PAGE:
        raise BadQuery(
            f"page {page}, {per_page} per page: expected a page >= 0 and 1 to {MAX_PER_PAGE} "
            "per page"
        )
    condition, params = _condition(experiment, filters, query, groups, cells)
    total = store._rows(f"SELECT COUNT(*) FROM episodes e WHERE {condition}", params)[0][0]
    columns = ", ".join(f"e.{c.strip()}" for c in EPISODE_COLUMNS.split(","))
    rows = store._rows(
        f"SELECT {columns}, (SELECT COUNT(*) FROM ({_INVALID_MOVES})) AS invalid "
        f"FROM episodes e WHERE {condition} "
        "ORDER BY e.rowid LIMIT ? OFFSET ?",
        [*params, per_page, page * per_page],
    )
    return {"total": total, "page": page, "per_page": per_page, "items": [_item(r) for r in rows]}


def episode_ids(
    store: ResultStore,
    experiment: str,
    filters: Mapping[str, str],
    query: str | None,
    groups: Mapping[str, Sequence[str]] | None = None,
    cells: Mapping[str, Sequence[str]] | None = None,
) -> set[str]:
    """The ids of every episode `episode_page` would list: what the cells are counted over
    when the list is filtered (`Sources.cells`), and the export's filter index."""
    condition, params = _condition(experiment, filters, query, groups, cells)
    return {r[0] for r in store._rows(f"SELECT e.id FROM episodes e WHERE {condition}", params)}


def _condition(
    experiment: str,
    filters: Mapping[str, str],
    query: str | None,
    groups: Mapping[str, Sequence[str]] | None,
    cells: Mapping[str, Sequence[str]] | None,
) -> tuple[str, list[Any]]:
    """The list's SQL condition, one for the page and the ids, so they cannot disagree."""
    where, params = ["e.experiment_id = ?"], [experiment]
    for name, value in filters.items():
        make = FILTERS.get(name)
        if name == GROUP:
            sql, values = _group(value, groups or {})
        elif name == CELL:
            sql, values = _cell(value, cells or {})
        elif make is None:
            raise BadQuery(
                f"unknown filter '{name}': expected {', '.join(FILTERS)}, {GROUP} or {CELL}"
            )
        else:
            sql, values = make(value)
        where.append(sql)
        params += values
    if query:
        sql, values = _search(query)
        where.append(sql)
        params += values
    return " AND ".join(where), params


def _item(row: Any) -> dict[str, Any]:
    record = episode_from_row(row)
    data = EpisodeData(record, (), ())
    return {
        "id": record.id,
        "game": record.game,
        "model": data.model,
        "agent": data.agent_name,
        "seats": [f"{s.name} ({s.kind})" for s in map(seat_of, record.players)],
        "status": record.status,
        "payoffs": None if record.payoffs is None else list(record.payoffs),
        "invalid": int(row["invalid"]),
    }
