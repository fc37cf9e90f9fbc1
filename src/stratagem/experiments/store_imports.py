"""Writing whole episodes at once: rule-based matches in batches, and episodes made elsewhere
(imported bundles), each in its own transaction."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments.records import (
    EPISODE_COLUMNS,
    AnswerRecord,
    BeliefRecord,
    EpisodeBundle,
    ExperimentRecord,
    LlmCallRecord,
    MatchEntry,
    PlayerLike,
    check_numbers,
    check_seed,
    check_tokens,
    dump_json,
    dump_optional,
    load_json,
    now,
    player_descriptor,
)
from stratagem.experiments.store_base import StoreConnection
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.match import MatchResult


class StoreImports(StoreConnection):
    """The whole-episode writes of `ResultStore`."""

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
                    self._memo.pop(m.episode_id, None)
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
                self._memo.pop(ep.id, None)
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


def _with_episode(call: LlmCallRecord, episode_id: str) -> LlmCallRecord:
    return dataclasses.replace(call, episode_id=episode_id)


def _answer_for(a: AnswerRecord, episode_id: str) -> AnswerRecord:
    return dataclasses.replace(a, episode_id=episode_id)


def _belief_for(b: BeliefRecord, episode_id: str) -> BeliefRecord:
    return dataclasses.replace(b, episode_id=episode_id)
