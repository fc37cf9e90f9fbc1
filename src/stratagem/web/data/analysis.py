"""An experiment's analysis as the viewer shows it (issue 35 items 2, 5 and 6): the studies'
leaderboards, each row with the key of the episodes behind it, the calibration of stored
beliefs per model and game, and the noise floor per metric where replicate cells were played.

Every number comes from the code the HTML report uses on the same data: the experiment's stored
analysis options, each registered study's leaderboards (`Study.leaderboards`) over the cells'
own episodes (replicate copies are the noise floor's, `noise_floor.without_copies`), every
study's forecasts scored by `analysis.calibration` as the report's calibration section scores
them, and the floors `report_noise` prints. A row's episode ids stay here: the page gets each
row's group key and count, and the episode list resolves `group=<key>` to the ids.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from stratagem.analysis.calibration import Bin, Calibration, Estimate, calibration
from stratagem.analysis.forecasts import collect_forecasts
from stratagem.analysis.leaderboards import Leaderboard, groups
from stratagem.analysis.needed_plugins import load_plugins
from stratagem.analysis.noise_floor import (
    NAMES,
    NoiseFloor,
    floor_of,
    replicate_differences,
    tallies_of,
    without_copies,
)
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_options import merge
from stratagem.analysis.report_registry import resolve_options
from stratagem.errors import StratagemError
from stratagem.experiments.compare_entry import METRICS
from stratagem.experiments.store import ResultStore
from stratagem.studies.registry import STUDIES


@dataclass(frozen=True)
class Analysis:
    """What the page is sent (`answer`), and each leaderboard row's episode ids by group key."""

    answer: dict[str, Any]
    groups: dict[str, tuple[str, ...]]


def experiment_analysis(store: ResultStore, experiment_id: str) -> Analysis:
    """The experiment's leaderboards, calibration and noise floors (module docstring)."""
    experiment = store.experiment(experiment_id)
    if experiment is None:
        raise StratagemError(f"unknown experiment '{experiment_id}'")
    settings = merge((experiment.config or {}).get("analysis") or {}, {})
    load_plugins(settings, store.plugin_records(experiment_id))
    data = ReportData.load(store, experiment, resolve_options(settings))
    load_plugins(e.record.game for e in data.episodes)  # episodes imported without records
    boards = _leaderboards(data)
    return Analysis(
        {
            "leaderboards": [_board(b) for b in boards],
            "calibration": [_calibration(c) for c in _calibrations(data)],
            "noise": [_floor(f) for f in _floors(data)],
        },
        groups(boards),
    )


def _leaderboards(data: ReportData) -> list[Leaderboard]:
    """Every registered study's leaderboards over the episodes it applies to, in study order."""
    own = without_copies(data)
    out: list[Leaderboard] = []
    for study in STUDIES.values():
        mine = [e for e in own.episodes if study.applies(e)]
        if study.leaderboards is not None and mine:
            out += study.leaderboards(own, mine)
    return out


def _calibrations(data: ReportData) -> list[Calibration]:
    """As the report's calibration section: every study's forecasts of the episodes."""
    found = collect_forecasts(data)
    forecasts = [f for fs in found.values() for f in fs.forecasts]
    return calibration(forecasts) if forecasts else []


def _floors(data: ReportData) -> list[NoiseFloor]:
    """As the report's noise-floor section: one floor per metric of seat 0 with a replicate."""
    tallies = tallies_of(data)
    if not any(t.replicate for t in tallies):
        return []
    found = (floor_of(replicate_differences(tallies, m), m) for m in METRICS)
    return [f for f in found if f is not None]


def _board(board: Leaderboard) -> dict[str, Any]:
    return {
        "id": board.id,
        "title": board.title,
        "caption": board.caption,
        "note": board.note,
        "columns": list(board.columns),
        "numeric": list(board.numeric or (False,) * len(board.columns)),
        "rows": [
            {"label": r.label, "cells": list(r.cells), "group": board.group(r),
             "episodes": len(r.episodes)}
            for r in board.rows
        ],
    }  # fmt: skip


def _number(value: float | None) -> float | None:
    """JSON has no NaN or infinity: such a value is no value."""
    return value if value is not None and math.isfinite(value) else None


def _estimate(e: Estimate | None) -> dict[str, float | None] | None:
    if e is None:
        return None
    return {"value": _number(e.value), "low": _number(e.low), "high": _number(e.high)}


def _bin(b: Bin) -> dict[str, Any]:
    return {
        "lower": b.lower, "upper": b.upper, "count": b.count,
        "confidence": _number(b.confidence), "accuracy": _number(b.accuracy),
    }  # fmt: skip


def _calibration(c: Calibration) -> dict[str, Any]:
    return {
        "model": c.model, "agent": c.agent, "game": c.game, "kind": c.kind,
        "forecasts": c.forecasts, "episodes": c.episodes, "probabilistic": c.probabilistic,
        "accuracy": _estimate(c.accuracy), "brier": _estimate(c.brier),
        "log_loss": _estimate(c.log_loss), "ece": _estimate(c.ece),
        "bins": [_bin(b) for b in c.bins],
    }  # fmt: skip


def _floor(f: NoiseFloor) -> dict[str, Any]:
    return {
        "metric": f.metric, "name": NAMES.get(f.metric, f.metric), "floor": _number(f.floor),
        "level": f.level, "cells": f.cells,
        "replicates": len(f.differences), "rms": _number(f.rms),
        "mean_abs": _number(f.mean_abs), "largest": _number(f.largest),
        "excluding_zero": f.excluding_zero,
    }  # fmt: skip
