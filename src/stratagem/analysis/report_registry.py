"""The hook through which studies add their sections to the report.

The report (`analysis`) sits below the studies (`studies/`) in the layer order of design.md, so it
cannot import them: each study registers here what it contributes (a predicate saying which
episodes it applies to, and a builder of its sections), and the report composes the contributions
of the studies that apply, in registration order. `import stratagem.studies` registers the
built-in ones (the CLI does so before it builds a report); a plugin's studies (`<namespace>:
<name>`) register when their plugin loads, which the report makes happen for the plugins its
episodes were made with and those its options name (`analysis.needed_plugins`). A study sees
the cells' own episodes: replicate copies (`replicates:`) are its noise floor's, not its tables'
(`analysis.noise_floor.without_copies`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stratagem import plugins
from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.needed_plugins import load_plugins
from stratagem.analysis.noise_floor import without_copies
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_options import build_options, differences
from stratagem.analysis.report_views import Note, Section
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
    options: type | None = None
    """The frozen dataclass of the study's analysis options (`analysis.report_options`), if any."""


_REGISTRY: dict[str, StudySections] = {}


def register_sections(contribution: StudySections) -> None:
    """Add (or, under the same name, replace) a study's report contribution."""
    if not contribution.name:
        raise StratagemError("a study's report sections need a name")
    _REGISTRY[contribution.name] = contribution


def registered() -> tuple[StudySections, ...]:
    return tuple(_REGISTRY.values())


def resolve_options(settings: Mapping[str, Mapping[str, Any]]) -> dict[str, object]:
    """Each registered study's options from `{study: {option: value}}` (the defaults where a study
    is not named); a study without options, or an option it does not have, is a one-line error.
    A plugin's study (`highcard:cards`) loads its plugin first."""
    load_plugins(settings)
    classes = {s.name: s.options for s in _REGISTRY.values() if s.options is not None}
    for study in settings:
        if study not in classes:
            failed = plugins.unavailable("study", study)
            if failed is not None:
                raise failed
            hint = "; is its plugin installed, or named with --plugin?" if ":" in study else ""
            raise StratagemError(
                f"analysis options: no study '{study}' has options; studies with options: "
                f"{', '.join(classes) or 'none'}{hint}"
            )
    return {name: build_options(cls, settings.get(name, {}), name) for name, cls in classes.items()}


def study_sections(data: ReportData) -> list[Section]:
    """The sections of every registered study that applies to some of the episodes, each study's
    first one opening with the analysis options that differ from its defaults."""
    out: list[Section] = []
    data = without_copies(data)  # a study's tables are the cells'; the copies, its noise floor's
    for study in _REGISTRY.values():
        mine = [e for e in data.episodes if study.applies(e)]
        if not mine:
            continue
        sections = study.build(data, mine)
        options = data.options.get(study.name)
        changed = differences(options) if options is not None else []
        if sections and changed:
            stated = "; ".join(f"{name} = {value!r} (default {default!r})"
                               for name, value, default in changed)  # fmt: skip
            sections[0].blocks.insert(0, Note(f"Analysis options that differ from the defaults: "
                                              f"{stated}."))  # fmt: skip
        out.extend(sections)
    return out
