"""The result store: experiments, episodes, rounds, events, model calls, answers, beliefs (SQLite).

SQLite because one file per experiment directory is easy to copy, open with any tool and survives a
crash: every write is one transaction, so a failure never leaves an episode half-written, and WAL
mode lets a report read the file while the runner writes to it. Analysis reads only from here, so
any metric can be recomputed later from stored episodes, including imported ones.

Finished results are never overwritten silently: re-recording a finished episode raises unless the
caller passes `replace=True`. Unfinished episodes (pending, running, failed) may be restarted, since
the response cache replays their model calls.

`ResultStore` is assembled from its parts: the connection and transactions (`store_base`), the
writes made as an episode happens (`store_writes`), whole episodes written at once (matches and
imports, `store_imports`) and the queries (`store_reads`); the records are in `records`, the
schema and its migrations in `schema`.
"""

from __future__ import annotations

from stratagem.experiments.records import (
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
    now,
    player_descriptor,
)
from stratagem.experiments.schema import SCHEMA_VERSION
from stratagem.experiments.store_imports import StoreImports
from stratagem.experiments.store_reads import StoreReads
from stratagem.experiments.store_writes import StoreWrites

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


class ResultStore(StoreWrites, StoreImports, StoreReads):
    """One SQLite file (or ":memory:") holding the results of one or more experiments."""
