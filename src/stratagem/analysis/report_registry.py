"""The hook through which studies add their sections to the report.

The report (`analysis`) sits below the studies (`studies/`) in the layer order of design.md, so it
cannot import them: each study registers here what it contributes (a predicate saying which
episodes it applies to, and a builder of its sections), and the report composes the contributions
of the studies that apply, in registration order. `import stratagem.studies` registers the
built-in ones (the CLI does so before it builds a report).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import Section
from stratagem.errors import StratagemError

SectionBuilder = Callable[[ReportData, Sequence[EpisodeData]], list[Section]]
"""Builds a study's sections from the report data and the episodes the study applies to; an
empty list when, after all, there is nothing to show."""


@dataclass(frozen=True)
class StudySections:
    name: str
    applies: Callable[[EpisodeData], bool]
    """Whether the study's metrics are defined for an episode."""
    build: SectionBuilder


_REGISTRY: dict[str, StudySections] = {}


def register_sections(contribution: StudySections) -> None:
    """Add (or, under the same name, replace) a study's report contribution."""
    if not contribution.name:
        raise StratagemError("a study's report sections need a name")
    _REGISTRY[contribution.name] = contribution


def registered() -> tuple[StudySections, ...]:
    return tuple(_REGISTRY.values())


def study_sections(data: ReportData) -> list[Section]:
    """The sections of every registered study that applies to some of the episodes."""
    out: list[Section] = []
    for study in _REGISTRY.values():
        mine = [e for e in data.episodes if study.applies(e)]
        if mine:
            out.extend(study.build(data, mine))
    return out
