"""A result store as pandas DataFrames, one per stored table, and as Parquet files.

Analysts reach for pandas, DuckDB and polars, not for SQLite and JSON columns: each frame here is
one table of the store as its own reads return it (`ResultStore.episodes`, `rounds`, `events`,
`llm_calls`, `beliefs`, `answers`), the store opened read-only, with the JSON columns that hold
one value per seat expanded to one row per seat (`seats`, `rounds`) and the others kept as JSON
text (a DuckDB `json_extract` or a `json.loads` reads them). docs/dataframes.md lists every
column. Requests and responses of model calls are stored with credentials redacted already
(`records.dump_redacted`), so no frame and no file written here can carry a key.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator
from os import PathLike
from pathlib import Path
from typing import Any, Self

import pandas as pd

from stratagem.analysis.invalid import invalid_rounds
from stratagem.errors import StratagemError
from stratagem.experiments.prompt_entry import variant_of
from stratagem.experiments.records import dump_optional
from stratagem.experiments.replicates import replicate_of
from stratagem.experiments.store import EpisodeRecord, ResultStore
from stratagem.experiments.store_files import one_store

Row = dict[str, Any]

COLUMNS: dict[str, dict[str, str]] = {
    "episodes": {
        "episode_id": "str",
        "experiment_id": "str",
        "game": "str",
        "seed": "object",
        "status": "str",
        "n_seats": "int64",
        "prompt": "str",
        "replicate": "int64",
        "started_at": "str",
        "finished_at": "str",
        "source": "str",
        "error": "str",
        "spec": "str",
        "labels": "str",
        "game_payoffs": "str",
    },
    "seats": {
        "episode_id": "str",
        "experiment_id": "str",
        "seat": "int64",
        "name": "str",
        "kind": "str",
        "model": "str",
        "agent": "str",
        "payoff": "float64",
        "player": "str",
    },
    "rounds": {
        "episode_id": "str",
        "round": "int64",
        "seat": "int64",
        "action": "str",
        "payoff": "float64",
        "tokens": "Int64",
        "valid": "bool",
    },
    "events": {
        "episode_id": "str",
        "seq": "int64",
        "round": "Int64",
        "seat": "Int64",
        "kind": "str",
        "data": "str",
        "visible_to": "str",
    },
    "calls": {
        "call_id": "int64",
        "experiment_id": "str",
        "episode_id": "str",
        "seq": "Int64",
        "seat": "Int64",
        "round": "Int64",
        "model": "str",
        "cache_key": "str",
        "cached": "bool",
        "error": "str",
        "input_tokens": "Int64",
        "output_tokens": "Int64",
        "cached_input_tokens": "int64",
        "cache_write_tokens": "int64",
        "cost_usd": "float64",
        "saved_usd": "float64",
        "latency_s": "float64",
        "created_at": "str",
        "text": "str",
        "request": "str",
        "response": "str",
    },
    "beliefs": {
        "episode_id": "str",
        "round": "Int64",
        "seat": "int64",
        "order": "int64",
        "about_seat": "Int64",
        "content": "str",
        "score": "float64",
    },
    "answers": {
        "episode_id": "str",
        "round": "Int64",
        "seat": "int64",
        "question_id": "str",
        "question": "str",
        "answer": "str",
        "parsed": "str",
        "correct": "boolean",
    },
}
"""Every frame's columns and their pandas dtypes ("str": text or missing; "object": `seed`,
integers where every seed is one, else text). docs/dataframes.md says what each one holds."""

TABLES: tuple[str, ...] = tuple(COLUMNS)


def _json(value: Any) -> str | None:
    """A JSON column's value as the store writes it (sorted keys, compact)."""
    return dump_optional(value, "a stored value")


def _action(value: Any) -> str | None:
    """A move: its label, or a structured action as JSON text (one type per Parquet column)."""
    return value if value is None or isinstance(value, str) else _json(value)


def _frame(table: str, rows: Iterable[Row]) -> pd.DataFrame:
    columns = COLUMNS[table]
    frame = pd.DataFrame(list(rows), columns=list(columns))
    for name, dtype in columns.items():
        if dtype == "str":
            frame[name] = frame[name].astype(object).where(frame[name].notna(), None)
        elif dtype != "object":
            frame[name] = frame[name].astype(pd.api.types.pandas_dtype(dtype))
    return frame


def _seed_column(frame: pd.DataFrame) -> None:
    """Seeds are integers or text (imports): one Parquet type, integers when all are."""
    seeds = frame["seed"]
    if all(s is None or isinstance(s, int) for s in seeds):
        frame["seed"] = seeds.astype("Int64")
    else:
        frame["seed"] = seeds.map(lambda s: None if s is None else str(s)).astype(object)


