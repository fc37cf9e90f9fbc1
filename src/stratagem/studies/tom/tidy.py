"""seed-002's per-game table: one row per TradeCraft game with a focal ToM agent, as the report
section reads it (`extract.tom_game`): group, focal seat, outcome, payoffs, how many reports and
proposals it holds, and each seat's counts (submissions, invalid moves, report failures, calls).
The per-report rows (beliefs by turn and order) are the `beliefs` frame of the same store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.report_data import ReportData
from stratagem.studies.tom.extract import tom_data
from stratagem.studies.tom.options import TomOptions


def game_rows(report: ReportData, episodes: Sequence[EpisodeData]) -> list[dict[str, Any]]:
    """The games the section is computed from, with the report's options."""
    options = report.study_options("tom", TomOptions)
    rows: list[dict[str, Any]] = []
    for g in tom_data(episodes, report.store.beliefs, options).games:
        row: dict[str, Any] = {
            "episode_id": g.episode_id,
            "model": g.model,
            "group": g.group,
            "focal": g.focal,
            "baseline_focal": g.baseline_focal,
            "instance": g.instance,
            "max_turn": g.max_turn,
            "turns": g.turns,
            "outcome": g.outcome,
            "focal_won": g.focal in g.winners,
            "payoff_0": g.payoffs[0],
            "payoff_1": g.payoffs[1],
            "reports": len(g.reports),
            "proposals": len(g.proposals),
            "accepted": sum(p.accepted is True for p in g.proposals),
            "repairs": len(g.repairs),
        }
        for seat, counts in enumerate(g.counts):
            row.update({f"{name}_{seat}": value for name, value in asdict(counts).items()})
        rows.append(row)
    return rows
