"""Writing as it happens: experiments, an episode's lifecycle (pending, running, finished, failed),
and its rounds, events, model calls, answers and beliefs the moment they exist."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments.records import (
    AnswerRecord,
    BeliefRecord,
    EpisodeRecord,
    LlmCallRecord,
    PlayerLike,
    check_numbers,
    check_seed,
    check_tokens,
    check_visibility,
    dump_json,
    dump_optional,
    load_json,
    now,
    player_descriptor,
)
from stratagem.experiments.store_base import StoreConnection


class StoreWrites(StoreConnection):
    """The incremental writes of `ResultStore`."""

    def drop_empty_experiment(self, experiment_id: str) -> bool:
        """Remove an experiment that holds no episode and no model call (a run whose start
        failed before its first episode), so no listing shows an experiment with nothing in it.
        Returns whether it was removed; one with anything stored is never touched."""
        with self._tx(single=True) as conn:
            removed = conn.execute(
                "DELETE FROM experiments WHERE id=?1 "
                "AND NOT EXISTS (SELECT 1 FROM episodes WHERE experiment_id=?1) "
                "AND NOT EXISTS (SELECT 1 FROM llm_calls WHERE experiment_id=?1)",
                (experiment_id,),
            )
            return removed.rowcount > 0

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
            self._memo.pop(episode_id, None)  # the episode row changes
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
            self._memo.pop(episode_id, None)  # the episode row changes
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
            self._memo.pop(episode_id, None)  # the episode row changes
            conn.execute(
                "UPDATE episodes SET status='failed', error=?, finished_at=? WHERE id=?",
                (error, now(), episode_id),
            )

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
        with self._tx(single=True) as conn:
            facts = self._writable(conn, episode_id)
            n = facts.n_players
            if len(actions) != n:
                raise StratagemError(f"{what}: expected {n} actions, got {len(actions)}")
            labels = facts.labels
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
        with self._tx(single=True) as conn:
            facts = self._writable(conn, episode_id)
            if seq is None:
                seq = self._next_seq(conn, "events", facts, episode_id)
            else:
                facts.next_seq.pop("events", None)
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
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
        saved_usd: float = 0.0,
    ) -> int:
        """Record one model call (also calls outside any episode); returns its row id.

        Credentials found under well-known keys of the request or response are redacted.
        """
        with self._tx(single=True) as conn:
            if episode_id is not None:
                facts = self._writable(conn, episode_id)
                if seq is None:
                    seq = self._next_seq(conn, "llm_calls", facts, episode_id)
                else:
                    facts.next_seq.pop("llm_calls", None)
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
                cached_input_tokens=cached_input_tokens,
                cache_write_tokens=cache_write_tokens,
                saved_usd=saved_usd,
            )
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
