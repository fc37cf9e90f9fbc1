"""Group commit (`experiments/commits.py`): the store's and the cache's writes of one event-loop
turn share one commit, made at the start of the next turn, and each write stays all or none."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from support.cli import cli
from support.stores import store_with_episodes

from stratagem.errors import StratagemError
from stratagem.experiments import store_base
from stratagem.experiments.commits import TurnCommits
from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.experiments.store_base import StoreConnection
from stratagem.llm.cache import ResponseCache
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Message, Request, Response, Usage


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
    store = store_with_episodes(path)
    commits = commits_of(store)

    async def main() -> None:
        with TurnCommits(store.group):
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
    store = store_with_episodes(path)

    async def main() -> None:
        with TurnCommits(store.group):
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
    store = store_with_episodes(path)

    async def main() -> None:
        with TurnCommits(store.group):
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
    store = store_with_episodes(path)

    async def main() -> None:
        with TurnCommits(store.group):
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


class File:
    """A deferrable file that logs what happens to its writes."""

    def __init__(self, name: str, log: list[str], fail: bool = False) -> None:
        self.name, self.log, self.fail = name, log, fail
        self.on_open: Callable[[], None] | None = None
        self.failure: StratagemError | None = None

    def defer(self, on_open: Callable[[], None] | None) -> None:
        self.on_open = on_open

    def commit(self) -> None:
        if self.fail:
            self.failure = StratagemError(f"{self.name}: a commit failed")
            raise self.failure
        self.log.append(f"{self.name} committed")

    def rollback(self) -> None:
        self.log.append(f"{self.name} rolled back")


def test_the_store_commits_before_the_cache() -> None:
    """An answer in the cache always has its call record: a resumed run replays cached answers
    for free, so one without a record would be spend never counted."""
    log: list[str] = []
    store, cache = File("store", log), File("cache", log)

    async def main() -> None:
        with TurnCommits(store, cache):
            assert store.on_open is not None and cache.on_open is not None
            cache.on_open()  # the cache's write opened first; the store still commits first
            store.on_open()
            await asyncio.sleep(0)
            assert log == ["store committed", "cache committed"]

    asyncio.run(main())


def test_after_a_failed_commit_the_later_files_drop_their_writes() -> None:
    log: list[str] = []
    store, cache = File("store", log, fail=True), File("cache", log)

    async def main() -> None:
        with TurnCommits(store, cache):
            assert cache.on_open is not None
            cache.on_open()
            await asyncio.sleep(0)
            assert log == ["cache rolled back"]
            cache.on_open()
            await asyncio.sleep(0)

    with pytest.raises(StratagemError, match="store: a commit failed"):
        asyncio.run(main())
    # Every later turn, and the end, drops what was written since: nothing is committed.
    assert log == ["cache rolled back"] + ["store rolled back", "cache rolled back"] * 2
    assert cache.on_open is None


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
        with TurnCommits(cache.group):
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


@pytest.fixture
def experiment(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Writes a PD-against-TitForTat experiment on a scripted model that always plays its first
    label, results in tmp_path/out, and returns its file."""
    register_script("first-label", lambda request, sample: request.choices[0])

    def write(name: str, rounds: int, repetitions: int, concurrency: int) -> Path:
        config = {
            "name": name,
            "output": str(tmp_path / "out"),
            "models": [{"model": "scripted/first-label"}],
            "agents": [{"name": "plain", "output": "choice"}],
            "games": ["dilemma"],
            "opponents": ["TitForTat"],
            "rounds": [rounds],
            "repetitions": repetitions,
            "concurrency": concurrency,
        }
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return path

    yield write
    _REGISTERED.pop("first-label", None)


def test_a_run_commits_once_per_turn_not_once_per_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, experiment: Callable[..., Path]
) -> None:
    """8 episodes in flight: the store's writes of a turn (each episode's call and step) share
    a commit, take few statements, and everything is stored all the same."""
    statements: list[str] = []
    connect = sqlite3.connect

    def traced(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)  # type: ignore[arg-type]
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(store_base.sqlite3, "connect", traced)
    path = experiment("commits", rounds=5, repetitions=8, concurrency=8)
    summary = asyncio.run(Runner(load_config(path), show_progress=False).run())
    assert (summary.finished, summary.calls) == (8, 40)
    writes = [sql for sql in statements if sql.startswith(("INSERT", "UPDATE", "DELETE"))]
    assert len(writes) >= 8 * 5 * 2  # at least a call and a step per round
    assert statements.count("COMMIT") < len(writes) / 4
    # Statements per model call, set-up and the cache's included: 19.4 when every write read its
    # episode's row and numbers and took a savepoint, 14.0 since (`store_memo`).
    assert len(statements) < 16 * summary.calls
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        assert store.call_totals("commits")["calls"] == 40
        assert all(len(store.rounds(e.id)) == 5 for e in store.episodes(status="finished"))


def test_a_commit_the_disk_refuses_mid_run_ends_the_run_with_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    experiment: Callable[..., Path],
) -> None:
    """SQLite refuses the turn's COMMIT at the 10th model call (a constraint it checks only
    then): the run stops writing, ends with the store's line and a non-zero exit, no traceback,
    and what was committed before stays readable."""
    insert = StoreConnection._insert_llm_call
    seen = [0]

    def insert_llm_call(conn: sqlite3.Connection, call: object) -> int:
        seen[0] += 1
        if seen[0] == 10:  # inside the turn's transaction
            conn.execute("PRAGMA defer_foreign_keys = ON")
            conn.execute(
                "INSERT INTO events (episode_id, seq, kind, data) VALUES ('ghost', 0, 'x', '{}')"
            )
        return insert(conn, call)  # type: ignore[arg-type]

    monkeypatch.setattr(StoreConnection, "_insert_llm_call", staticmethod(insert_llm_call))
    path = experiment("refused", rounds=4, repetitions=6, concurrency=3)
    code, out, err = cli(capsys, "run", str(path), "--no-progress")
    assert code == 2
    assert "Traceback" not in out + err
    assert "stratagem.db: a commit failed" in err and "FOREIGN KEY" in err
    assert len([line for line in err.splitlines() if "a commit failed" in line]) == 1
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        assert store.call_totals("refused")["calls"] < 10  # the refused turn's writes are gone
