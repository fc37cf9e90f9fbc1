"""seed-004, "MAgIC": LLM challengers against fixed GPT-4 defenders in five three-player games
(Chameleon, Undercover, Cost Sharing, three-player Prisoner's Dilemma, Public Good), scored on
seven abilities and a win rate, with and without the PGM-aware agent.

The metrics are pure functions of typed game records (`records.MagicGame`), so they can be
recomputed on any stored or imported games. Importing this package registers the study's report
section (`section`) but imports it only when a report asks for it: the section draws plots and
fits ratings, which a metric user does not need.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.forecasts import ForecastSet, register_forecasts
from stratagem.analysis.leaderboards import Leaderboard
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import Section
from stratagem.studies.magic.options import MagicAnalysis
from stratagem.studies.magic.records import GAMES
from stratagem.studies.registry import Study, register


def applies(episode: EpisodeData) -> bool:
    """One of seed-004's five games (§3; `chameleon/3` is setting 3 of Chameleon)."""
    return episode.record.game.partition("/")[0] in GAMES


def sections(report: ReportData, episodes: Sequence[EpisodeData]) -> list[Section]:
    from stratagem.studies.magic.section import magic_sections  # deferred: see the docstring

    return magic_sections(report, episodes)


def table(report: ReportData, episodes: Sequence[EpisodeData]) -> list[dict[str, Any]]:
    from stratagem.studies.magic.tidy import game_rows  # deferred: see the docstring

    return game_rows(report, episodes)


def leaderboards(report: ReportData, episodes: Sequence[EpisodeData]) -> list[Leaderboard]:
    from stratagem.studies.magic.boards import magic_leaderboards  # deferred: see the docstring

    return magic_leaderboards(report, episodes)


def study_forecasts(report: ReportData, episodes: Sequence[EpisodeData]) -> ForecastSet:
    from stratagem.studies.magic.forecasts import magic_forecasts  # deferred: see the docstring

    return magic_forecasts(report, episodes)


register_forecasts("magic", study_forecasts)
STUDY = register(
    Study(
        name="magic",
        title="MAgIC: Investigation of LLM-powered multi-agent systems in cognition, "
        "adaptability, rationality and collaboration",
        spec="seed-004",
        applies=applies,
        sections=sections,
        options=MagicAnalysis,
        table=table,
        leaderboards=leaderboards,
    )
)
