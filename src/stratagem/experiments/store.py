"""The result store: experiments, episodes, rounds, events, model calls, answers, beliefs (SQLite).

SQLite because one file per experiment directory is easy to copy, open with any tool and survives a
crash: every write is one transaction, so a failure never leaves an episode half-written, and WAL
mode lets a report read the file while the runner writes to it. Analysis reads only from here, so
any metric can be recomputed later from stored episodes, including imported ones.

Finished results are never overwritten silently: re-recording a finished episode raises unless the
caller passes `replace=True`. Unfinished episodes (pending, running, failed) may be restarted, since
the response cache replays their model calls.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments import schema
from stratagem.experiments.records import (
    EPISODE_COLUMNS,
    STATUSES,
    AnswerRecord,
    BeliefRecord,
    EpisodeBundle,
    EpisodeRecord,
    EventRecord,
    ExperimentRecord,
    LlmCallRecord,
    MatchEntry,
    PlayerLike,
    RoundRecord,
    Status,
    check_numbers,
    check_seed,
    check_tokens,
    check_visibility,
    dump_json,
    dump_optional,
    episode_from_row,
    event_from_row,
    load_json,
    now,
    player_descriptor,
    redact,
    round_from_row,
)
from stratagem.experiments.schema import SCHEMA_VERSION
from stratagem.games.normal_form import NormalFormGame
from stratagem.strategies.match import MatchResult

__all__ = [
    "SCHEMA_VERSION",
    "STATUSES",
    "AnswerRecord",
    "BeliefRecord",
    "EpisodeBundle",
    "EpisodeRecord",
    "EventRecord",
    "ExperimentRecord",
    "LlmCallRecord",
    "MatchEntry",
    "PlayerLike",
    "ResultStore",
    "RoundRecord",
    "Status",
    "now",
    "player_descriptor",
]

# -- the store ------------------------------------------------------------------------------------


class ResultStore:
    """One SQLite file (or ":memory:") holding the results of one or more experiments."""

    def __init__(self, path: str | PathLike[str] = ":memory:") -> None:
        self.path = str(path)
        memory = self.path == ":memory:"
        if not memory:
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StratagemError(f"{self.path}: cannot create its folder ({exc})") from None
        try:
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise StratagemError(f"{self.path}: cannot open the result store ({exc})") from None
        conn.row_factory = sqlite3.Row
        self._conn = conn
        self._lock = threading.RLock()
        self._depth = 0
        try:
            self._open(memory)
        except sqlite3.DatabaseError as exc:
            conn.close()
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

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResultStore:
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
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One transaction: all its writes happen, or none. Nested use becomes a savepoint."""
        with self._lock:
            conn = self._conn
            if self._depth:
                name = f"sp{self._depth}"
                conn.execute(f"SAVEPOINT {name}")
                self._depth += 1
                try:
                    yield conn
                except BaseException:
                    conn.execute(f"ROLLBACK TO {name}")
                    conn.execute(f"RELEASE {name}")
                    raise
                else:
                    conn.execute(f"RELEASE {name}")
                finally:
                    self._depth -= 1
                return
            conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")
            finally:
                self._depth = 0

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    # -- experiments ---------------------------------------------------------------------------

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

    # -- episodes: lifecycle -------------------------------------------------------------------

    def add_episode(
        self,
        episode_id: str,
        experiment_id: str,
        game: str,
        players: Sequence[PlayerLike],
        seed: int | str | None = None,
        *,
        spec: Mapping[str, Any] | None = None,
        labels: Sequence[Sequence[str]] | None = None,
        game_payoffs: Any = None,
        source: str = "stratagem",
    ) -> bool:
        """Register a pending episode; returns False (and changes nothing) if it already exists.

        Grid expansion calls this for every spec on every run, so existing episodes keep their
        progress.
        """
        descs = [player_descriptor(p) for p in players]
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM episodes WHERE id=?", (episode_id,)).fetchone():
                return False
            self._require_experiment(conn, experiment_id)
            self._insert_episode(
                conn,
                EpisodeRecord(
                    id=episode_id,
                    experiment_id=experiment_id,
                    game=game,
                    players=tuple(descs),
                    seed=check_seed(seed),
                    status="pending",
                    spec=dict(spec or {}),
                    labels=None if labels is None else tuple(tuple(ls) for ls in labels),
                    game_payoffs=game_payoffs,
                    source=source,
                ),
            )
            return True

    def start_episode(self, episode_id: str, *, replace: bool = False) -> None:
        """Mark an episode running, clearing what an earlier, interrupted attempt wrote.

        Model calls of the earlier attempt are kept but detached from the episode, so spend is
        never lost. A finished episode is only restarted with `replace=True`.
        """
        with self._tx() as conn:
            status = self._status(conn, episode_id)
            if status == "finished" and not replace:
                raise StratagemError(
                    f"episode '{episode_id}' is already finished; pass replace=True to re-run it"
                )
            self._clear_children(conn, episode_id)
            conn.execute(
                "UPDATE episodes SET status='running', started_at=?, finished_at=NULL, "
                "payoffs=NULL, error=NULL WHERE id=?",
                (now(), episode_id),
            )

    def finish_episode(self, episode_id: str, payoffs: Sequence[float] | None = None) -> None:
        """Mark an episode finished. Without `payoffs`, totals are summed from its rounds."""
        with self._tx() as conn:
            status = self._status(conn, episode_id)
            if status == "finished":
                raise StratagemError(f"episode '{episode_id}' is already finished")
            n = self._n_players(conn, episode_id)
            if payoffs is None:
                totals: list[float] | None = [0.0] * n
                for row in conn.execute(
                    "SELECT payoffs FROM rounds WHERE episode_id=? ORDER BY round", (episode_id,)
                ):
                    values = load_json(row[0])
                    if values is None or totals is None:
                        totals = None
                        break
                    totals = [t + x for t, x in zip(totals, values, strict=True)]
            else:
                totals = check_numbers(payoffs, n, f"episode '{episode_id}' payoffs")
            conn.execute(
                "UPDATE episodes SET status='finished', payoffs=?, finished_at=?, error=NULL "
                "WHERE id=?",
                (dump_optional(totals, "payoffs"), now(), episode_id),
            )

    def fail_episode(self, episode_id: str, error: str) -> None:
        """Mark an episode failed with a one-line reason; a re-run will start it again."""
        with self._tx() as conn:
            if self._status(conn, episode_id) == "finished":
                raise StratagemError(f"episode '{episode_id}' is finished; it cannot fail now")
            conn.execute(
                "UPDATE episodes SET status='failed', error=?, finished_at=? WHERE id=?",
                (error, now(), episode_id),
            )

    def _status(self, conn: sqlite3.Connection, episode_id: str) -> str:
        row = conn.execute("SELECT status FROM episodes WHERE id=?", (episode_id,)).fetchone()
        if row is None:
            raise StratagemError(f"unknown episode '{episode_id}'")
        return str(row[0])

    def _n_players(self, conn: sqlite3.Connection, episode_id: str) -> int:
        row = conn.execute("SELECT players FROM episodes WHERE id=?", (episode_id,)).fetchone()
        return len(load_json(row[0]))

    def _writable(self, conn: sqlite3.Connection, episode_id: str) -> sqlite3.Row:
        """The episode's row, if it may still receive data: it exists and is not finished."""
        row = conn.execute(
            "SELECT status, players, labels FROM episodes WHERE id=?", (episode_id,)
        ).fetchone()
        if row is None:
            raise StratagemError(f"unknown episode '{episode_id}'")
        if row["status"] == "finished":
            raise StratagemError(f"episode '{episode_id}' is finished; its records are final")
        return row  # type: ignore[no-any-return]

    @staticmethod
    def _clear_children(conn: sqlite3.Connection, episode_id: str) -> None:
        for table in ("rounds", "events", "answers", "beliefs"):
            conn.execute(f"DELETE FROM {table} WHERE episode_id=?", (episode_id,))
        conn.execute("UPDATE llm_calls SET episode_id=NULL WHERE episode_id=?", (episode_id,))

    # -- episodes: data ------------------------------------------------------------------------

    def add_round(
        self,
        episode_id: str,
        round: int,
        actions: Sequence[Any],
        payoffs: Sequence[float] | None = None,
        valid: bool = True,
        tokens: Sequence[int | None] | None = None,
    ) -> None:
        """Record one played round; actions are labels (None for a missing move)."""
        what = f"episode '{episode_id}' round {round}"
        with self._tx() as conn:
            row = self._writable(conn, episode_id)
            n = len(load_json(row["players"]))
            if len(actions) != n:
                raise StratagemError(f"{what}: expected {n} actions, got {len(actions)}")
            labels = load_json(row["labels"])
            if labels is not None:
                for p, a in enumerate(actions):
                    if a is not None and a not in labels[p]:
                        raise StratagemError(
                            f"{what}: {a!r} is not an action of player {p} ({', '.join(labels[p])})"
                        )
            pay = None if payoffs is None else check_numbers(payoffs, n, f"{what} payoffs")
            toks = check_tokens(tokens, n, f"{what} tokens")
            try:
                conn.execute(
                    "INSERT INTO rounds (episode_id, round, actions, payoffs, valid, tokens) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        episode_id,
                        round,
                        dump_json(list(actions), f"{what} actions"),
                        dump_optional(pay, "payoffs"),
                        int(bool(valid)),
                        dump_optional(toks, "tokens"),
                    ),
                )
            except sqlite3.IntegrityError:
                raise StratagemError(f"{what} is already recorded") from None

    def add_event(
        self,
        episode_id: str,
        kind: str,
        data: Any = None,
        *,
        round: int | None = None,
        player: int | None = None,
        seq: int | None = None,
        visible_to: Sequence[int] | None = None,
    ) -> int:
        """Record an event (a message, a move of a non-matrix game); returns its sequence number.
        `visible_to` None: every seat may see it; otherwise only those seats."""
        visible = check_visibility(visible_to, f"event '{kind}'")
        with self._tx() as conn:
            self._writable(conn, episode_id)
            if seq is None:
                seq = self._next_seq(conn, "events", episode_id)
            try:
                conn.execute(
                    "INSERT INTO events (episode_id, seq, round, kind, player, data, visible_to) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        episode_id,
                        seq,
                        round,
                        kind,
                        player,
                        dump_json({} if data is None else data, kind),
                        dump_optional(None if visible is None else list(visible), "visibility"),
                    ),
                )
            except sqlite3.IntegrityError:
                raise StratagemError(f"episode '{episode_id}' already has event {seq}") from None
            return seq

    @staticmethod
    def _next_seq(conn: sqlite3.Connection, table: str, episode_id: str) -> int:
        row = conn.execute(
            f"SELECT COALESCE(MAX(seq) + 1, 0) FROM {table} WHERE episode_id=?", (episode_id,)
        ).fetchone()
        return int(row[0])

    def add_llm_call(
        self,
        model: str,
        *,
        episode_id: str | None = None,
        seq: int | None = None,
        player: int | None = None,
        round: int | None = None,
        cache_key: str | None = None,
        request: Any = None,
        response: Any = None,
        text: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cost_usd: float | None = None,
        latency_s: float | None = None,
        cached: bool = False,
        error: str | None = None,
    ) -> int:
        """Record one model call (also calls outside any episode); returns its row id.

        Credentials found under well-known keys of the request or response are redacted.
        """
        record = LlmCallRecord(
            episode_id=episode_id,
            model=model,
            seq=seq,
            player=player,
            round=round,
            cache_key=cache_key,
            request=request,
            response=response,
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost_usd,
            latency_s=latency_s,
            cached=cached,
            error=error,
            created_at=now(),
        )
        with self._tx() as conn:
            if episode_id is not None:
                self._writable(conn, episode_id)
                if seq is None:
                    record = _replace_seq(record, self._next_seq(conn, "llm_calls", episode_id))
            return self._insert_llm_call(conn, record)

    def add_answer(
        self,
        episode_id: str,
        round: int | None,
        player: int,
        question_id: str,
        answer: str | None,
        *,
        question: str | None = None,
        parsed: Any = None,
        correct: bool | None = None,
    ) -> None:
        """Record a player's answer to a comprehension question."""
        with self._tx() as conn:
            self._writable(conn, episode_id)
            self._insert_answers(
                conn,
                [
                    AnswerRecord(
                        episode_id, round, player, question_id, answer, question, parsed, correct
                    )
                ],
            )

    def add_belief(
        self,
        episode_id: str,
        round: int | None,
        player: int,
        order: int,
        content: Any,
        *,
        about_player: int | None = None,
        score: float | None = None,
    ) -> None:
        """Record a belief a player reported (theory-of-mind and PGM agents)."""
        with self._tx() as conn:
            self._writable(conn, episode_id)
            self._insert_beliefs(
                conn, [BeliefRecord(episode_id, round, player, order, content, about_player, score)]
            )

    # -- whole episodes ------------------------------------------------------------------------

    def record_match(
        self,
        experiment_id: str,
        episode_id: str,
        game: NormalFormGame,
        players: Sequence[PlayerLike],
        seed: int | str | None,
        result: MatchResult,
        *,
        spec: Mapping[str, Any] | None = None,
        game_name: str | None = None,
        replace: bool = False,
    ) -> None:
        """Store a finished rule-based match (episode and every round) in one transaction."""
        entry = MatchEntry(experiment_id, episode_id, game, players, seed, result, spec, game_name)
        self.record_matches([entry], replace=replace)

    def record_matches(
        self, matches: Iterable[MatchEntry], *, batch_size: int = 500, replace: bool = False
    ) -> int:
        """Store many finished matches, one transaction per batch; returns how many were stored.

        Tournaments produce thousands of matches, so rows go in with executemany and the JSON of
        each action profile is built once per game, not once per round. If a match is bad, its
        whole batch is rolled back (earlier batches stay stored) and the error is raised.
        """
        if batch_size < 1:
            raise StratagemError(f"batch_size must be >= 1, got {batch_size}")
        caches: dict[int, tuple[NormalFormGame, _GameCache]] = {}
        stored = 0
        batch: list[MatchEntry] = []
        for entry in matches:
            batch.append(entry)
            if len(batch) >= batch_size:
                stored += self._record_batch(batch, caches, replace)
                batch = []
        if batch:
            stored += self._record_batch(batch, caches, replace)
        return stored

    def _record_batch(
        self,
        batch: list[MatchEntry],
        caches: dict[int, tuple[NormalFormGame, _GameCache]],
        replace: bool,
    ) -> int:
        known: set[str] = set()
        stamp = now()
        with self._tx() as conn:
            for m in batch:
                if m.experiment_id not in known:
                    self._require_experiment(conn, m.experiment_id)
                    known.add(m.experiment_id)
                cached = caches.get(id(m.game))
                if cached is None:
                    cached = (m.game, _GameCache(m.game))
                    caches[id(m.game)] = cached
                cache = cached[1]
                first, second = m.result.actions
                where = f"match '{m.episode_id}'"
                if len(m.players) != 2 or m.game.n_players != 2:
                    raise StratagemError(f"{where}: a match needs 2 players and a 2-player game")
                if len(first) != len(second):
                    raise StratagemError(f"{where}: the players made different numbers of moves")
                rows = [
                    (m.episode_id, t, *cache.profile(a, b, where))
                    for t, (a, b) in enumerate(zip(first, second, strict=True), start=1)
                ]
                existing = conn.execute(
                    "SELECT status, spec FROM episodes WHERE id=?", (m.episode_id,)
                ).fetchone()
                spec: Mapping[str, Any] | None = m.spec
                if existing is not None:
                    if existing["status"] == "finished" and not replace:
                        raise StratagemError(
                            f"episode '{m.episode_id}' is already recorded as finished; "
                            "pass replace=True to overwrite it"
                        )
                    if spec is None and existing["status"] != "finished":
                        spec = load_json(existing["spec"])
                    conn.execute("DELETE FROM episodes WHERE id=?", (m.episode_id,))
                name = m.game_name or m.game.name
                descs = [player_descriptor(p, "strategy") for p in m.players]
                if spec is None:
                    spec = {
                        "game": name,
                        "players": [d["name"] for d in descs],
                        "seed": m.seed,
                        "turns": len(rows),
                    }
                conn.execute(
                    f"INSERT INTO episodes ({EPISODE_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, 'finished', ?, ?, ?, ?, ?, ?, 'stratagem', NULL)",
                    (
                        m.episode_id,
                        m.experiment_id,
                        name,
                        dump_json(descs, "players"),
                        check_seed(m.seed),
                        dump_json(dict(spec), "spec"),
                        cache.labels_json,
                        cache.tensor_json,
                        dump_json([float(x) for x in m.result.scores], "scores"),
                        stamp,
                        stamp,
                    ),
                )
                conn.executemany(
                    "INSERT INTO rounds (episode_id, round, actions, payoffs, valid, tokens) "
                    "VALUES (?, ?, ?, ?, 1, NULL)",
                    rows,
                )
        return len(batch)

    def put_episode(
        self,
        bundle: EpisodeBundle,
        *,
        experiment: ExperimentRecord | None = None,
        replace: bool = False,
        skip_existing: bool = False,
    ) -> bool:
        """Write a whole episode with all its records in one transaction; returns whether written.

        Used by import. `experiment` is created (in the same transaction) if it does not exist.
        An existing episode is skipped with `skip_existing`; otherwise a finished one is only
        overwritten with `replace`, and an unfinished one is overwritten.
        """
        ep = bundle.episode
        with self._tx() as conn:
            existing = conn.execute("SELECT status FROM episodes WHERE id=?", (ep.id,)).fetchone()
            if existing is not None:
                if skip_existing:
                    return False
                if existing["status"] == "finished" and not replace:
                    raise StratagemError(
                        f"episode '{ep.id}' is already recorded as finished; "
                        "pass replace=True to overwrite it"
                    )
                conn.execute("DELETE FROM episodes WHERE id=?", (ep.id,))
            if experiment is not None:
                if experiment.id != ep.experiment_id:
                    raise StratagemError(
                        f"episode '{ep.id}' belongs to experiment '{ep.experiment_id}', "
                        f"not '{experiment.id}'"
                    )
                if self.experiment(experiment.id) is None:
                    self.create_experiment(
                        experiment.id,
                        experiment.name,
                        experiment.config,
                        created_at=experiment.created_at or None,
                    )
            self._require_experiment(conn, ep.experiment_id)
            self._insert_episode(conn, ep)
            n = len(ep.players)
            round_rows = []
            for r in bundle.rounds:
                what = f"episode '{ep.id}' round {r.round}"
                if len(r.actions) != n:
                    raise StratagemError(f"{what}: expected {n} actions, got {len(r.actions)}")
                pay = None if r.payoffs is None else check_numbers(r.payoffs, n, f"{what} payoffs")
                toks = check_tokens(r.tokens, n, f"{what} tokens")
                round_rows.append(
                    (
                        ep.id,
                        r.round,
                        dump_json(list(r.actions), f"{what} actions"),
                        dump_optional(pay, "payoffs"),
                        int(r.valid),
                        dump_optional(toks, "tokens"),
                    )
                )
            try:
                conn.executemany(
                    "INSERT INTO rounds (episode_id, round, actions, payoffs, valid, tokens) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    round_rows,
                )
                conn.executemany(
                    "INSERT INTO events (episode_id, seq, round, kind, player, data, visible_to) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            ep.id,
                            e.seq,
                            e.round,
                            e.kind,
                            e.player,
                            dump_json(e.data, "event data"),
                            dump_optional(
                                None if e.visible_to is None else list(e.visible_to), "visibility"
                            ),
                        )
                        for e in bundle.events
                    ],
                )
            except sqlite3.IntegrityError as exc:
                raise StratagemError(
                    f"episode '{ep.id}': duplicate round or event ({exc})"
                ) from None
            for call in bundle.llm_calls:
                self._insert_llm_call(conn, _with_episode(call, ep.id))
            self._insert_answers(conn, [_answer_for(a, ep.id) for a in bundle.answers])
            self._insert_beliefs(conn, [_belief_for(b, ep.id) for b in bundle.beliefs])
            return True

    # -- inserts shared by the writers ---------------------------------------------------------

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
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                c.episode_id,
                c.seq,
                c.player,
                c.round,
                c.model,
                c.cache_key,
                dump_optional(redact(c.request), "request"),
                dump_optional(redact(c.response), "response"),
                c.text,
                c.input_tokens,
                c.output_tokens,
                c.cost_usd,
                c.latency_s,
                int(c.cached),
                c.error,
                c.created_at or now(),
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

    # -- readers -------------------------------------------------------------------------------

    def episodes(
        self, experiment_id: str | None = None, status: Status | None = None
    ) -> list[EpisodeRecord]:
        """Episodes in the order they were first recorded, optionally filtered."""
        where, params = [], []
        if experiment_id is not None:
            where.append("experiment_id=?")
            params.append(experiment_id)
        if status is not None:
            where.append("status=?")
            params.append(status)
        sql = f"SELECT {EPISODE_COLUMNS} FROM episodes"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [episode_from_row(r) for r in self._rows(sql + " ORDER BY rowid", params)]

    def episode(self, episode_id: str) -> EpisodeRecord | None:
        rows = self._rows(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id=?", (episode_id,))
        return episode_from_row(rows[0]) if rows else None

    def status_counts(self, experiment_id: str | None = None) -> dict[str, int]:
        """How many episodes are in each status (every status present, zeros included)."""
        sql = "SELECT status, COUNT(*) FROM episodes"
        params: tuple[str, ...] = ()
        if experiment_id is not None:
            sql += " WHERE experiment_id=?"
            params = (experiment_id,)
        counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
        for row in self._rows(sql + " GROUP BY status", params):
            counts[row[0]] = row[1]
        return counts

    def rounds(self, episode_id: str) -> list[RoundRecord]:
        return [
            round_from_row(r)
            for r in self._rows(
                "SELECT * FROM rounds WHERE episode_id=? ORDER BY round", (episode_id,)
            )
        ]

    def events(self, episode_id: str, kind: str | None = None) -> list[EventRecord]:
        sql, params = "SELECT * FROM events WHERE episode_id=?", [episode_id]
        if kind is not None:
            sql += " AND kind=?"
            params.append(kind)
        return [event_from_row(r) for r in self._rows(sql + " ORDER BY seq", params)]

    def llm_calls(
        self, episode_id: str | None = None, *, cache_key: str | None = None
    ) -> list[LlmCallRecord]:
        """Model calls of one episode (by seq), with a cache key, or all of them (by row id)."""
        where, params = [], []
        if episode_id is not None:
            where.append("episode_id=?")
            params.append(episode_id)
        if cache_key is not None:
            where.append("cache_key=?")
            params.append(cache_key)
        sql = "SELECT * FROM llm_calls"
        if where:
            sql += " WHERE " + " AND ".join(where)
        order = " ORDER BY seq, id" if episode_id is not None else " ORDER BY id"
        return [
            LlmCallRecord(
                episode_id=r["episode_id"],
                model=r["model"],
                seq=r["seq"],
                player=r["player"],
                round=r["round"],
                cache_key=r["cache_key"],
                request=load_json(r["request"]),
                response=load_json(r["response"]),
                text=r["text"],
                input_tokens=r["input_tokens"],
                output_tokens=r["output_tokens"],
                cost_usd=r["cost_usd"],
                latency_s=r["latency_s"],
                cached=bool(r["cached"]),
                error=r["error"],
                created_at=r["created_at"],
                id=r["id"],
            )
            for r in self._rows(sql + order, params)
        ]

    def call_totals(self, experiment_id: str | None = None) -> dict[str, Any]:
        """Counts and sums over model calls: all in the file, or those of one experiment's episodes.

        `paid_*` count only calls that reached the provider and succeeded (not cache replays).

        Calls of an interrupted episode are detached from it when it restarts, so only the
        whole-file totals include every call ever paid for.
        """
        sql = (
            "SELECT COUNT(*) AS calls, COALESCE(SUM(c.cached), 0) AS cached,"
            " COALESCE(SUM(c.error IS NOT NULL), 0) AS errors,"
            " COALESCE(SUM(COALESCE(c.input_tokens, 0) + COALESCE(c.output_tokens, 0)), 0)"
            " AS tokens, COALESCE(SUM(c.cost_usd), 0.0) AS cost_usd,"
            " COALESCE(SUM(CASE WHEN c.cached = 0 AND c.error IS NULL THEN"
            " COALESCE(c.input_tokens, 0) + COALESCE(c.output_tokens, 0) END), 0) AS paid_tokens,"
            " COALESCE(SUM(CASE WHEN c.cached = 0 AND c.error IS NULL THEN c.cost_usd END), 0.0)"
            " AS paid_usd FROM llm_calls c"
        )
        params: list[str] = []
        if experiment_id is not None:
            sql += " JOIN episodes e ON e.id = c.episode_id WHERE e.experiment_id = ?"
            params.append(experiment_id)
        row = self._rows(sql, params)[0]
        keys = ("calls", "cached", "errors", "tokens", "cost_usd", "paid_tokens", "paid_usd")
        return {k: row[k] for k in keys}

    def answers(self, episode_id: str) -> list[AnswerRecord]:
        return [
            AnswerRecord(
                r["episode_id"],
                r["round"],
                r["player"],
                r["question_id"],
                r["answer"],
                r["question"],
                load_json(r["parsed"]),
                None if r["correct"] is None else bool(r["correct"]),
            )
            for r in self._rows(
                "SELECT * FROM answers WHERE episode_id=? ORDER BY id", (episode_id,)
            )
        ]

    def beliefs(self, episode_id: str) -> list[BeliefRecord]:
        return [
            BeliefRecord(
                r["episode_id"],
                r["round"],
                r["player"],
                r["order"],
                load_json(r["content"]),
                r["about_player"],
                r["score"],
            )
            for r in self._rows(
                "SELECT * FROM beliefs WHERE episode_id=? ORDER BY id", (episode_id,)
            )
        ]

    def load_episode(self, episode_id: str) -> EpisodeBundle | None:
        """An episode with all its records, as export writes it."""
        ep = self.episode(episode_id)
        if ep is None:
            return None
        return EpisodeBundle(
            ep,
            tuple(self.rounds(episode_id)),
            tuple(self.events(episode_id)),
            tuple(self.llm_calls(episode_id)),
            tuple(self.answers(episode_id)),
            tuple(self.beliefs(episode_id)),
        )


class _GameCache:
    """JSON of a stage game's labels, tensor and every action profile, built once per game."""

    def __init__(self, game: NormalFormGame) -> None:
        self.game = game
        self.labels_json = dump_json([list(ls) for ls in game.labels], "labels")
        self.tensor_json = dump_json(game.payoffs.tolist(), "payoff tensor")
        self._profiles: dict[tuple[int, int], tuple[str, str]] = {}

    def profile(self, a: int, b: int, where: str) -> tuple[str, str]:
        key = (a, b)
        hit = self._profiles.get(key)
        if hit is None:
            la, lb = self.game.labels
            if not (0 <= a < len(la) and 0 <= b < len(lb)):
                raise StratagemError(f"{where}: action indices {key} are outside the game")
            hit = (
                dump_json([la[a], lb[b]], "actions"),
                dump_json(list(self.game.table[a][b]), "payoffs"),
            )
            self._profiles[key] = hit
        return hit


def _replace_seq(record: LlmCallRecord, seq: int) -> LlmCallRecord:
    return dataclasses.replace(record, seq=seq)


def _with_episode(call: LlmCallRecord, episode_id: str) -> LlmCallRecord:
    return dataclasses.replace(call, episode_id=episode_id)


def _answer_for(a: AnswerRecord, episode_id: str) -> AnswerRecord:
    return dataclasses.replace(a, episode_id=episode_id)


def _belief_for(b: BeliefRecord, episode_id: str) -> BeliefRecord:
    return dataclasses.replace(b, episode_id=episode_id)
