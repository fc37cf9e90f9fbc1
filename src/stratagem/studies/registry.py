"""The study registry: what each study contributes, found by name instead of by a switch.

A study (seed-001's thesis, seed-003's counterfactual, ...) is a package under `studies/` that
registers one `Study`: which episodes its metrics apply to, the report sections it adds there,
the leaderboards the viewer shows, and the file formats it imports and exports (`stratagem
import/export --format`). Adding a study is adding a package and calling `register`; the report,
the viewer, the CLI and the format lookups need no edit.
A plugin's study registers the same way (`stratagem.register.study`), its study and format names
prefixed with the plugin's namespace (`highcard:cards`, `--format highcard:csv`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stratagem import plugins
from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.leaderboards import LeaderboardBuilder
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_registry import (
    SectionBuilder,
    StudySections,
    register_sections,
    resolve_options,
)
from stratagem.errors import StratagemError
from stratagem.experiments.episode_io import ImportReport, export_episodes, import_episodes
from stratagem.experiments.store import ResultStore
from stratagem.plugins import Registry

Importer = Callable[[ResultStore, Path, str | None, str | None], ImportReport]
"""(store, file, experiment id or None, source or None) -> what was imported."""

Exporter = Callable[[ResultStore, Path, str | None, Mapping[str, str]], list[str]]
"""(store, target, experiment id or None, options such as {"scores": "years"}) -> lines to print."""

TableBuilder = Callable[[ReportData, Sequence[EpisodeData]], list[dict[str, Any]]]
"""The study's tidy per-game table (one dict per game), from the report data and the episodes the
study applies to, computed by the code its report sections use (`stratagem.open(...).study`)."""


@dataclass(frozen=True)
class Study:
    """A study: which episodes its metrics apply to, the report sections it adds there, its
    analysis options and its file formats. Registered with `stratagem.register.study`."""

    name: str
    """How `analysis:` and `report --set` name it (`<namespace>:<name>` for a plugin's)."""
    title: str
    spec: str
    """The spec it reproduces (e.g. "seed-001")."""
    applies: Callable[[EpisodeData], bool]
    """Whether the study's metrics are defined for an episode; its sections see only those."""
    sections: SectionBuilder
    importers: Mapping[str, Importer] = field(default_factory=dict)
    exporters: Mapping[str, Exporter] = field(default_factory=dict)
    options: type | None = None
    """The frozen dataclass of its analysis options (set by `analysis:` and `report --set`);
    its sections read them with `ReportData.study_options`."""
    table: TableBuilder | None = None
    """Its tidy per-game table, if it has one."""
    leaderboards: LeaderboardBuilder | None = None
    """Its leaderboards (`analysis.leaderboards`), if it has some: the viewer shows them on the
    experiment's page, each row opening the episodes behind it, as it shows the built-in
    studies'."""


def _import_jsonl(
    store: ResultStore, file: Path, experiment: str | None, source: str | None
) -> ImportReport:
    return import_episodes(store, file, experiment_id=experiment, source=source)


def _export_jsonl(
    store: ResultStore, file: Path, experiment: str | None, options: Mapping[str, str]
) -> list[str]:
    count = export_episodes(store, file, experiment_id=experiment)
    return [f"exported {count} episodes to {file}"]


def _export_parquet(
    store: ResultStore, directory: Path, experiment: str | None, options: Mapping[str, str]
) -> list[str]:
    from stratagem.analysis.frames import StoreFrames, write_parquet  # pandas, on demand

    written = write_parquet(StoreFrames(store, experiment), directory)
    return [f"exported {len(written)} tables ({', '.join(p.stem for p in written)}) to {directory}"]


BUILTIN_MODULES = (
    "stratagem.studies.counterfactual",
    "stratagem.studies.magic",
    "stratagem.studies.thesis",
    "stratagem.studies.tom",
)
"""stratagem's own studies, in the order their sections appear in a report."""

STUDIES: Registry[Study] = Registry("study", BUILTIN_MODULES)
"""Every study: the built-in ones in report order, then plugins' (`<namespace>:<name>`) as
their plugins load."""
IMPORTERS: Registry[Importer] = Registry("import format")
"""Import formats: the episode JSONL of docs/episode-format.md, then each study's. (The built-in
studies' are registered by `import stratagem.studies`, which runs before this module can be
used: a lookup here imports no study, so a built-in study's registration never imports the
others mid-import, out of their report order.)"""
EXPORTERS: Registry[Exporter] = Registry("export format")
"""Export formats: the episode JSONL, one Parquet file per stored table (docs/dataframes.md),
then each study's."""
IMPORTERS.add("jsonl", _import_jsonl)
EXPORTERS.add("jsonl", _export_jsonl)
EXPORTERS.add("parquet", _export_parquet)


def register(study: Study) -> Study:
    """Register a study, its report sections and its formats; returns the study as registered.

    While a plugin loads, the study and each of its formats are named `<namespace>:<name>`
    (`highcard:cards`, `stratagem import --format highcard:csv`), as every plugin name is, so
    a plugin's format never shadows a built-in one and loads its plugin when named. Any other
    name is taken once; a plugin loaded twice keeps its first registration."""
    loading = plugins.loading()  # (the built-in studies are registered before a plugin loads)
    full = _full_name(study.name, loading)
    importers = {_full_name(n, loading): f for n, f in study.importers.items()}
    exporters = {_full_name(n, loading): f for n, f in study.exporters.items()}
    if loading is None:  # refused before anything is registered
        for kind, names, known in (
            ("import", importers, IMPORTERS.builtin_names()),
            ("export", exporters, EXPORTERS.builtin_names()),
        ):
            taken = [name for name in names if name in known]
            if taken:
                raise StratagemError(
                    f"study '{full}': {kind} format '{taken[0]}' is already registered"
                )
    clashes = len(STUDIES.clashes)
    STUDIES.add(full, study)
    if len(STUDIES.clashes) > clashes:
        return STUDIES[full]
    registered = study
    if loading is not None:
        registered = dataclasses.replace(study, name=full, importers=importers, exporters=exporters)
        STUDIES.replace(full, registered)
    for name, importer in importers.items():
        IMPORTERS.add(name, importer)
    for name, exporter in exporters.items():
        EXPORTERS.add(name, exporter)
    register_sections(StudySections(full, study.applies, study.sections, study.options))
    return registered


def _full_name(name: str, plugin: plugins.Plugin | None) -> str:
    """`name` as `Registry.add` names it while `plugin` loads."""
    if plugin is None or name.startswith(f"{plugin.namespace}{plugins.SEPARATOR}"):
        return name
    return f"{plugin.namespace}{plugins.SEPARATOR}{name}"


def _format(kind: str, name: str, known: Mapping[str, object]) -> StratagemError:
    return StratagemError(f"--format: got '{name}', allowed: {', '.join(known)} ({kind})")


def get_importer(name: str) -> Importer:
    """An import format by name; a plugin's (`highcard:csv`) loads its plugin."""
    try:
        return IMPORTERS[name]
    except KeyError:
        raise plugins.unavailable("import format", name) or _format(
            "import", name, IMPORTERS
        ) from None


def get_exporter(name: str) -> Exporter:
    """An export format by name; a plugin's (`highcard:csv`) loads its plugin."""
    try:
        return EXPORTERS[name]
    except KeyError:
        raise plugins.unavailable("export format", name) or _format(
            "export", name, EXPORTERS
        ) from None


def check_analysis(settings: Mapping[str, Mapping[str, Any]]) -> None:
    """An experiment file's `analysis:` section, checked before anything is played: a misspelt
    option found only at report time would be found after the money was spent."""
    try:
        resolve_options(settings)
    except StratagemError as exc:
        raise StratagemError(f"analysis: {exc}") from None
