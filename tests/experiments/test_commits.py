"""Group commit (`experiments/commits.py`): the store's and the cache's writes of one event-loop
turn share one commit, made at the start of the next turn, and each write stays all or none."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from stratagem.errors import StratagemError
from stratagem.experiments.commits import TurnCommits
from stratagem.experiments.store import ResultStore
from stratagem.llm.cache import ResponseCache
from stratagem.llm.types import Message, Request, Response, Usage


def make_store(path: Path, episodes: int = 2) -> ResultStore:
    store = ResultStore(path)
    store.create_experiment("exp", "Experiment", {})
    for i in range(episodes):
        store.add_episode(f"ep{i}", "exp", "pd", ["TitForTat", "TitForTat"], seed=i)
    return store


def commits_of(store: ResultStore) -> list[str]:
    """Every COMMIT the store's connection runs from now on."""
    seen: list[str] = []
    store._conn.set_trace_callback(lambda sql: seen.append(sql) if sql == "COMMIT" else None)
    return seen


def stored_events(path: Path) -> list[tuple[str, str]]:
    """What another connection (another process) sees: only committed rows."""
    conn = sqlite3.connect(path)
    try:
        sql = "SELECT episode_id, kind FROM events ORDER BY episode_id, seq"
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_the_writes_of_one_turn_share_one_commit_at_the_next(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = make_store(path)
    commits = commits_of(store)

    async def main() -> None:
        with TurnCommits(store):
            for turn in range(3):
                for i in range(2):
                    store.add_event(f"ep{i}", f"move{turn}")
                    with store.transaction():
                        store.add_event(f"ep{i}", f"step{turn}")
                        store.add_event(f"ep{i}", f"report{turn}")
                assert len(stored_events(path)) == 6 * turn  # not yet committed
                await asyncio.sleep(0)  # the next turn starts with the commit
                assert len(stored_events(path)) == 6 * (turn + 1)

    asyncio.run(main())
    assert len(commits) == 3  # 18 writes, 6 per turn; one commit per write before
    store.close()


def test_a_failing_write_rolls_back_alone_and_the_turn_commits_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = make_store(path)

    async def main() -> None:
        with TurnCommits(store):
            store.add_event("ep0", "kept")
            with pytest.raises(RuntimeError), store.transaction():
                store.add_event("ep1", "half a step")
                raise RuntimeError("the step fails after its first write")
            with pytest.raises(StratagemError, match="unknown episode"):
                store.add_event("nosuch", "lost")
            store.add_event("ep1", "also kept")
            await asyncio.sleep(0)

    asyncio.run(main())
    assert stored_events(path) == [("ep0", "kept"), ("ep1", "also kept")]
    store.close()


def test_leaving_the_block_commits_what_is_open_even_on_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = make_store(path)

    async def main() -> None:
        with TurnCommits(store):
            store.add_event("ep0", "written just before an interruption")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(main())
    assert stored_events(path) == [("ep0", "written just before an interruption")]
    # Outside the block every write commits at once again.
    store.add_event("ep1", "after")
    assert ("ep1", "after") in stored_events(path)
    store.close()


def test_a_failed_commit_stops_every_later_write_and_is_raised_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = make_store(path)

    async def main() -> None:
        with TurnCommits(store):
            store.add_event("ep0", "lost with the commit")
            # A constraint checked only at COMMIT makes the shared commit fail.
            store._conn.execute("PRAGMA defer_foreign_keys = ON")
            store._conn.execute(
                "INSERT INTO events (episode_id, seq, kind, data) VALUES ('ghost', 0, 'x', '{}')"
            )
            await asyncio.sleep(0)
            with pytest.raises(StratagemError, match="a commit failed"):
                store.add_event("ep1", "refused")

    with pytest.raises(StratagemError, match=r"s\.db: a commit failed .*FOREIGN KEY"):
        asyncio.run(main())
    assert stored_events(path) == []
    store.close()


def test_files_commit_in_the_order_given_the_cache_before_the_store() -> None:
    order: list[str] = []

    class File:
        def __init__(self, name: str) -> None:
            self.name = name
            self.on_open: Callable[[], None] | None = None

        def defer_commits(self, on_open: Callable[[], None] | None) -> None:
            self.on_open = on_open

        def commit(self) -> None:
            order.append(self.name)

    cache, store = File("cache"), File("store")

    async def main() -> None:
        with TurnCommits(cache, store):
            assert store.on_open is not None and cache.on_open is not None
            store.on_open()  # the store's write opened first; the cache still commits first
            cache.on_open()
            await asyncio.sleep(0)
            assert order == ["cache", "store"]

    asyncio.run(main())


def test_cache_puts_of_one_turn_share_one_commit(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = ResponseCache(path)
    commits: list[str] = []
    cache._conn.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)

    def cached() -> int:
        conn = sqlite3.connect(path)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        finally:
            conn.close()

    async def main() -> None:
        with TurnCommits(cache):
            for i in range(5):
                request = Request((Message("user", f"question {i}"),))
                key = ResponseCache.key("m", request, 0)
                cache.put(key, "m", request, Response(text="a", usage=Usage(1, 1)))
                assert cache.get(key) is not None  # this process reads its own puts at once
            assert cached() == 0
            await asyncio.sleep(0)
            assert cached() == 5

    asyncio.run(main())
    assert len(commits) == 1
    cache.close()


def test_a_run_commits_once_per_turn_not_once_per_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8 episodes in flight: the store's writes of a turn (each episode's call and step) share
    a commit, and everything is stored all the same."""
    import yaml

    from stratagem.experiments import store_base
    from stratagem.experiments.config import load_config
    from stratagem.experiments.runner import STORE_FILE, Runner
    from stratagem.llm.providers.scripted import _REGISTERED, register_script

    statements: list[str] = []
    connect = sqlite3.connect

    def traced(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)  # type: ignore[arg-type]
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(store_base.sqlite3, "connect", traced)
    register_script("commits", lambda request, sample: request.choices[0])
    config = {
        "name": "commits",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/commits"}],
        "agents": [{"name": "plain", "output": "choice"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [5],
        "repetitions": 8,
        "concurrency": 8,
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    try:
        summary = asyncio.run(Runner(load_config(path), show_progress=False).run())
    finally:
        _REGISTERED.pop("commits", None)
    assert (summary.finished, summary.calls) == (8, 40)
    # Each write begins a transaction of its own, or joins the turn's under a savepoint.
    writes = statements.count("BEGIN IMMEDIATE") + statements.count("SAVEPOINT write")
    assert writes >= 8 * 5 * 2  # at least a call and a step per round
    assert statements.count("COMMIT") < writes / 4
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        assert store.call_totals("commits")["calls"] == 40
        assert all(len(store.rounds(e.id)) == 5 for e in store.episodes(status="finished"))
