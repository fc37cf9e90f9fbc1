"""A run's WAL checkpoints happen in a thread of their own (`experiments/checkpoints.py`), so
its commits never hold the event loop while SQLite copies and syncs pages."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.stores import store_with_episodes

from stratagem.experiments import checkpoints
from stratagem.experiments.checkpoints import BackgroundCheckpoints
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.model_entry import ModelEntry
from stratagem.experiments.runner import CACHE_FILE, STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.cache import ResponseCache
from stratagem.llm.providers.scripted import register_script


def wal_pages(store: ResultStore) -> int:
    return int(store._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])


def write_events(store: ResultStore, n: int) -> None:
    for i in range(n):
        store.add_event("ep0", "note", {"text": "x" * 2000, "i": i})


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpoints every 20 ms, so a test sees the thread work within its writes."""
    monkeypatch.setattr(checkpoints, "INTERVAL_S", 0.02)


def wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the checkpoint thread did nothing"
        time.sleep(0.01)


@pytest.mark.usefixtures("fast")
def test_the_thread_copies_the_wal_into_the_database(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = store_with_episodes(path)
    with BackgroundCheckpoints(store.group) as background:
        assert wal_pages(store) == checkpoints.BACKSTOP_PAGES  # the store no longer does it
        size = path.stat().st_size
        write_events(store, 300)  # ~300 pages: below the backstop, so only the thread copies
        wait_for(lambda: path.stat().st_size > size + 200 * 4096 and background.passes > 0)
    assert wal_pages(store) == checkpoints.SQLITE_DEFAULT_PAGES
    store.close()
    fresh = sqlite3.connect(path)
    assert fresh.execute("SELECT COUNT(*) FROM events").fetchone() == (300,)
    fresh.close()


@pytest.mark.usefixtures("fast")
def test_the_thread_stops_and_closes_its_connections(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = store_with_episodes(path)
    cache = ResponseCache(tmp_path / "c.db")
    with BackgroundCheckpoints(store.group, cache.group) as background:
        write_events(store, 20)
        wait_for(lambda: background.passes >= 2)
        thread = background._thread
        assert thread is not None and thread.is_alive()
    assert not thread.is_alive()
    # The last connection to close removes the WAL: the thread's are closed already.
    store.close()
    cache.close()
    assert not Path(f"{path}-wal").exists()
    assert not (tmp_path / "c.db-wal").exists()


def test_in_memory_stores_and_the_setting_off_start_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with BackgroundCheckpoints(ResultStore().group) as background:
        assert background._thread is None
    monkeypatch.setattr(checkpoints, "INTERVAL_S", None)
    store = store_with_episodes(tmp_path / "s.db")
    with BackgroundCheckpoints(store.group) as background:
        assert background._thread is None
        assert wal_pages(store) == checkpoints.SQLITE_DEFAULT_PAGES


@pytest.mark.usefixtures("fast")
def test_a_failing_checkpoint_skips_a_pass_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = store_with_episodes(tmp_path / "s.db")
    real = sqlite3.connect
    tries: list[str] = []

    def refusing(database: str, *args: object, **kwargs: object) -> sqlite3.Connection:
        if str(database).startswith("file:"):
            tries.append(str(database))
            if len(tries) <= 2:
                raise sqlite3.OperationalError("unable to open database file")
        return real(database, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(checkpoints.sqlite3, "connect", refusing)
    with BackgroundCheckpoints(store.group) as background:
        write_events(store, 5)
        wait_for(lambda: background.passes >= 4)
    assert len(tries) == 3  # two refused, then one connection kept
    assert tries[0].endswith("s.db?mode=rw")  # opened for writing, never created


def test_a_run_checkpoints_its_store_and_cache_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "INTERVAL_S", 0.01)
    seen: list[BackgroundCheckpoints] = []
    real_enter = BackgroundCheckpoints.__enter__

    def enter(self: BackgroundCheckpoints) -> BackgroundCheckpoints:
        seen.append(self)
        return real_enter(self)

    monkeypatch.setattr(BackgroundCheckpoints, "__enter__", enter)
    register_script("checkpointed", lambda request, sample: request.choices[0])
    config = ExperimentConfig(
        name="wal",
        output=tmp_path,
        models=[ModelEntry(model="scripted/checkpointed", max_concurrency=8)],
        games=["pd"],
        opponents=["TitForTat"],
        rounds=[20],
        repetitions=8,
        concurrency=8,
    )
    summary = asyncio.run(Runner(config, show_progress=False).run())
    assert summary.finished == 8 and not summary.errors
    (background,) = seen
    assert [Path(f.path).name for f in background.files] == [STORE_FILE, CACHE_FILE]
    assert background.passes > 0  # it checkpointed while the episodes played
    with ResultStore(tmp_path / STORE_FILE) as store:
        assert wal_pages(store) == checkpoints.SQLITE_DEFAULT_PAGES
        assert len(store.llm_calls()) == 160
