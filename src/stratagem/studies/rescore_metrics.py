"""The per-episode metrics a rescore compares: every seat's payoff and invalid share, and each
study's per-episode table columns, computed by the study's own code with the experiment's
analysis options (`studies.frames.study_frame`, what its report prints)."""

from __future__ import annotations

import math
from numbers import Real

from stratagem.analysis.episodes import load_episodes
from stratagem.analysis.rescore_report import Metrics, episode_metrics
from stratagem.experiments.store import ResultStore
from stratagem.studies.frames import study_frame
from stratagem.studies.registry import STUDIES

NOT_METRICS = frozenset({"seed", "repetition", "setting", "round", "rounds"})
"""Numeric columns of a study's table that say which episode a row is, not how it went."""


def rescore_metrics(store: ResultStore, experiment_id: str) -> Metrics:
    """Metric name -> episode id -> value over the experiment's finished episodes."""
    import stratagem.studies  # noqa: F401  (registers the built-in studies)

    episodes = load_episodes(store, experiment_id)
    out = episode_metrics(episodes)
    for study in STUDIES.values():
        if study.table is None or not any(study.applies(e) for e in episodes):
            continue
        frame = study_frame(store, (experiment_id,), study.name)
        if "episode_id" not in frame.columns:
            continue
        for row in frame.to_dict("records"):
            for column, value in row.items():
                if column in NOT_METRICS or not _number(value):
                    continue
                name = f"{study.name}: {column}"
                out.setdefault(name, {})[str(row["episode_id"])] = float(value)
    return out


def _number(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(float(value))
