"""What the thesis' report sections share: its episodes, the per-game dataset (seed-001 §8.2) and
the SFEM fits (§10.2), computed once for the four sections that use them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stratagem.analysis import sfem
from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.games import is_dilemma
from stratagem.analysis.report_data import NO_GAMES, ReportData, listing
from stratagem.errors import StratagemError
from stratagem.studies.thesis.comprehension import ComprehensionOptions
from stratagem.studies.thesis.dataset import dataset_rows, episode_settings
from stratagem.studies.thesis.importer import SUMMARY_EVENT

ARCH_SHORT: dict[str, str] = {
    "Plain_LLM": "Plain LLM",
    "Tool": "Tool-based",
    "Assistant": "Debate-based",
}
"""Readable names of the thesis' architecture codes (seed-001 §6: "Assistant" is the debate)."""


def arch_name(arch: str) -> str:
    return ARCH_SHORT.get(arch, arch)


def agent_arch(arch: str, agent: str) -> str:
    """An architecture code made specific to one agent configuration, for display."""
    return f"{arch_name(arch)} “{agent}”"


def _configuration(agent: Mapping[str, Any]) -> str:
    """An agent configuration apart from its name and attitude."""
    return repr(sorted((k, repr(v)) for k, v in agent.items() if k not in ("name", "attitude")))


@dataclass
class ThesisData:
    """The thesis' view of an experiment: the episodes it applies to and what is computed from
    them."""

    report: ReportData
    episodes: Sequence[EpisodeData]
    dataset: list[dict[str, Any]] = field(default_factory=list)
    dataset_note: str = ""
    sfem_fits: dict[tuple[str, str], sfem.SfemResult] = field(default_factory=dict)
    sfem_games: dict[tuple[str, str], int] = field(default_factory=dict)

    @property
    def with_rounds(self) -> list[EpisodeData]:
        return [e for e in self.episodes if e.rounds]

    def left_out(self) -> int:
        return len(self.report.episodes) - len(self.episodes)

    def invalid_moves(self) -> int:
        return sum(e.decisions(0)[1] for e in self.with_rounds)

    @classmethod
    def build(cls, report: ReportData, episodes: Sequence[EpisodeData]) -> ThesisData:
        data = cls.with_dataset(report, episodes)
        data._build_sfem()
        return data

    @classmethod
    def with_dataset(cls, report: ReportData, episodes: Sequence[EpisodeData]) -> ThesisData:
        """The per-game dataset alone, without the SFEM fits (the study's table)."""
        data = cls(report, episodes)
        data._build_dataset()
        return data

    def _build_dataset(self) -> None:
        """The per-game metrics (seed-001 §8.2) of the episodes the study applies to."""
        if not self.episodes:
            self.dataset_note = NO_GAMES
            return
        try:
            rows = dataset_rows(
                self.report.store,
                ((e.record, e.rounds, e.events) for e in self.episodes),
                options=self.report.study_options("thesis", ComprehensionOptions),
            )
        except StratagemError as exc:
            self.dataset_note = f"The per-game metrics could not be computed: {exc}"
            return
        measured = [e for e in self.episodes if e.rounds or e.has_event(SUMMARY_EVENT)]
        if len(measured) == len(rows):
            # Agent configurations of one architecture that differ in more than the attitude
            # (a setting the tables already split by, as the thesis does) would be pooled by
            # the Arch column; name them apart so no table mixes them.
            kinds: dict[str, set[str]] = defaultdict(set)
            for e, row in zip(measured, rows, strict=True):
                kinds[str(row["Arch"])].add(_configuration(e.agent))
            for e, row in zip(measured, rows, strict=True):
                if len(kinds[str(row["Arch"])]) > 1:
                    row["Arch"] = agent_arch(str(row["Arch"]), e.agent_name)
        self.dataset = rows
        if not rows:
            self.dataset_note = "No game has metrics to aggregate."

    def _build_sfem(self) -> None:
        groups: dict[tuple[str, str], list[tuple[list[int], list[int]]]] = defaultdict(list)
        for e in self.with_rounds:
            stage = e.stage
            if stage is None or not e.llm_first or not is_dilemma(stage):
                continue
            labels = stage.labels
            settings = episode_settings(e.record, 0, len(e.rounds))
            arch = self._arch_of(e, str(settings["Arch"]))
            # 0 = cooperate, 1 = anything else; a missing (invalid) move counts as not
            # cooperating, as in the behaviour metrics (seed-001 AMBIG-3).
            mine = [0 if r.actions[0] == labels[0][0] else 1 for r in e.rounds]
            theirs = [0 if r.actions[1] == labels[1][0] else 1 for r in e.rounds]
            groups[(arch, str(settings["Model"]))].append((mine, theirs))
        for key, games in groups.items():
            try:
                self.sfem_fits[key] = sfem.estimate(games)
                self.sfem_games[key] = len(games)
            except StratagemError:
                continue

    def _arch_of(self, episode: EpisodeData, arch: str) -> str:
        relabelled = {str(r["Arch"]) for r in self.dataset}
        candidate = agent_arch(arch, episode.agent_name)
        return candidate if candidate in relabelled else arch

    def scope_note(self) -> str:
        """Which episodes the thesis' sections leave out, and why."""
        n = self.left_out()
        if not n:
            return ""
        mine = {e.record.id for e in self.episodes}
        games = listing(
            dict.fromkeys(e.record.game for e in self.report.episodes if e.record.id not in mine)
        )
        return (
            f"{n:,} of the experiment's {len(self.report.episodes):,} games ({games}) are left out "
            "of the study's sections: its metrics describe an LLM agent in seat 0 against a "
            "rule-based opponent in a two-player game with two actions each (cooperate or not)."
        )


def dataset_table(report: ReportData, episodes: Sequence[EpisodeData]) -> list[dict[str, Any]]:
    """The per-game dataset (seed-001 §8.2, Appendix A's columns) the thesis' tables and plots
    are computed from, each row led by its episode's id; no rows where it cannot be computed."""
    data = ThesisData.with_dataset(report, episodes)
    measured = [e.record.id for e in episodes if e.rounds or e.has_event(SUMMARY_EVENT)]
    if len(measured) != len(data.dataset):
        return [dict(row) for row in data.dataset]
    return [{"episode_id": i, **row} for i, row in zip(measured, data.dataset, strict=True)]
