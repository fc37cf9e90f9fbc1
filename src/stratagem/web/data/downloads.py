"""Downloads of what the viewer shows (issue 36 item 9): a filtered episode list as any table of
`stratagem.open` (`analysis.frames.StoreFrames`, restricted to the listed episodes), the cells
table and a diff as CSV, JSONL or Parquet, and one episode as a line of the documented episode
format (`experiments.episode_export`). The live server streams them; the static export writes
them beside its data.

**CSV and formulas.** A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (or a tab
or carriage return before one) as a formula, so a model's reply could become one. In a CSV every
text cell that starts with one of these characters gets a leading `'`, which spreadsheets show
as text; numbers are written as numbers. JSONL and Parquet hold the values unchanged.

**Sizes.** A download holds at most `MAX_ROWS` rows: a larger one is refused with one line that
says to filter the list or use `stratagem export` / `stratagem.open`.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from stratagem.analysis.frames import TABLES, StoreFrames, _arrow_schema
from stratagem.errors import StratagemError
from stratagem.experiments.episode_export import export_episodes
from stratagem.experiments.store import ResultStore
from stratagem.web.data.listing import MAX_PER_PAGE, BadQuery

if TYPE_CHECKING:
    from stratagem.web.data.sources import Sources

FORMATS = {
    "csv": "text/csv; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
}
"""Each format a table downloads as, and its media type."""
MAX_ROWS = 200_000
"""The most rows one download holds."""
FORMULA = ("=", "+", "-", "@", "\t", "\r")
"""What a CSV text cell must not start with (module docstring)."""


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise BadQuery(f"download format '{fmt}': expected one of {', '.join(FORMATS)}")
    return fmt


def file_name(*parts: str, fmt: str) -> str:
    """A download's file name: its parts in safe ASCII, for a Content-Disposition header."""
    stem = "-".join(re.sub(r"[^A-Za-z0-9._]+", "_", p).strip("._") or "x" for p in parts)
    return f"{stem[:120]}.{fmt}"


def _bounded(rows: int) -> None:
    if rows > MAX_ROWS:
        raise BadQuery(
            f"this download has {rows} rows, more than {MAX_ROWS}: filter the list, or use "
            "`stratagem export` or stratagem.open for the whole store"
        )


def episodes_table(store: ResultStore, experiment: str, ids: Sequence[str], table: str) -> Any:
    """Table `table` of `stratagem.open` for the episodes `ids` (an episode list's): the rows
    whose `episode_id` is one of them, in the store's order."""
    if table not in TABLES:
        raise BadQuery(f"download table '{table}': expected one of {', '.join(TABLES)}")
    frame: pd.DataFrame = StoreFrames(store, experiment).frame(table)
    kept = frame[frame["episode_id"].isin(set(ids))].reset_index(drop=True)
    _bounded(len(kept))
    return kept


