"""The result store's SQLite schema and the migrations that bring an older store up to it.

A store written by an earlier release opens in this one without loss: `migrate` applies each step
from the file's version to `SCHEMA_VERSION` in one transaction. A store written by a newer release
is refused, since this code cannot know what its new columns mean.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from stratagem.errors import StratagemError
from stratagem.experiments.records import STATUSES

SCHEMA_VERSION = 4
"""Bumped whenever the schema changes; each bump adds a step to `MIGRATIONS`."""

SCHEMA = f"""
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE experiments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE episodes (
    id TEXT PRIMARY KEY,
    experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    spec TEXT NOT NULL,
    game TEXT NOT NULL,
    labels TEXT,
    game_payoffs TEXT,
    players TEXT NOT NULL,
    seed,
    status TEXT NOT NULL CHECK (status IN ({", ".join(repr(s) for s in STATUSES)})),
    payoffs TEXT,
    started_at TEXT,
    finished_at TEXT,
    source TEXT NOT NULL,
    error TEXT
);
CREATE INDEX episodes_by_experiment ON episodes(experiment_id, status);
CREATE TABLE rounds (
    episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    round INTEGER NOT NULL,
    actions TEXT NOT NULL,
    payoffs TEXT,
    valid INTEGER NOT NULL CHECK (valid IN (0, 1)),
    tokens TEXT,
    PRIMARY KEY (episode_id, round)
) WITHOUT ROWID;
CREATE TABLE events (
    episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    round INTEGER,
    kind TEXT NOT NULL,
    player INTEGER,
    data TEXT NOT NULL,
    visible_to TEXT,
    PRIMARY KEY (episode_id, seq)
) WITHOUT ROWID;
CREATE TABLE llm_calls (
    id INTEGER PRIMARY KEY,
    episode_id TEXT REFERENCES episodes(id) ON DELETE SET NULL,
    seq INTEGER,
    player INTEGER,
    round INTEGER,
    model TEXT NOT NULL,
    cache_key TEXT,
    request TEXT,
    response TEXT,
    text TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost_usd REAL,
    latency_s REAL,
    cached INTEGER NOT NULL DEFAULT 0 CHECK (cached IN (0, 1)),
    error TEXT,
    created_at TEXT NOT NULL,
    experiment_id TEXT,
    cached_input_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    saved_usd REAL NOT NULL DEFAULT 0
);
CREATE INDEX llm_calls_by_episode ON llm_calls(episode_id, seq);
CREATE INDEX llm_calls_by_experiment ON llm_calls(experiment_id);
CREATE INDEX llm_calls_by_cache_key ON llm_calls(cache_key);
CREATE TABLE answers (
    id INTEGER PRIMARY KEY,
    episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    round INTEGER,
    player INTEGER NOT NULL,
    question_id TEXT NOT NULL,
    question TEXT,
    answer TEXT,
    parsed TEXT,
    correct INTEGER CHECK (correct IN (0, 1)),
    UNIQUE (episode_id, round, player, question_id)
);
CREATE TABLE beliefs (
    id INTEGER PRIMARY KEY,
    episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    round INTEGER,
    player INTEGER NOT NULL,
    "order" INTEGER NOT NULL,
    about_player INTEGER,
    content TEXT NOT NULL,
    score REAL
);
CREATE INDEX beliefs_by_episode ON beliefs(episode_id, round, player);
INSERT INTO meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}');
"""


def _add_event_visibility(conn: sqlite3.Connection) -> None:
    """1 -> 2: events say who may see them (NULL: every seat; a JSON list: those seats only)."""
    conn.execute("ALTER TABLE events ADD COLUMN visible_to TEXT")


def _add_call_experiment(conn: sqlite3.Connection) -> None:
    """2 -> 3: a model call names its experiment, so the calls of an episode that was restarted
    (detached from it, their spend kept) still count in that experiment's spend. Calls detached
    before this version name no episode; in a store of one experiment they can only be its."""
    conn.execute("ALTER TABLE llm_calls ADD COLUMN experiment_id TEXT")
    conn.execute(
        "UPDATE llm_calls SET experiment_id = "
        "(SELECT experiment_id FROM episodes WHERE episodes.id = llm_calls.episode_id)"
    )
    experiments = [r[0] for r in conn.execute("SELECT id FROM experiments")]
    if len(experiments) == 1:
        conn.execute(
            "UPDATE llm_calls SET experiment_id = ? WHERE experiment_id IS NULL", experiments
        )
    conn.execute("CREATE INDEX llm_calls_by_experiment ON llm_calls(experiment_id)")


def _add_prompt_cache(conn: sqlite3.Connection) -> None:
    """3 -> 4: of a model call's input tokens, those the provider's prompt cache read and wrote
    (billed at their own rates), and what it saved against full-rate input. Calls stored before
    were all priced at the full input rate: 0 of each is what they were."""
    for column in ("cached_input_tokens INTEGER", "cache_write_tokens INTEGER", "saved_usd REAL"):
        conn.execute(f"ALTER TABLE llm_calls ADD COLUMN {column} NOT NULL DEFAULT 0")


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _add_event_visibility,
    2: _add_call_experiment,
    3: _add_prompt_cache,
}
"""The step that takes a store from version k to k + 1."""


def create(conn: sqlite3.Connection) -> None:
    """Create every table of an empty store, at the current version, in one transaction."""
    try:
        conn.executescript("BEGIN;" + SCHEMA + "COMMIT;")
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _version(conn: sqlite3.Connection, path: str) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if row is None or not str(row[0]).isdigit():
        raise StratagemError(f"{path}: a SQLite database without a schema version")
    version = int(row[0])
    if version > SCHEMA_VERSION:
        raise StratagemError(
            f"{path}: result store schema version {version} is newer than this "
            f"stratagem supports ({SCHEMA_VERSION}); upgrade stratagem to read it"
        )
    return version


def check_current(conn: sqlite3.Connection, path: str) -> None:
    """That a store opened read-only can be read as it is: a stratagem store of this version
    (an older one is upgraded by any command that writes to it, never by a reader)."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" not in tables:
        raise StratagemError(f"{path}: not a stratagem result store")
    version = _version(conn, path)
    if version < SCHEMA_VERSION:
        raise StratagemError(
            f"{path}: result store schema version {version} is older than this stratagem reads "
            f"({SCHEMA_VERSION}); `stratagem status {path}` upgrades it"
        )


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Bring an existing store to `SCHEMA_VERSION` (nothing to do when it is there already)."""
    version = _version(conn, path)
    if version == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for step in range(version, SCHEMA_VERSION):
            MIGRATIONS[step](conn)
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
