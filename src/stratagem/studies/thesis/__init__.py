"""seed-001, "The Agent's Dilemma" (Cremonini, 2025): LLM agents of three architectures against
rule-based opponents in Prisoner's Dilemma-family games; comprehension and behaviour metrics, SFEM,
random forest + SHAP feature importance, and its Appendix-A data format."""

from __future__ import annotations

from collections.abc import Sequence

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.games import catalog_name, is_two_by_two
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import Section
from stratagem.games.catalog import GAMES
from stratagem.studies.registry import Study, register
from stratagem.studies.thesis.comprehension import ComprehensionOptions
from stratagem.studies.thesis.formats import export_csv, import_csv
from stratagem.studies.thesis.importer import ARCH_BY_KIND, SUMMARY_EVENT
from stratagem.studies.thesis.report_data import ThesisData, dataset_table
from stratagem.studies.thesis.report_plots import plots_section
from stratagem.studies.thesis.report_sfem import importance_section, sfem_section
from stratagem.studies.thesis.report_tables import tables_section

OTHER_STUDY_FAMILIES = ("seed-003",)
"""Catalog families of games another study owns: their 2x2 games are not the thesis' (seed-003's
pd/sh families are measured by the counterfactual study's own metrics)."""


def applies(episode: EpisodeData) -> bool:
    """An imported Appendix-A row, or an LLM agent of one of the thesis' architectures in seat 0
    against a rule-based opponent, in a two-player game with two actions each (seed-001 §4)."""
    if episode.has_event(SUMMARY_EVENT):
        return True
    if len(episode.seats) != 2 or not episode.llm_first or not episode.agent:
        return False
    if str(episode.agent.get("kind") or "plain") not in ARCH_BY_KIND:
        return False
    if episode.opponent_kind() != "strategy":
        return False
    stage = episode.stage
    if stage is None or not is_two_by_two(stage):
        return False
    entry = GAMES.get(catalog_name(episode.record.game))
    return entry is None or not entry.family.startswith(OTHER_STUDY_FAMILIES)


def sections(report: ReportData, episodes: Sequence[EpisodeData]) -> list[Section]:
    data = ThesisData.build(report, episodes)
    return [tables_section(data), plots_section(data), sfem_section(data), importance_section(data)]


STUDY = register(
    Study(
        name="thesis",
        title="The Agent's Dilemma",
        spec="seed-001",
        applies=applies,
        sections=sections,
        importers={"thesis-csv": import_csv},
        exporters={"thesis-csv": export_csv},
        options=ComprehensionOptions,
        table=dataset_table,
    )
)