def cells_table(cells: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The cells table as one row per cell: its line-up as text, a column per seat's score,
    any other list as JSON text."""
    rows = []
    for c in cells:
        row = {k: _text(v) for k, v in c.items() if k not in ("score", "lineup")}
        row["lineup"] = ", ".join(c["lineup"])
        row.update({f"score_seat_{k}": s for k, s in enumerate(c["score"])})
        rows.append(row)
    _bounded(len(rows))
    return _uniform(pd.DataFrame(rows))


def diff_table(diff: Mapping[str, Any], noise_only: bool = False) -> pd.DataFrame:
    """A diff as one row per shared cell and metric (the page's table); with `noise_only`, only
    the cells with a difference beyond the noise (`web.data.diff`)."""
    rows = []
    for cell in diff["cells"]:
        if noise_only and not any(m["beyond_noise"] for m in cell["metrics"]):
            continue
        label = {k: _text(v) for k, v in cell.items() if k not in ("metrics", "lineup")}
        for m in cell["metrics"]:
            rows.append({**label, "lineup": ", ".join(cell["lineup"]), **m})
    _bounded(len(rows))
    return _uniform(pd.DataFrame(rows))


def _text(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value


def _uniform(frame: pd.DataFrame) -> pd.DataFrame:
    """A text column where a column mixes types (a cell's rounds: a count, or "—" without):
    one Parquet type per column."""
    for name in frame.columns:
        kinds = {type(v) for v in frame[name] if v is not None and v == v}
        if len(kinds) > 1 and not kinds <= {int, float}:
            frame[name] = frame[name].map(lambda v: None if v is None else str(v))
    return frame


def encode(frame: pd.DataFrame, fmt: str, table: str | None = None) -> bytes:
    """`frame` as a file of `fmt`; `table` a `StoreFrames` table's name, whose declared column
    types a Parquet file keeps (as `analysis.frames.write_parquet` writes it)."""
    check_format(fmt)
    if fmt == "csv":
        guarded = frame.copy()
        for name in guarded.columns:
            if not pd.api.types.is_numeric_dtype(guarded[name]):
                guarded[name] = guarded[name].map(_guard)
        return str(guarded.to_csv(index=False, lineterminator="\n")).encode()
    if fmt == "jsonl":
        lines = (
            json.dumps(_plain(row), ensure_ascii=False, default=str) + "\n"
            for row in frame.to_dict(orient="records")
        )
        return "".join(lines).encode()
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _arrow_schema(table, frame) if table is not None else None
    data = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    out = io.BytesIO()
    pq.write_table(data, out)
    return out.getvalue()


def _guard(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA):
        return "'" + value
    return value


def _plain(row: Mapping[Any, Any]) -> dict[Any, Any]:
    """A row's missing values (NaN, pandas' NA) as JSON null."""
    return {k: None if v is pd.NA or (isinstance(v, float) and v != v) else v
            for k, v in row.items()}  # fmt: skip


def episode_jsonl(store: ResultStore, episode_id: str) -> bytes:
    """One episode as its line of the documented episode format (docs/episode-format.md)."""
    out = io.StringIO()
    export_episodes(store, out, episode_ids=[episode_id])
    return out.getvalue().encode()


CELL_FILTERS = ("game", "model", "agent")
"""The filters a cells table or a diff follows (cells.js): what a cell is made of."""


def _of_cell(row: Mapping[str, Any], filters: Mapping[str, str]) -> bool:
    return all(str(row.get(k)) == v for k, v in filters.items() if k in CELL_FILTERS and v)


def listed_ids(
    sources: Sources,
    source: str,
    experiment: str,
    filters: Mapping[str, str],
    query: str | None,
) -> list[str]:
    """Every episode id the filtered, searched list holds, page by page as the list reads."""
    ids: list[str] = []
    page = 0
    while True:
        got = sources.episodes(
            source, experiment, filters=filters, query=query, page=page, per_page=MAX_PER_PAGE
        )
        ids += [item["id"] for item in got["items"]]
        _bounded(len(ids))
        page += 1
        if page * MAX_PER_PAGE >= got["total"]:
            return ids


def experiment_file(
    sources: Sources,
    source: str,
    experiment: str,
    what: str,
    fmt: str,
    filters: Mapping[str, str],
    query: str | None = None,
) -> tuple[str, bytes]:
    """(file name, bytes) of an experiment's `cells` (the rows its filters keep, counted as the
    page counts them: `Sources.cells`) or of a table of `stratagem.open` (`what` one of
    `TABLES`) for its filtered episode list."""
    check_format(fmt)
    if what == "cells":
        counted = sources.cells(source, experiment, filters=filters, query=query)
        cells = [c for c in counted if _of_cell(c, filters)]
        return file_name(experiment, "cells", fmt=fmt), encode(cells_table(cells), fmt)
    ids = listed_ids(sources, source, experiment, filters, query)
    with sources.reading(source, experiment) as store:
        frame = episodes_table(store, experiment, ids, what)
    return file_name(experiment, what, fmt=fmt), encode(frame, fmt, what)


def diff_file(
    sources: Sources,
    a: tuple[str, str],
    b: tuple[str, str],
    fmt: str,
    filters: Mapping[str, str],
    noise_only: bool = False,
) -> tuple[str, bytes]:
    """(file name, bytes) of the diff of `b` against `a`, its cells kept as the page keeps them."""
    check_format(fmt)
    got = sources.diff(a, b)
    got = {**got, "cells": [c for c in got["cells"] if _of_cell(c, filters)]}
    return file_name("diff", a[1], b[1], fmt=fmt), encode(diff_table(got, noise_only), fmt)


def episode_file(sources: Sources, source: str, episode_id: str) -> tuple[str, bytes]:
    """(file name, bytes) of one episode as JSONL: every seat's view (the whole record)."""
    with sources.reading(source) as store:
        if store.episode(episode_id) is None:
            raise StratagemError(f"source {source}: unknown episode '{episode_id}'")
        return file_name(episode_id, fmt="jsonl"), episode_jsonl(store, episode_id)
