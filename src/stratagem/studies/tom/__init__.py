"""seed-002, "Implicit Theory of Mind in LLM Agent Decision-Making": TradeCraft self-play in which
agents report item-wise utilities (V0, V1, V2), scored for belief accuracy, proposal fairness and
how well the reports predict accept/reject decisions.

The metrics are pure functions of typed game records (`records.TomGame`, filled by `extract`).
Importing this package registers the study's report section, imported only when a report asks
for it (it fits models and draws plots, which a metric user does not need).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.forecasts import ForecastSet, register_forecasts
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import Section
from stratagem.studies.registry import Study, register
from stratagem.studies.tom.extract import has_tom_notes, is_tradecraft
from stratagem.studies.tom.options import TomOptions


def applies(episode: EpisodeData) -> bool:
    """A TradeCraft game (`tradecraft/3` is instance 3) played by the ToM-reporting agent."""
    return is_tradecraft(episode) and has_tom_notes(episode)


def sections(report: ReportData, episodes: Sequence[EpisodeData]) -> list[Section]:
    from stratagem.studies.tom.section import tom_sections  # deferred: see the docstring

    return tom_sections(report, episodes, report.study_options("tom", TomOptions))


def table(report: ReportData, episodes: Sequence[EpisodeData]) -> list[dict[str, Any]]:
    from stratagem.studies.tom.tidy import game_rows  # deferred: see the docstring

    return game_rows(report, episodes)


def study_forecasts(report: ReportData, episodes: Sequence[EpisodeData]) -> ForecastSet:
    from stratagem.studies.tom.forecasts import tom_forecasts  # deferred: see the docstring

    return tom_forecasts(report, episodes)


register_forecasts("tom", study_forecasts)
STUDY = register(
    Study(
        name="tom",
        title="Implicit Theory of Mind in LLM Agent Decision-Making",
        spec="seed-002",
        applies=applies,
        sections=sections,
        options=TomOptions,
        table=table,
    )
)
