"""Reading the result store: episodes and everything recorded about them, as records."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from stratagem.experiments.records import (
    EPISODE_COLUMNS,
    STATUSES,
    AnswerRecord,
    BeliefRecord,
    EpisodeBundle,
    EpisodeRecord,
    EventRecord,
    LlmCallRecord,
    RoundRecord,
    Status,
    episode_from_row,
    event_from_row,
    load_json,
    round_from_row,
)
from stratagem.experiments.store_base import StoreConnection

_ID_CHUNK = 500
"""Episode ids per `IN (...)` query: below SQLite's limit on bound parameters."""


class StoreReads(StoreConnection):
    """The queries of `ResultStore`."""

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

    def plugin_records(self, experiment_id: str | None = None) -> list[dict[str, Any]]:
        """The distinct plugin provenance records of stored episodes (`experiments.provenance`):
        one query, whatever the number of episodes."""
        sql = (
            "SELECT DISTINCT json_extract(spec, '$.plugins') FROM episodes "
            "WHERE json_extract(spec, '$.plugins') IS NOT NULL"
        )
        params: tuple[str, ...] = ()
        if experiment_id is not None:
            sql += " AND experiment_id=?"
            params = (experiment_id,)
        found: dict[str, dict[str, Any]] = {}
        for (value,) in self._rows(sql, params):
            records = load_json(value)
            for record in records if isinstance(records, list) else []:
                if isinstance(record, dict) and isinstance(record.get("plugin"), str):
                    found.setdefault(repr(sorted(record.items())), record)
        return list(found.values())

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

    def invalid_marks(self, episode_id: str) -> list[EventRecord]:
        """The events that may mark a seat's move invalid (`analysis.invalid` decides): the
        "invalid" events and the decisions stored as not valid, without the valid decisions
        that are most of a game's events (the per-seat validity of a rounds frame reads these
        for every episode)."""
        return [
            event_from_row(r)
            for r in self._rows(
                "SELECT * FROM events WHERE episode_id=? AND (kind='invalid' OR "
                "(kind='decision' AND json_extract(data, '$.valid') IS NOT 1)) ORDER BY seq",
                (episode_id,),
            )
        ]

    def seat_costs(self, episode_ids: Sequence[str]) -> dict[str, dict[int, float]]:
        """Dollars per episode and seat, summed over its model calls, for reports over many
        episodes: one query per chunk of episodes, and no stored request is decoded."""
        out: dict[str, dict[int, float]] = {}
        for start in range(0, len(episode_ids), _ID_CHUNK):
            ids = list(episode_ids[start : start + _ID_CHUNK])
            marks = ", ".join("?" * len(ids))
            for episode_id, player, cost in self._rows(
                "SELECT episode_id, player, COALESCE(SUM(cost_usd), 0.0) FROM llm_calls "
                f"WHERE episode_id IN ({marks}) AND player IS NOT NULL "
                "GROUP BY episode_id, player",
                ids,
            ):
                seats = out.setdefault(episode_id, {})
                seats[int(player)] = seats.get(int(player), 0.0) + float(cost)
        return out

    def next_event_seq(self, episode_id: str) -> int:
        """The sequence number the episode's next event will get: a model call recorded now
        came after every event below it, which places it among the events in a transcript."""
        trusted = self._grouped or self.group.deferred
        facts = self._memo.get(episode_id) if trusted else None
        seq = None if facts is None else facts.next_seq.get("events")
        if seq is not None:
            return seq
        rows = self._rows(
            "SELECT COALESCE(MAX(seq) + 1, 0) FROM events WHERE episode_id=?", (episode_id,)
        )
        return int(rows[0][0])

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
                cached_input_tokens=r["cached_input_tokens"],
                cache_write_tokens=r["cache_write_tokens"],
                saved_usd=r["saved_usd"],
            )
            for r in self._rows(sql + order, params)
        ]

    def call_experiments(self) -> dict[int, str | None]:
        """Each model call's experiment by call id: a call keeps its experiment when its episode
        is restarted (detached from it), so its spend still counts there."""
        return {int(r[0]): r[1] for r in self._rows("SELECT id, experiment_id FROM llm_calls")}

    def call_latencies(self) -> dict[str, tuple[float, int]]:
        """Each model's median seconds per paid call (answered by its provider, not the cache,
        without error) in the whole file, with the count: the plan's measured latency."""
        rows = self._rows(
            "SELECT model, latency_s FROM llm_calls WHERE cached = 0 AND error IS NULL"
            " AND latency_s IS NOT NULL"
        )
        by_model: dict[str, list[float]] = {}
        for row in rows:
            by_model.setdefault(row[0], []).append(float(row[1]))
        return {m: (statistics.median(v), len(v)) for m, v in by_model.items()}

    def call_totals(self, experiment_id: str | None = None) -> dict[str, Any]:
        """Counts and sums over model calls: all in the file, or those of one experiment.

        `paid_*` count only calls that reached the provider and succeeded (not cache replays),
        and so do the provider's prompt-cache sums `cached_input_tokens`, `cache_write_tokens`
        and `saved_usd` (`CacheUse.from_totals`).
        A call belongs to its experiment for good: the calls of an episode that was restarted
        (detached from it) still count there, so the spend shown is every call paid for.
        """
        sql = (
            "SELECT COUNT(*) AS calls, COALESCE(SUM(c.cached), 0) AS cached,"
            " COALESCE(SUM(c.error IS NOT NULL), 0) AS errors,"
            " COALESCE(SUM(COALESCE(c.input_tokens, 0) + COALESCE(c.output_tokens, 0)), 0)"
            " AS tokens, COALESCE(SUM(c.cost_usd), 0.0) AS cost_usd,"
            " COALESCE(SUM(CASE WHEN c.cached = 0 AND c.error IS NULL THEN"
            " COALESCE(c.input_tokens, 0) + COALESCE(c.output_tokens, 0) END), 0) AS paid_tokens,"
            " COALESCE(SUM(CASE WHEN c.cached = 0 AND c.error IS NULL THEN c.cost_usd END), 0.0)"
            " AS paid_usd,"
            " COALESCE(SUM(CASE WHEN c.cached = 0 AND c.error IS NULL THEN c.input_tokens END), 0)"
            " AS paid_input_tokens,"
            " COALESCE(SUM(CASE WHEN c.cached = 0 AND c.error IS NULL THEN"
            " c.cached_input_tokens END), 0) AS cached_input_tokens,"
            " COALESCE(SUM(CASE WHEN c.cached = 0 AND c.error IS NULL THEN"
            " c.cache_write_tokens END), 0) AS cache_write_tokens,"
            " COALESCE(SUM(CASE WHEN c.cached = 0 AND c.error IS NULL THEN c.saved_usd END), 0.0)"
            " AS saved_usd FROM llm_calls c"
        )
        params: list[str] = []
        if experiment_id is not None:
            sql += " WHERE c.experiment_id = ?"
            params.append(experiment_id)
        row = self._rows(sql, params)[0]
        keys = (
            "calls", "cached", "errors", "tokens", "cost_usd", "paid_tokens", "paid_usd",
            "paid_input_tokens", "cached_input_tokens", "cache_write_tokens", "saved_usd",
        )  # fmt: skip
        return {k: row[k] for k in keys}

    def endpoint_calls(self, experiment_id: str) -> list[tuple[str, str, float | None, int, bool]]:
        """(model, endpoint, latency_s, output tokens, failed) of each call sent to a server of an
        endpoint pool (`llm.pool`), cache replays aside: one query (0.4 s for 100,000 calls), the
        server read by SQLite from the response's JSON, or from a failed call's error text, where
        the pool names it `[endpoint URL]`."""
        tag = "'[endpoint '"
        at = f"instr(c.error, {tag})"
        rest = f"substr(c.error, {at} + 10)"
        sql = (
            "SELECT model, endpoint, latency_s, output_tokens, failed FROM (SELECT c.model,"
            " CASE WHEN c.error IS NULL THEN json_extract(c.response, '$.endpoint')"
            f" WHEN {at} > 0 THEN substr({rest}, 1, instr({rest}, ']') - 1) END AS endpoint,"
            " c.latency_s, COALESCE(c.output_tokens, 0) AS output_tokens,"
            " c.error IS NOT NULL AS failed FROM llm_calls c"
            " WHERE c.experiment_id = ? AND c.cached = 0"
            " AND (c.error IS NOT NULL OR c.response LIKE '%\"endpoint\"%'))"
            " WHERE endpoint IS NOT NULL AND endpoint != ''"
        )
        return [
            (r[0], r[1], r[2], int(r[3]), bool(r[4])) for r in self._rows(sql, (experiment_id,))
        ]

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
