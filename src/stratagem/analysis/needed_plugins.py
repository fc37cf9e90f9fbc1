"""The plugins that stored episodes were made with, loaded before a report or the viewer composes
what plugins register (study sections, options, game views).

Plugins load lazily, by name, so a command that only reads results has not loaded any: without
this, a report would silently leave out a plugin study's sections and the viewer its game views.
A plugin's names are `<namespace>:<name>`, so an episode's game (`highcard:high-card/3`), a
study named in `analysis:` or `--set` (`highcard:cards`) and the provenance records of the
stored episodes (`ResultStore.plugin_records`) each name the plugin to load.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from stratagem import plugins


def load_plugins(names: Iterable[str] = (), records: Iterable[Mapping[str, Any]] = ()) -> list[str]:
    """Import the plugins whose namespaces prefix `names` and those `records` name; returns one
    line for each plugin that cannot be had (not installed, or failed to load), in the order
    first met. A name that names no plugin (a built-in game, `openspiel:chess`) is left alone."""
    wanted: dict[str, Mapping[str, Any] | None] = {}
    for name in names:
        namespace, _ = plugins.split(name)
        if namespace is not None:
            wanted.setdefault(namespace, None)
    for record in records:
        recorded = record.get("plugin")
        if isinstance(recorded, str) and wanted.get(recorded) is None:
            wanted[recorded] = record
    problems: list[str] = []
    for space, made_by in wanted.items():
        plugin = plugins.find(space)
        if plugin is None:
            problems.append(f"plugin '{space}' is not available here: {_missing(made_by)}")
        elif not plugins.load(plugin):
            problems.append(f"plugin '{space}' ({plugin.target}) failed to load: {plugin.error}")
    return problems


def _missing(record: Mapping[str, Any] | None) -> str:
    """What to install or name to get a missing plugin back, from its provenance record."""
    if record is not None and record.get("distribution"):
        return f"pip install '{record['distribution']}=={record.get('version') or ''}'"
    return "name its file with --plugin"
