"""The store remembers an open episode's row and sequence numbers while it may (`store_memo`):
within one transaction, and while a run defers commits. These tests hold that what it remembers
never outlives what it describes: a rollback, a failed write and a change of the episode's row
make it read again, and without a deferral another connection's writes are always seen."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from support.stores import store_with_episodes

from stratagem.errors import StratagemError
from stratagem.experiments.commits import TurnCommits
from stratagem.experiments.store import ResultStore

ROW_QUERY = "SELECT status, players, labels FROM episodes"


def events(path: Path, episode_id: str) -> list[tuple[int, str]]:
    conn = sqlite3.connect(path)
    try:
        sql = "SELECT seq, kind FROM events WHERE episode_id=? ORDER BY seq"
        return conn.execute(sql, (episode_id,)).fetchall()
    finally:
        conn.close()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "s.db"


@pytest.fixture
def store(path: Path) -> Iterator[ResultStore]:
    """A store with pending episodes "ep0" and "ep1", closed after the test."""
    store = store_with_episodes(path)
    yield store
    store.close()


def deferred(store: ResultStore, body: Callable[[], Awaitable[None]]) -> None:
    """Run `body` under a run's group commit, as a run writes."""

    async def main() -> None:
        with TurnCommits(store.group):
            await body()

    asyncio.run(main())


def test_a_deferred_run_reads_each_episode_row_once(store: ResultStore, path: Path) -> None:
    reads: list[str] = []
    store._conn.set_trace_callback(lambda sql: reads.append(sql) if ROW_QUERY in sql else None)

    async def body() -> None:
        for turn in range(3):
            for i in range(2):
                store.add_event(f"ep{i}", f"move{turn}")
                store.add_round(f"ep{i}", turn + 1, ["cooperation", "defection"], [0.0, 5.0])
                store.add_llm_call("openai/x", episode_id=f"ep{i}", request={"turn": turn})
            await asyncio.sleep(0)

    deferred(store, body)
    assert len(reads) == 2  # once per episode, for 18 writes over 3 turns
    assert events(path, "ep1") == [(0, "move0"), (1, "move1"), (2, "move2")]
    seqs = store._conn.execute("SELECT seq FROM llm_calls WHERE episode_id='ep0' ORDER BY seq")
    assert [r[0] for r in seqs] == [0, 1, 2]


def test_a_rolled_back_step_gives_its_numbers_back(store: ResultStore, path: Path) -> None:
    async def body() -> None:
        store.add_event("ep0", "first")
        with pytest.raises(RuntimeError), store.transaction():
            store.add_event("ep0", "rolled back")
            store.add_event("ep0", "rolled back too")
            raise RuntimeError("the step fails")
        store.add_event("ep0", "second")
        await asyncio.sleep(0)

    deferred(store, body)
    assert events(path, "ep0") == [(0, "first"), (1, "second")]


def test_a_refused_write_takes_no_number(store: ResultStore, path: Path) -> None:
    async def body() -> None:
        store.add_event("ep0", "first")
        with pytest.raises(StratagemError, match="not JSON"):
            store.add_event("ep0", "refused", {"not json": object()})
        with pytest.raises(StratagemError, match="expected 2 actions"):
            store.add_round("ep0", 1, ["cooperation"])
        store.add_event("ep0", "second")

    deferred(store, body)
    assert events(path, "ep0") == [(0, "first"), (1, "second")]


def test_a_change_of_the_episode_row_is_seen_at_once(store: ResultStore, path: Path) -> None:
    async def body() -> None:
        store.add_event("ep0", "before the restart")
        store.start_episode("ep0")  # a restart clears what the attempt wrote
        store.add_event("ep0", "after the restart")
        store.add_event("ep1", "last")
        store.finish_episode("ep1", [0.0, 0.0])
        with pytest.raises(StratagemError, match="is finished"):
            store.add_event("ep1", "too late")

    deferred(store, body)
    assert events(path, "ep0") == [(0, "after the restart")]
    assert events(path, "ep1") == [(0, "last")]


def test_without_a_deferral_another_connections_writes_are_seen(
    store: ResultStore, path: Path
) -> None:
    other = ResultStore(path)
    store.add_event("ep0", "mine")
    other.add_event("ep0", "theirs")
    store.add_event("ep0", "mine again")
    other.finish_episode("ep1", [0.0, 0.0])
    with pytest.raises(StratagemError, match="is finished"):
        store.add_event("ep1", "too late")
    assert events(path, "ep0") == [(0, "mine"), (1, "theirs"), (2, "mine again")]
    other.close()