def open_store(path: str | PathLike[str]) -> ResultStore:
    """The one store a results directory (or its stratagem.db) names, opened read-only."""
    return ResultStore(one_store(Path(path)), read_only=True)


class StoreFrames:
    """The tables of one result store as DataFrames, read on first use; `experiment` keeps one
    experiment's rows only. A context manager: closing releases the read-only connection."""

    def __init__(self, store: ResultStore, experiment: str | None = None) -> None:
        self.store = store
        stored = [e.id for e in store.experiments()]
        if experiment is not None and experiment not in stored:
            known = ", ".join(stored) or "none"
            raise StratagemError(f"unknown experiment '{experiment}' (stored: {known})")
        self.experiment = experiment
        self.experiment_ids = (experiment,) if experiment is not None else tuple(stored)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()

    def frame(self, table: str) -> pd.DataFrame:
        """A table by name (one of `TABLES`), as the attribute of that name gives it."""
        if table not in COLUMNS:
            raise StratagemError(f"unknown table '{table}': tables are {', '.join(TABLES)}")
        frame: pd.DataFrame = getattr(self, table)
        return frame

    @functools.cached_property
    def _records(self) -> list[EpisodeRecord]:
        return self.store.episodes(self.experiment)

    def _per_episode(self, read: Callable[[EpisodeRecord], Iterable[Row]]) -> Iterator[Row]:
        for record in self._records:
            yield from read(record)

    @functools.cached_property
    def episodes(self) -> pd.DataFrame:
        """One row per episode (docs/dataframes.md lists the columns of every frame)."""
        frame = _frame(
            "episodes",
            (
                {
                    "episode_id": e.id,
                    "experiment_id": e.experiment_id,
                    "game": e.game,
                    "seed": e.seed,
                    "status": e.status,
                    "n_seats": len(e.players),
                    "prompt": variant_of(e.spec or {}),
                    "replicate": replicate_of(e.spec or {}),
                    "started_at": e.started_at,
                    "finished_at": e.finished_at,
                    "source": e.source,
                    "error": e.error,
                    "spec": _json(e.spec),
                    "labels": _json(None if e.labels is None else [list(x) for x in e.labels]),
                    "game_payoffs": _json(e.game_payoffs),
                }
                for e in self._records
            ),
        )
        _seed_column(frame)
        return frame

    @functools.cached_property
    def seats(self) -> pd.DataFrame:
        """One row per episode and seat: who sat there and its total payoff."""
        from stratagem.analysis.episodes import seat_of

        def rows(e: EpisodeRecord) -> Iterator[Row]:
            for k, player in enumerate(e.players):
                seat = seat_of(player)
                yield {
                    "episode_id": e.id,
                    "experiment_id": e.experiment_id,
                    "seat": k,
                    "name": seat.name,
                    "kind": seat.kind,
                    "model": seat.model or None,
                    "agent": seat.agent or None,
                    "payoff": None if e.payoffs is None else e.payoffs[k],
                    "player": _json(player),
                }

        return _frame("seats", self._per_episode(rows))

    @functools.cached_property
    def rounds(self) -> pd.DataFrame:
        """One row per round and seat: the move, its payoff and tokens, and whether this seat's
        move was valid (`analysis.invalid`, from the round and the seat's own events: the
        stored round's flag is every seat's at once, so a bot would look invalid beside an
        LLM that was)."""

        def rows(e: EpisodeRecord) -> Iterator[Row]:
            rounds = self.store.rounds(e.id)
            if not rounds:
                return
            events = self.store.invalid_marks(e.id)
            seats = range(max(len(r.actions) for r in rounds))
            invalid = [invalid_rounds(rounds, events, k) for k in seats]
            for r in rounds:
                for k, action in enumerate(r.actions):
                    yield {
                        "episode_id": e.id,
                        "round": r.round,
                        "seat": k,
                        "action": _action(action),
                        "payoff": None if r.payoffs is None else r.payoffs[k],
                        "tokens": None if r.tokens is None else r.tokens[k],
                        "valid": r.round not in invalid[k],
                    }

        return _frame("rounds", self._per_episode(rows))

    @functools.cached_property
    def events(self) -> pd.DataFrame:
        """One row per event, in order; `data` and `visible_to` as JSON text."""

        def rows(e: EpisodeRecord) -> Iterator[Row]:
            for v in self.store.events(e.id):
                yield {
                    "episode_id": e.id,
                    "seq": v.seq,
                    "round": v.round,
                    "seat": v.player,
                    "kind": v.kind,
                    "data": _json(v.data),
                    "visible_to": _json(None if v.visible_to is None else list(v.visible_to)),
                }

        return _frame("events", self._per_episode(rows))

    @functools.cached_property
    def calls(self) -> pd.DataFrame:
        """Every model call of the experiments in scope, those of restarted episodes (detached
        from them, `episode_id` empty) included: the spend shown is every call paid for."""
        owners = self.store.call_experiments()
        wanted = set(self.experiment_ids)
        rows = (
            {
                "call_id": c.id,
                "experiment_id": owners.get(c.id),
                "episode_id": c.episode_id,
                "seq": c.seq,
                "seat": c.player,
                "round": c.round,
                "model": c.model,
                "cache_key": c.cache_key,
                "cached": c.cached,
                "error": c.error,
                "input_tokens": c.input_tokens,
                "output_tokens": c.output_tokens,
                "cached_input_tokens": c.cached_input_tokens,
                "cache_write_tokens": c.cache_write_tokens,
                "cost_usd": c.cost_usd,
                "saved_usd": c.saved_usd,
                "latency_s": c.latency_s,
                "created_at": c.created_at,
                "text": c.text,
                "request": _json(c.request),
                "response": _json(c.response),
            }
            for c in self.store.llm_calls()
            if self.experiment is None or owners.get(c.id) in wanted
        )
        return _frame("calls", rows)

    @functools.cached_property
    def beliefs(self) -> pd.DataFrame:
        """One row per reported belief; `content` as JSON text."""

        def rows(e: EpisodeRecord) -> Iterator[Row]:
            for b in self.store.beliefs(e.id):
                yield {
                    "episode_id": e.id,
                    "round": b.round,
                    "seat": b.player,
                    "order": b.order,
                    "about_seat": b.about_player,
                    "content": _json(b.content),
                    "score": b.score,
                }

        return _frame("beliefs", self._per_episode(rows))

    @functools.cached_property
    def answers(self) -> pd.DataFrame:
        """One row per answer to a question; `parsed` as JSON text."""

        def rows(e: EpisodeRecord) -> Iterator[Row]:
            for a in self.store.answers(e.id):
                yield {
                    "episode_id": e.id,
                    "round": a.round,
                    "seat": a.player,
                    "question_id": a.question_id,
                    "question": a.question,
                    "answer": a.answer,
                    "parsed": _json(a.parsed),
                    "correct": a.correct,
                }

        return _frame("answers", self._per_episode(rows))


