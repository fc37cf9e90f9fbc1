"""The plugins a results directory's experiments were run with, named again by the commands that
read it (show, report, status, view, export, import), so that an episode of a plugin's game reads
back without naming the plugin once more.

The stored experiment file keeps its `plugins:` in the form that names them from anywhere (a
file's absolute path, `plugin_names`). A store that cannot be read here is left to the command,
which reports it in its own words."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from stratagem import plugins
from stratagem.errors import StratagemError
from stratagem.experiments import provenance
from stratagem.experiments.plugin_names import name_plugin
from stratagem.experiments.store import ResultStore


def stored_plugins(store: ResultStore) -> list[tuple[str, str]]:
    """(experiment id, plugin) for every plugin a stored experiment file names."""
    return [
        (experiment.id, spec)
        for experiment in store.experiments()
        for spec in experiment.config.get("plugins") or []
        if isinstance(spec, str) and spec.strip()
    ]


def use_stored_plugins(paths: Iterable[Path], *, load: bool = False) -> list[str]:
    """Name the plugins the experiments of the stores at `paths` were run with; with `load`,
    import them now (a command that lists what they register, such as a report's studies).
    Returns a one-line warning for each that cannot be named or loaded; never raises."""
    if not plugins.enabled():
        return []
    warnings: list[str] = []
    for path in paths:
        try:
            with ResultStore(path, read_only=True) as store:
                named = stored_plugins(store)
        except (StratagemError, sqlite3.Error, OSError):
            continue  # the command opens the store itself and says what is wrong with it
        for experiment, spec in named:
            origin = f"experiment '{experiment}' of {path}"
            try:
                form = name_plugin(spec, origin)
            except StratagemError as exc:
                warnings.append(str(exc))
                continue
            if load:
                warnings += load_named([form])
    return list(dict.fromkeys(warnings))


def load_named(forms: Iterable[str]) -> list[str]:
    """Import the plugins `name_plugin` named (by the forms it returned); a warning line for
    each that fails."""
    wanted = set(forms)
    return [
        failed_line(plugin)
        for plugin in plugins.plugins()
        if plugin.target in wanted and not plugins.load(plugin)
    ]


def failed_line(plugin: plugins.Plugin) -> str:
    """A plugin that failed to load, in one line."""
    return f"plugin '{plugin.namespace}' ({plugin.target}) failed to load: {plugin.error}"


def check_store_provenance(paths: Iterable[Path]) -> list[str]:
    """A warning line for each plugin the stores' episodes were made with that is missing here
    (saying what to install) or another version."""
    warnings: list[str] = []
    for path in paths:
        try:
            with ResultStore(path, read_only=True) as store:
                records = store.plugin_records()
        except (StratagemError, sqlite3.Error, OSError):
            continue  # the command opens the store itself and says what is wrong with it
        warnings += provenance.check_stored(records, f"what {path} holds")
    return warnings
