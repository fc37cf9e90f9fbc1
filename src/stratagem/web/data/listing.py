"""An experiment's episodes one page at a time, filtered and searched in SQL.

10,000 episodes must stay fast: the filters and the search are SQL conditions, the page is cut
with LIMIT/OFFSET, and only the page's rows are decoded. The search is SQL LIKE over the replies
(plain text) and over the requests' messages and the events (stored JSON, where a quote, a
newline or a non-ASCII letter is escaped, so the query is looked for escaped too).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from stratagem.analysis.episodes import EpisodeData, seat_of
from stratagem.errors import StratagemError
from stratagem.experiments.records import EPISODE_COLUMNS, STATUSES, episode_from_row
from stratagem.experiments.store import ResultStore

MAX_PER_PAGE = 500
"""The most episodes one page may ask for (a page is one response)."""

_ANY_SEAT = "EXISTS (SELECT 1 FROM json_each(e.players) p WHERE {})"
_INVALID = "EXISTS (SELECT 1 FROM events v WHERE v.episode_id = e.id AND v.kind = 'invalid')"


def _game(value: str) -> tuple[str, list[Any]]:
    return "e.game = ?", [value]


def _status(value: str) -> tuple[str, list[Any]]:
    if value not in STATUSES:
        raise StratagemError(f"filter status='{value}': expected one of {', '.join(STATUSES)}")
    return "e.status = ?", [value]


def _model(value: str) -> tuple[str, list[Any]]:
    seat = "json_extract(p.value, '$.model_id') = ? OR json_extract(p.value, '$.model') = ?"
    spec = "json_extract(e.spec, '$.model_id') = ? OR json_extract(e.spec, '$.model') = ?"
    return f"({_ANY_SEAT.format(seat)} OR {spec})", [value] * 4


def _agent(value: str) -> tuple[str, list[Any]]:
    seat = "json_extract(p.value, '$.agent') = ? OR json_extract(p.value, '$.agent.name') = ?"
    return f"({_ANY_SEAT.format(seat)} OR json_extract(e.spec, '$.agent.name') = ?)", [value] * 3


def _seat_kind(value: str) -> tuple[str, list[Any]]:
    return _ANY_SEAT.format("json_extract(p.value, '$.kind') = ?"), [value]


def _invalid(value: str) -> tuple[str, list[Any]]:
    if value not in ("0", "1"):
        raise StratagemError(f"filter invalid='{value}': expected 1 (invalid > 0) or 0 (none)")
    return (_INVALID if value == "1" else f"NOT {_INVALID}"), []


FILTERS: dict[str, Callable[[str], tuple[str, list[Any]]]] = {
    "game": _game,
    "model": _model,
    "agent": _agent,
    "seat_kind": _seat_kind,
    "status": _status,
    "invalid": _invalid,
}
"""Each filter a page may set, as the SQL condition it adds."""


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
) -> dict[str, Any]:
    """The page of `Sources.episodes` (see `stratagem.web.data`)."""
    if page < 0 or not 1 <= per_page <= MAX_PER_PAGE:
        raise StratagemError(
            f"page {page}, {per_page} per page: expected a page >= 0 and 1 to {MAX_PER_PAGE} "
            "per page"
        )
    where, params = ["e.experiment_id = ?"], [experiment]
    for name, value in filters.items():
        make = FILTERS.get(name)
        if make is None:
            raise StratagemError(f"unknown filter '{name}': expected {', '.join(FILTERS)}")
        sql, values = make(value)
        where.append(sql)
        params += values
    if query:
        sql, values = _search(query)
        where.append(sql)
        params += values
    condition = " AND ".join(where)
    total = store._rows(f"SELECT COUNT(*) FROM episodes e WHERE {condition}", params)[0][0]
    columns = ", ".join(f"e.{c.strip()}" for c in EPISODE_COLUMNS.split(","))
    rows = store._rows(
        f"SELECT {columns}, (SELECT COUNT(*) FROM events v WHERE v.episode_id = e.id "
        f"AND v.kind = 'invalid') AS invalid FROM episodes e WHERE {condition} "
        "ORDER BY e.rowid LIMIT ? OFFSET ?",
        [*params, per_page, page * per_page],
    )
    return {"total": total, "page": page, "per_page": per_page, "items": [_item(r) for r in rows]}


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
