"""One self-contained HTML report of an experiment: what was played, how, and what came out.

design.md: reports are single HTML files with tables and plots, readable offline, and analysis reads
only from the store. So the report is built from the store alone (episode specs, rounds, events,
answers, call records), embeds its plots as PNG data URIs, loads no script, font or stylesheet from
anywhere, and writes nothing else. Every table and plot has a one-sentence caption.

The general sections (headline, methods, seats, results per setting and per seat, prompt
variants, the noise floor of replicate cells, invalid outputs, calls, failures, transcripts of a
sample of episodes) work for any game. Each study adds its own sections where it applies,
through `analysis.report_registry` (`import stratagem.studies` registers the built-in ones; a
plugin's studies register when the plugin loads, and the report loads the plugins its episodes
were made with and those its options name). What does not apply is replaced by one line saying
why, never by an error; invalid outputs are always shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

import jinja2

from stratagem.analysis.needed_plugins import load_plugins
from stratagem.analysis.noise_floor import without_copies
from stratagem.analysis.report_calibration import calibration_section
from stratagem.analysis.report_data import ReportData, listing
from stratagem.analysis.report_methods import methods_section
from stratagem.analysis.report_noise import noise_section
from stratagem.analysis.report_options import merge
from stratagem.analysis.report_outcomes import header, results_section
from stratagem.analysis.report_prompts import prompts_section
from stratagem.analysis.report_registry import resolve_options, study_sections
from stratagem.analysis.report_stated import stated_section
from stratagem.analysis.report_transcripts import choose_sample, transcripts_section
from stratagem.analysis.report_views import Note, Section
from stratagem.errors import StratagemError
from stratagem.experiments.store import ExperimentRecord, ResultStore

TEMPLATE = "report.html.j2"
TEMPLATES = Path(__file__).parent / "templates"


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "experiment"


def report_file_name(experiment_id: str) -> str:
    """The file a report is written to next to its store (and where the viewer finds it)."""
    return f"report-{_safe_name(experiment_id)}.html"


def _render(
    store: ResultStore, experiment: ExperimentRecord, settings: Mapping[str, Mapping[str, Any]]
) -> str:
    stored = (experiment.config or {}).get("analysis") or {}
    merged = merge(stored, settings)
    missing = load_plugins(merged, store.plugin_records(experiment.id))
    options = resolve_options(merged)
    data = ReportData.load(store, experiment, options)
    # Episodes imported without provenance records still name their plugin's game.
    missing += load_plugins(e.record.game for e in data.episodes)
    sample = choose_sample(data.episodes)
    sections = [
        methods_section(data),
        results_section(data, sample.links()),
        *prompts_section(without_copies(data)),  # its intervals take episodes as independent
        *stated_section(data),
        *noise_section(data),
        *_missing_plugins(list(dict.fromkeys(missing))),
        *study_sections(data),
    ]
    calibrated = calibration_section(data)
    if calibrated is not None:
        sections.append(calibrated)
    transcripts = transcripts_section(data, sample)
    if transcripts is not None:
        sections.append(transcripts)
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return environment.get_template(TEMPLATE).render(header=header(data), sections=sections)


def _missing_plugins(lines: list[str]) -> list[Section]:
    """A section saying which plugins the episodes were made with that could not be loaded: the
    general sections still apply, but those plugins' studies cannot add theirs."""
    if not lines:
        return []
    notes = [Note(f"{line}; the sections of its studies are missing.") for line in lines]
    return [Section("plugins", "Plugins", [*notes])]


# -- entry points ----------------------------------------------------------------------------------


def _open(source: ResultStore | str | PathLike[str]) -> tuple[ResultStore, bool, Path | None]:
    """The store, whether we opened it (and must close it), and the folder a report goes to."""
    if isinstance(source, ResultStore):
        home = None if source.path == ":memory:" else Path(source.path).parent
        return source, False, home
    from stratagem.experiments.runner import STORE_FILE

    path = Path(source)
    if path.is_dir():
        file = path / STORE_FILE
        if not file.is_file():
            raise StratagemError(f"{path}: no result store ({STORE_FILE}) in this directory")
    elif path.is_file():
        file = path
    else:
        raise StratagemError(f"{path}: no such directory or result store")
    # Opening a missing path would create an empty store: checked above, so this only reads.
    return ResultStore(file), True, file.parent


def _choose(store: ResultStore, experiment_id: str | None) -> ExperimentRecord:
    experiments = store.experiments()
    if experiment_id is not None:
        found = store.experiment(experiment_id)
        if found is None:
            known = listing(e.id for e in experiments) if experiments else "none"
            raise StratagemError(f"unknown experiment '{experiment_id}' (stored: {known})")
        return found
    if not experiments:
        raise StratagemError(f"{store.path}: the store holds no experiment")
    if len(experiments) > 1:
        raise StratagemError(
            f"{store.path} holds {len(experiments)} experiments "
            f"({listing(e.id for e in experiments)}): choose one with --experiment"
        )
    return experiments[0]


def render_report(
    store: ResultStore,
    experiment_id: str,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The report of one stored experiment as an HTML string; `settings` are analysis options
    (`{study: {option: value}}`) over the experiment file's `analysis:` section."""
    experiment = store.experiment(experiment_id)
    if experiment is None:
        raise StratagemError(f"unknown experiment '{experiment_id}'")
    return _render(store, experiment, settings or {})


def build_report(
    store_path_or_store: ResultStore | str | PathLike[str],
    experiment_id: str | None = None,
    out_path: str | PathLike[str] | None = None,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Write one experiment's self-contained HTML report and return its path.

    The store is a `ResultStore`, an experiment directory holding `stratagem.db`, or the .db file.
    Without `experiment_id` the store must hold exactly one experiment. Without `out_path` the
    report goes next to the store, as `report-<experiment id>.html`. `settings` are analysis options
    (`{study: {option: value}}`, `stratagem report --set`) over the experiment file's `analysis:`.
    """
    store, owned, home = _open(store_path_or_store)
    try:
        experiment = _choose(store, experiment_id)
        html = _render(store, experiment, settings or {})
    finally:
        if owned:
            store.close()
    if out_path is not None:
        target = Path(out_path)
    elif home is not None:
        target = home / report_file_name(experiment.id)
    else:
        raise StratagemError("an in-memory store has no folder: give the report's path")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise StratagemError(f"{target}: cannot write the report ({exc.strerror or exc})") from None
    return target