ARROW_TYPES = {
    "str": "string",
    "int64": "int64",
    "Int64": "int64",
    "float64": "float64",
    "bool": "bool",
    "boolean": "bool",
}
"""The Arrow type of each pandas dtype of `COLUMNS`: a file types a column as declared even when
no row holds a value (pyarrow would infer `null`, which another export of the same table does
not read as)."""


def _arrow_schema(table: str, frame: pd.DataFrame) -> Any:
    import pyarrow as pa

    fields = []
    for name, dtype in COLUMNS[table].items():
        if dtype == "object":  # `seed`: integers when every seed is one (`_seed_column`)
            kind = "int64" if isinstance(frame[name].dtype, pd.Int64Dtype) else "string"
        else:
            kind = ARROW_TYPES[dtype]
        fields.append(pa.field(name, pa.type_for_alias(kind)))
    return pa.schema(fields)


def write_parquet(frames: StoreFrames, directory: Path) -> list[Path]:
    """One Parquet file per table in `directory`, which must be new or empty: files already
    there would mix with these (an older export, another experiment's). The files are written
    in a new directory beside it that takes its name once every table is written, so an export
    that fails (a damaged store, a full disk) leaves nothing behind."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        what = "a file" if not directory.is_dir() else "not empty"
        raise StratagemError(f"export directory '{directory}' is {what}: name a new directory")
    staging = directory.parent / f".{directory.name}.{uuid.uuid4().hex[:12]}.partial"
    made = [d for d in (directory.parent, *directory.parent.parents) if not d.exists()]
    try:
        staging.mkdir(parents=True)
    except OSError as exc:
        raise StratagemError(f"export directory '{directory}': cannot create it ({exc})") from None
    try:
        for table in TABLES:
            frame = frames.frame(table)
            data = pa.Table.from_pandas(
                frame, schema=_arrow_schema(table, frame), preserve_index=False
            )
            try:
                pq.write_table(data, staging / f"{table}.parquet")
            except OSError as exc:
                raise StratagemError(
                    f"export directory '{directory}': cannot write {table}.parquet ({exc})"
                ) from None
        try:
            if directory.is_dir():  # new and empty (checked above): the export takes its place
                directory.rmdir()
            staging.rename(directory)
        except OSError as exc:
            raise StratagemError(
                f"export directory '{directory}': cannot create it ({exc})"
            ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in made:  # the folders made for it, deepest first
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return [directory / f"{table}.parquet" for table in TABLES]
