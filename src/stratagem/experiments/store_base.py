"""The connection every part of the result store shares: opening (creating or migrating the
schema), one transaction at a time, experiments (the root every episode hangs from), and the row
checks and inserts its writers have in common."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from stratagem.errors import StratagemError
from stratagem.experiments import schema
from stratagem.experiments.records import (
    EPISODE_COLUMNS,
    STATUSES,
    AnswerRecord,
    BeliefRecord,
    EpisodeRecord,
    ExperimentRecord,
    LlmCallRecord,
    check_seed,
    dump_json,
    dump_optional,
    dump_redacted,
    load_json,
    now,
)
from stratagem.experiments.store_memo import EpisodeFacts
from stratagem.llm.group_commit import GroupCommit


def is_damage(exc: BaseException) -> bool:
    """Whether SQLite found the file itself damaged ("database disk image is malformed", "file is
    not a database"): plain `DatabaseError`, not one of its subclasses (constraint violations,
    locks), which callers handle themselves."""
    return type(exc) is sqlite3.DatabaseError


def damage_message(path: str, exc: BaseException) -> str:
    """The one line a damaged SQLite file is reported with, and what to do about it."""
    where = Path(path).parent
    return (
        f"{path}: the file is damaged ({exc}); `stratagem doctor {where}` checks it and says "
        "what can be recovered"
    )


def _read_only_uri(path: str) -> str:
    """A URI that reads `path` and never writes a byte of it (the viewer's). While a writer has
    it open (its `-wal` is there) the reader shares its WAL and sees each commit; otherwise the
    file is read as immutable, since a read-only WAL reader would leave new -wal/-shm files."""
    file = Path(path)
    if not file.is_file():
        raise StratagemError(f"result store '{path}' does not exist")
    live = Path(f"{path}-wal").exists()
    return f"{file.resolve().as_uri()}?mode=ro" + ("" if live else "&immutable=1")


class StoreConnection:
    """One SQLite file (or ":memory:"); see `ResultStore`. `read_only` opens an existing store
    without writing to it (no schema change, no journal setting): for browsing."""

    def __init__(self, path: str | PathLike[str] = ":memory:", *, read_only: bool = False) -> None:
        self.path = str(path)
        memory = self.path == ":memory:"
        if not memory and not read_only:
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StratagemError(f"{self.path}: cannot create its folder ({exc})") from None
        try:
            target, uri = (_read_only_uri(self.path), True) if read_only else (self.path, False)
            conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None, uri=uri)
        except sqlite3.Error as exc:
            raise StratagemError(f"{self.path}: cannot open the result store ({exc})") from None
        conn.row_factory = sqlite3.Row
        self._conn = conn
        self._lock = threading.RLock()
        self._depth = 0
        self._grouped = False
        self._memo: dict[str, EpisodeFacts] = {}
        """Open episodes' rows, read once while they may be trusted (`store_memo`)."""
        self.group = GroupCommit(
            conn, self._lock, self.path,
            "the writes since the previous commit (milliseconds of them) are lost, and nothing "
            "more is written",
            forget=self._memo.clear,
        )  # fmt: skip
        """Group commit (a run's, once per event-loop turn): while deferred, every write joins
        one shared transaction, under a savepoint of its own unless it is one statement, so each
        is still all or none. After a failed commit every later write raises the failure."""
        try:
            if read_only:
                schema.check_current(conn, self.path)
            else:
                self._open(memory)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if is_damage(exc) and "malformed" in str(exc):
                raise self._damaged(exc) from None
            raise StratagemError(
                f"{self.path}: not a SQLite database, cannot be used as a result store ({exc})"
            ) from None
        except StratagemError:
            conn.close()
            raise

    def _open(self, memory: bool) -> None:
        conn = self._conn
        conn.execute("PRAGMA foreign_keys = ON")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            schema.create(conn)
        elif "meta" not in tables:
            raise StratagemError(
                f"{self.path}: a SQLite database, but not a stratagem result store"
            )
        else:
            schema.migrate(conn, self.path)
        if not memory:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _damaged(self, exc: sqlite3.DatabaseError) -> StratagemError:
        return StratagemError(damage_message(self.path, exc))

    @staticmethod
    def integrity_problems(path: str | PathLike[str], limit: int = 20) -> list[str]:
        """SQLite's integrity check of a store file, opened read-only (nothing is migrated or
        written): the first `limit` problems it reports, none for a sound file."""
        uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as exc:
            return [f"cannot open ({exc})"]
        try:
            rows = conn.execute(f"PRAGMA integrity_check({int(limit)})").fetchall()
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        finally:
            conn.close()
        problems = [str(r[0]) for r in rows]
        return [] if problems == ["ok"] else problems

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        row = self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several writes into one transaction (one commit): all of them are stored, or
        none. The writes inside take no savepoints of their own (a failing one fails the whole
        group anyway), which saves two statements each. The episode loop records each step so."""
        with self._tx():
            self._grouped = True
            try:
                yield
            finally:
                self._grouped = False
                if not self.group.deferred:
                    self._memo.clear()

    @contextmanager
    def _tx(self, single: bool = False) -> Iterator[sqlite3.Connection]:
        """One transaction: all its writes happen, or none. Nested use becomes a savepoint, and
        so does every write while commits are deferred (`group`), unless it is `single`: one
        statement that changes anything, which SQLite applies whole or not at all by itself."""
        with self._lock:
            try:
                yield from self._transaction_steps(single)
            except sqlite3.DatabaseError as exc:  # `_reporting`, inline: a write's hot path
                if is_damage(exc):
                    raise self._damaged(exc) from None
                raise

    def _transaction_steps(self, single: bool) -> Iterator[sqlite3.Connection]:
        conn = self._conn
        if self._depth and self._grouped:
            yield conn
        elif self._depth:
            with self._savepoint(f"sp{self._depth}"):
                yield conn
        elif self.group.failure is not None:
            raise self.group.failure
        elif self.group.deferred and single:
            self.group.join()
            try:
                yield conn
            except BaseException:
                self._memo.clear()  # a sequence number may have been taken for nothing
                raise
        elif self.group.deferred:
            self.group.join()
            with self._savepoint("write"):
                yield conn
        else:
            conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield conn
            except BaseException as exc:
                self._roll_back(exc, "ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")
            finally:
                self._depth = 0

    @contextmanager
    def _savepoint(self, name: str) -> Iterator[None]:
        conn = self._conn
        conn.execute(f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield
        except BaseException as exc:
            self._roll_back(exc, f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
            raise
        else:
            conn.execute(f"RELEASE {name}")
        finally:
            self._depth -= 1

    def _roll_back(self, exc: BaseException, statement: str) -> None:
        self._memo.clear()
        if is_damage(exc):  # the rollback may meet the same damage: report the first
            with suppress(sqlite3.Error):
                self._conn.execute(statement)
        else:
            self._conn.execute(statement)

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock, self._reporting():
            return self._conn.execute(sql, params).fetchall()

    @contextmanager
    def _reporting(self) -> Iterator[None]:
        """A damaged page met mid-query becomes one line naming this file, not a traceback."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise self._damaged(exc) from None
            raise

    @staticmethod
    def _experiment(row: sqlite3.Row) -> ExperimentRecord:
        return ExperimentRecord(row["id"], row["name"], load_json(row["config"]), row["created_at"])

    def _require_experiment(self, conn: sqlite3.Connection, experiment_id: str) -> None:
        if (
            conn.execute("SELECT 1 FROM experiments WHERE id=?", (experiment_id,)).fetchone()
            is None
        ):
            raise StratagemError(
                f"unknown experiment '{experiment_id}': create it first with create_experiment"
            )

    def _status(self, conn: sqlite3.Connection, episode_id: str) -> str:
        row = conn.execute("SELECT status FROM episodes WHERE id=?", (episode_id,)).fetchone()
        if row is None:
            raise StratagemError(f"unknown episode '{episode_id}'")
        return str(row[0])

    def _n_players(self, conn: sqlite3.Connection, episode_id: str) -> int:
        row = conn.execute("SELECT players FROM episodes WHERE id=?", (episode_id,)).fetchone()
        return len(load_json(row[0]))

    def _writable(self, conn: sqlite3.Connection, episode_id: str) -> EpisodeFacts:
        """The episode's row, if it may still receive data: it exists and is not finished.
        Read once while it may be trusted (`store_memo`)."""
        trusted = self._grouped or self.group.deferred
        facts = self._memo.get(episode_id) if trusted else None
        if facts is not None:
            return facts
        row = conn.execute(
            "SELECT status, players, labels FROM episodes WHERE id=?", (episode_id,)
        ).fetchone()
        if row is None:
            raise StratagemError(f"unknown episode '{episode_id}'")
        if row["status"] == "finished":
            raise StratagemError(f"episode '{episode_id}' is finished; its records are final")
        facts = EpisodeFacts(len(load_json(row["players"])), load_json(row["labels"]))
        if trusted:
            self._memo[episode_id] = facts
        return facts

    @staticmethod
    def _clear_children(conn: sqlite3.Connection, episode_id: str) -> None:
        for table in ("rounds", "events", "answers", "beliefs"):
            conn.execute(f"DELETE FROM {table} WHERE episode_id=?", (episode_id,))
        conn.execute("UPDATE llm_calls SET episode_id=NULL WHERE episode_id=?", (episode_id,))

    def _next_seq(
        self, conn: sqlite3.Connection, table: str, facts: EpisodeFacts, episode_id: str
    ) -> int:
        """The next free sequence number of an episode's rows in `table`: read once, and
        counted on while the episode's facts are remembered."""
        seq = facts.next_seq.get(table)
        if seq is None:
            row = conn.execute(
                f"SELECT COALESCE(MAX(seq) + 1, 0) FROM {table} WHERE episode_id=?",
                (episode_id,),
            ).fetchone()
            seq = int(row[0])
        facts.next_seq[table] = seq + 1
        return seq

    @staticmethod
    def _insert_episode(conn: sqlite3.Connection, ep: EpisodeRecord) -> None:
        if ep.status not in STATUSES:
            raise StratagemError(f"episode '{ep.id}': status must be one of {', '.join(STATUSES)}")
        conn.execute(
            f"INSERT INTO episodes ({EPISODE_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                ep.id,
                ep.experiment_id,
                ep.game,
                dump_json([dict(p) for p in ep.players], "players"),
                check_seed(ep.seed),
                ep.status,
                dump_json(ep.spec, "spec"),
                dump_optional(
                    None if ep.labels is None else [list(ls) for ls in ep.labels], "labels"
                ),
                dump_optional(ep.game_payoffs, "game payoffs"),
                dump_optional(None if ep.payoffs is None else list(ep.payoffs), "payoffs"),
                ep.started_at,
                ep.finished_at,
                ep.source,
                ep.error,
            ),
        )

    @staticmethod
    def _insert_llm_call(conn: sqlite3.Connection, c: LlmCallRecord) -> int:
        cur = conn.execute(
            "INSERT INTO llm_calls (episode_id, seq, player, round, model, cache_key, request, "
            "response, text, input_tokens, output_tokens, cost_usd, latency_s, cached, error, "
            "created_at, cached_input_tokens, cache_write_tokens, saved_usd, experiment_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "(SELECT experiment_id FROM episodes WHERE id = ?))",
            (
                c.episode_id,
                c.seq,
                c.player,
                c.round,
                c.model,
                c.cache_key,
                dump_redacted(c.request, "request"),
                dump_redacted(c.response, "response"),
                c.text,
                c.input_tokens,
                c.output_tokens,
                c.cost_usd,
                c.latency_s,
                int(c.cached),
                c.error,
                c.created_at or now(),
                c.cached_input_tokens,
                c.cache_write_tokens,
                c.saved_usd,
                c.episode_id,
            ),
        )
        return int(cur.lastrowid or 0)

    @staticmethod
    def _insert_answers(conn: sqlite3.Connection, answers: Sequence[AnswerRecord]) -> None:
        try:
            conn.executemany(
                "INSERT INTO answers (episode_id, round, player, question_id, question, answer, "
                "parsed, correct) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        a.episode_id,
                        a.round,
                        a.player,
                        a.question_id,
                        a.question,
                        a.answer,
                        dump_optional(a.parsed, "parsed answer"),
                        None if a.correct is None else int(a.correct),
                    )
                    for a in answers
                ],
            )
        except sqlite3.IntegrityError:
            a = answers[0]
            raise StratagemError(
                f"episode '{a.episode_id}': an answer to the same question by the same player in "
                "the same round is already recorded"
            ) from None

    @staticmethod
    def _insert_beliefs(conn: sqlite3.Connection, beliefs: Sequence[BeliefRecord]) -> None:
        conn.executemany(
            'INSERT INTO beliefs (episode_id, round, player, "order", about_player, content, '
            "score) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    b.episode_id,
                    b.round,
                    b.player,
                    b.order,
                    b.about_player,
                    dump_json(b.content, "belief content"),
                    b.score,
                )
                for b in beliefs
            ],
        )

    def create_experiment(
        self,
        experiment_id: str,
        name: str,
        config: Mapping[str, Any] | None = None,
        *,
        update: bool = False,
        created_at: str | None = None,
    ) -> bool:
        """Create an experiment; returns False if it already exists with the same config.

        An existing experiment with a different config is an error unless `update`, so two
        different grids never mix under one id by accident.
        """
        config_json = dump_json(dict(config or {}), f"the config of experiment '{experiment_id}'")
        with self._tx() as conn:
            row = conn.execute(
                "SELECT name, config FROM experiments WHERE id=?", (experiment_id,)
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO experiments (id, name, config, created_at) VALUES (?, ?, ?, ?)",
                    (experiment_id, name, config_json, created_at or now()),
                )
                return True
            if row["config"] == config_json and row["name"] == name:
                return False
            if not update:
                raise StratagemError(
                    f"experiment '{experiment_id}' already exists with a different name or "
                    "config; use a new id, or update=True to overwrite its config"
                )
            conn.execute(
                "UPDATE experiments SET name=?, config=? WHERE id=?",
                (name, config_json, experiment_id),
            )
            return False

    def experiment(self, experiment_id: str) -> ExperimentRecord | None:
        rows = self._rows("SELECT * FROM experiments WHERE id=?", (experiment_id,))
        return self._experiment(rows[0]) if rows else None

    def experiments(self) -> list[ExperimentRecord]:
        return [self._experiment(r) for r in self._rows("SELECT * FROM experiments ORDER BY rowid")]
