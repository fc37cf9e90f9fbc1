"""Results directories written by the release before line-ups (schema 1) open, migrate without loss
and resume for free: the same episode ids, the same cache keys.

The fixtures under tests/data/ were made by that release's own code (`stratagem run`):
- legacy-v1: a scripted model, a plain agent answering questions, self-consistency, an agent whose
  replies stay invalid, a strategy and an LLM opponent (experiment.yaml beside it);
- quickstart-v1: `examples/quickstart.yaml` on the embedded model.
"""

from __future__ import annotations

import asyncio
import gzip
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import yaml

from stratagem.experiments.config import load_config
from stratagem.experiments.runner import CACHE_FILE, STORE_FILE, Runner, RunSummary
from stratagem.experiments.schema import SCHEMA_VERSION
from stratagem.experiments.store import ResultStore

DATA = Path(__file__).resolve().parents[1] / "data"
REPO = Path(__file__).resolve().parents[2]


def unpack(name: str, into: Path) -> Path:
    """The fixture's store and cache, decompressed into a results directory."""
    into.mkdir(parents=True)
    for file in (STORE_FILE, CACHE_FILE):
        with gzip.open(DATA / name / f"{file}.gz") as src, open(into / file, "wb") as dst:
            shutil.copyfileobj(src, dst)
    return into


def raw_rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def config_file(source: Path, output: Path, tmp: Path) -> Path:
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["output"] = str(output)
    path = tmp / source.name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def run(path: Path) -> RunSummary:
    return asyncio.run(Runner(load_config(path), show_progress=False).run())


def mark_unfinished(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("UPDATE episodes SET status='failed'")
    conn.commit()
    conn.close()


def test_a_schema_1_store_migrates_without_loss(tmp_path: Path) -> None:
    """Schema 2 added events' visibility, schema 3 the experiment of each model call, schema 4
    the prompt cache's part of each call's input (none, for calls made before)."""
    out = unpack("legacy-v1", tmp_path / "out")
    db = out / STORE_FILE
    assert raw_rows(db, "SELECT value FROM meta WHERE key='schema_version'") == [("1",)]
    tables = ("episodes", "rounds", "events", "llm_calls", "answers")
    before = {t: sorted(map(repr, raw_rows(db, f"SELECT * FROM {t}"))) for t in tables}
    assert all(before.values())  # the fixture holds every kind of record

    with ResultStore(db) as store:
        assert store.schema_version == SCHEMA_VERSION == 4
        calls = store.llm_calls()
        assert calls and all(
            (c.cached_input_tokens, c.cache_write_tokens, c.saved_usd) == (0, 0, 0.0) for c in calls
        )
        totals = store.call_totals()
        assert totals["cached_input_tokens"] == totals["saved_usd"] == 0
        assert totals["paid_input_tokens"] == sum(
            c.input_tokens or 0 for c in calls if not c.cached and c.error is None
        )
        events = [e for ep in store.episodes() for e in store.events(ep.id)]
        kinds = {e.kind for e in events}
        assert {"invalid", "self_consistency"} <= kinds
        assert all(e.visible_to is None for e in events)  # written before visibility: public

    # Every old row is still there, unchanged; events gained their visibility (public), and model
    # calls the experiment they belong to and their prompt-cache columns (0).
    after = {t: raw_rows(db, f"SELECT * FROM {t}") for t in tables}
    added: dict[str, tuple[Any, ...]] = {"events": (None,), "llm_calls": ("legacy-v1", 0, 0, 0.0)}
    for table in tables:
        rows = after[table]
        if table in added:
            n = len(added[table])
            assert all(row[-n:] == added[table] for row in rows)
            rows = [row[:-n] for row in rows]
        assert sorted(map(repr, rows)) == before[table], table
    # Opening again is a no-op.
    ResultStore(db).close()
    assert raw_rows(db, "SELECT value FROM meta WHERE key='schema_version'") == [("4",)]


def test_a_schema_1_results_directory_resumes_with_zero_calls(tmp_path: Path) -> None:
    out = unpack("legacy-v1", tmp_path / "out")
    path = config_file(DATA / "legacy-v1" / "experiment.yaml", out, tmp_path)
    rounds_before = raw_rows(out / STORE_FILE, "SELECT * FROM rounds ORDER BY episode_id, round")

    summary = run(path)
    assert (summary.episodes, summary.skipped, summary.calls) == (6, 6, 0)

    # Replayed from scratch, every request is one the old release cached: same cache keys.
    mark_unfinished(out / STORE_FILE)
    summary = run(path)
    assert (summary.finished, summary.failed) == (6, 0), summary.errors
    assert summary.calls > 100 and summary.cached_calls == summary.calls
    rounds_after = raw_rows(out / STORE_FILE, "SELECT * FROM rounds ORDER BY episode_id, round")
    assert rounds_after == rounds_before


def test_the_quickstart_of_the_previous_release_resumes_with_zero_calls(tmp_path: Path) -> None:
    """`examples/quickstart.yaml` over an old `results/quickstart` (the embedded model)."""
    out = unpack("quickstart-v1", tmp_path / "results" / "quickstart")
    path = config_file(REPO / "examples" / "quickstart.yaml", out, tmp_path)
    summary = run(path)
    assert (summary.episodes, summary.skipped, summary.calls) == (9, 9, 0)
    mark_unfinished(out / STORE_FILE)
    summary = run(path)
    assert (summary.finished, summary.calls, summary.cached_calls) == (9, 90, 90)
