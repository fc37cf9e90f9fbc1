"""seed-004's per-game table: one row per game of a competition, with the counts every MAgIC
metric of the report pools (`tallies`: votes, deductions, credits, decisions...), so a metric is
a ratio of column sums over one entity's rows (`metrics`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.report_data import ReportData
from stratagem.studies.magic.extract import magic_data
from stratagem.studies.magic.options import MagicAnalysis
from stratagem.studies.magic.tallies import COLUMNS, tally_matrix


def game_rows(report: ReportData, episodes: Sequence[EpisodeData]) -> list[dict[str, Any]]:
    """The games the section's leaderboard is computed from (competitions between a challenger
    and a defender), with the report's options."""
    games = magic_data(report.store, report.config, episodes).games
    tallies = tally_matrix(games, report.study_options("magic", MagicAnalysis))
    return [
        {
            "episode_id": g.episode_id,
            "game": g.game,
            "setting": g.setting,
            "seed": g.seed,
            "repetition": g.repetition,
            "challenger": g.challenger,
            "defender": g.defender,
            "competition": g.competition,
            "challenger_seats": ",".join(str(s) for s in g.challenger_seats),
            **dict(zip(COLUMNS, (float(x) for x in row), strict=True)),
        }
        for g, row in zip(games, tallies, strict=True)
    ]
