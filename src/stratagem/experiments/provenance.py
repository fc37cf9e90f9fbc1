"""Which plugin code supplied an episode's game and seats, recorded with the episode (issue 34).

An episode of a plugin's game, architecture, strategy or provider stores, in its spec under
`plugins`, each such plugin's distribution and version (or, for a plugin file, a hash of its
content). Resuming, replaying or importing the episode checks it: a plugin that is missing is
one line saying what to install, another version is drift, refused unless `--force` (as changed
settings are). Episodes of stratagem's own names store nothing, so their ids, cache keys and
stored stores are unchanged: the record is in the stored spec, never in the id.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from stratagem import plugins
from stratagem.errors import StratagemError

KEY = "plugins"
"""Where a stored spec keeps its provenance records."""


def names_of(game: str, seats: Iterable[Any], model: str | None = None) -> list[str]:
    """The registered names an episode uses: its game, each seat's architecture, strategy and
    model string, and the grid's model."""
    names = [game]
    for seat in seats:
        if seat.agent is not None:
            names.append(seat.agent.kind)
        if seat.model is not None:
            names.append(seat.model.model)
        if seat.strategy is not None:
            names.append(seat.strategy)
    if model is not None:
        names.append(model)
    return names


def provenance(names: Iterable[str]) -> list[dict[str, str]]:
    """The provenance records of the plugins the names come from (in name order, once each);
    [] when every name is stratagem's own."""
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for name in names:
        namespace, _ = plugins.split(name)
        if namespace is None or namespace in seen:
            continue
        plugin = plugins.find(namespace)
        if plugin is None:
            continue
        seen.add(namespace)
        out.append(plugin.provenance())
    return out


def recorded(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The provenance records a stored spec carries ([] for stratagem's own names)."""
    value = spec.get(KEY)
    if not isinstance(value, list):
        return []
    return [r for r in value if isinstance(r, Mapping) and isinstance(r.get("plugin"), str)]


_FORCED = contextvars.ContextVar("plugin_drift_allowed", default=False)


@contextlib.contextmanager
def allow_drift() -> Iterator[None]:
    """Accept episodes of another version of their plugin (`stratagem import --force`)."""
    token = _FORCED.set(True)
    try:
        yield
    finally:
        _FORCED.reset(token)


def check(
    records: Sequence[Mapping[str, Any]], where: str, force: bool = False, reading: bool = False
) -> list[str]:
    """Refuse, in one line (`where` names the episodes: "the episode", "experiment 'x'"),
    episodes whose plugin is missing or failed to load; with another version, refuse unless
    `force` or `allow_drift()`. Returns the lines to print as warnings: the drift forced, and,
    `reading` stored results (show, view, report: they read what was stored, and say what is
    missing), every problem instead of refusing."""
    force = force or reading or _FORCED.get()
    lines: list[str] = []
    for record in records:
        namespace = str(record["plugin"])
        plugin = plugins.find(namespace)
        problem = None
        if plugin is None:
            problem = f"{where} was made with plugin '{namespace}', {_install(record)}"
        elif not plugins.load(plugin):
            problem = (
                f"{where} was made with plugin '{namespace}', which failed to load: {plugin.error}"
            )
        if problem is not None:
            if not reading:
                raise StratagemError(problem)
            lines.append(problem)
            continue
        assert plugin is not None
        now = plugin.provenance()
        if _same(record, now):
            continue
        line = f"{where} was made with plugin '{namespace}' {_version(record)}, not {_version(now)}"
        if not force:
            raise StratagemError(f"{line}; --force to go on with the installed one")
        lines.append(line)
    return lines


def _same(was: Mapping[str, Any], now: Mapping[str, Any]) -> bool:
    keys = ("distribution", "version", "sha256")
    return all(str(was.get(k) or "") == str(now.get(k) or "") for k in keys)


def _version(record: Mapping[str, Any]) -> str:
    if record.get("distribution"):
        return f"{record['distribution']} {record.get('version') or '(no version)'}"
    return f"file sha256 {record.get('sha256') or '?'}"


def _install(record: Mapping[str, Any]) -> str:
    if record.get("distribution"):
        return f"not installed: pip install '{record['distribution']}=={record.get('version')}'"
    return "not found: name its file with --plugin (or plugins: in the experiment file)"


def in_use() -> list[tuple[str, str, str, dict[str, str]]]:
    """The plugins loaded in this process, as another process needs them to load the same ones
    (a Ray worker): (namespace, target, origin, provenance record)."""
    return [
        (p.namespace, p.target, p.origin, p.provenance()) for p in plugins.plugins() if p.loaded
    ]


def require(uses: Sequence[tuple[str, str, str, Mapping[str, str]]], where: str) -> None:
    """Load, in this process, the plugins another one uses, each the same version, or refuse in
    one line naming what `where` lacks."""
    for namespace, target, origin, record in uses:
        if origin != "entry point":
            plugins.use(target, origin)
        plugin = plugins.find(namespace)
        if plugin is None:
            raise StratagemError(f"{where} lacks plugin '{namespace}': {_install(record)}")
        if not plugins.load(plugin):
            raise StratagemError(
                f"{where}: plugin '{namespace}' failed to load there: {plugin.error}"
            )
        now = plugin.provenance()
        if not _same(record, now):
            raise StratagemError(
                f"{where} has plugin '{namespace}' {_version(now)}, the run uses "
                f"{_version(record)}: install the same version on every node"
            )


def check_stored(records: Sequence[Mapping[str, Any]], where: str) -> list[str]:
    """For a command that reads stored episodes (show, view, report): one warning line for each
    plugin they were made with that is missing (saying what to install) or another version."""
    return check(records, where, reading=True)
