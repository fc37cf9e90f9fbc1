"""The study registry: what each study contributes, found by name instead of by a switch.

A study (seed-001's thesis, seed-003's counterfactual, ...) is a package under `studies/` that
registers one `Study`: which episodes its metrics apply to, the report sections it adds there,
and the file formats it imports and exports (`stratagem import/export --format`). Adding a study is
adding a package and calling `register`; the report, the CLI and the format lookups need no edit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stratagem.analysis.episodes import EpisodeData
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

Importer = Callable[[ResultStore, Path, str | None, str | None], ImportReport]
"""(store, file, experiment id or None, source or None) -> what was imported."""

Exporter = Callable[[ResultStore, Path, str | None, Mapping[str, str]], list[str]]
"""(store, target, experiment id or None, options such as {"scores": "years"}) -> lines to print."""

TableBuilder = Callable[[ReportData, Sequence[EpisodeData]], list[dict[str, Any]]]
"""The study's tidy per-game table (one dict per game), from the report data and the episodes the
study applies to, computed by the code its report sections use (`stratagem.open(...).study`)."""


@dataclass(frozen=True)
class Study:
    name: str
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


STUDIES: dict[str, Study] = {}
IMPORTERS: dict[str, Importer] = {"jsonl": _import_jsonl}
"""Import formats: the episode JSONL of docs/episode-format.md, then each study's."""
EXPORTERS: dict[str, Exporter] = {"jsonl": _export_jsonl, "parquet": _export_parquet}
"""Export formats: the episode JSONL, one Parquet file per stored table (docs/dataframes.md),
then each study's."""


def register(study: Study) -> Study:
    """Register a study, its report sections and its formats; a format name is taken once."""
    for kind, known, mine in (
        ("import", IMPORTERS, study.importers),
        ("export", EXPORTERS, study.exporters),
    ):
        for name in mine:
            owner = next((s.name for s in STUDIES.values() if name in _formats(s, kind)), None)
            if name in known and owner != study.name:
                raise StratagemError(
                    f"study '{study.name}': {kind} format '{name}' is already registered"
                )
    STUDIES[study.name] = study
    IMPORTERS.update(study.importers)
    EXPORTERS.update(study.exporters)
    register_sections(StudySections(study.name, study.applies, study.sections, study.options))
    return study


def _formats(study: Study, kind: str) -> Mapping[str, object]:
    return study.importers if kind == "import" else study.exporters


def _format(kind: str, name: str, known: Mapping[str, object]) -> StratagemError:
    return StratagemError(f"--format: got '{name}', allowed: {', '.join(known)} ({kind})")


def get_importer(name: str) -> Importer:
    try:
        return IMPORTERS[name]
    except KeyError:
        raise _format("import", name, IMPORTERS) from None


def get_exporter(name: str) -> Exporter:
    try:
        return EXPORTERS[name]
    except KeyError:
        raise _format("export", name, EXPORTERS) from None


def check_analysis(settings: Mapping[str, Mapping[str, Any]]) -> None:
    """An experiment file's `analysis:` section, checked before anything is played: a misspelt
    option found only at report time would be found after the money was spent."""
    try:
        resolve_options(settings)
    except StratagemError as exc:
        raise StratagemError(f"analysis: {exc}") from None
