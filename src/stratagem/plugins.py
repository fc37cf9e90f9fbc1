"""Plugins: games, agents, strategies, models and studies from a researcher's own package.

A plugin is a Python module that registers names through `stratagem.register`. It is found three
ways: an entry point of the `stratagem` group (`[project.entry-points.stratagem] mypkg =
"mypkg._stratagem"`), a module or `.py` file named on the command line (`--plugin`), in an
experiment file (`plugins:`) or in `STRATAGEM_PLUGINS`. Each plugin has a namespace (the entry
point's name, the module's top-level name, the file's stem) and its names are `<namespace>:<name>`
(`highcard:high-card`) for every kind. A plugin is imported lazily, the first time one of its
names is resolved (inspect_ai's way, not Gymnasium 0.x's import-everything), so a broken or slow
plugin never touches a command that does not use it. `STRATAGEM_NO_PLUGINS=1` turns discovery off.

stratagem's own families enter through the same door: each kind's registry imports its built-in
modules on first use, and they register with the same functions a plugin calls (`Registry.add`,
behind `stratagem.register`). Built-in names carry no namespace and win every clash.

This module sits at the bottom with `errors`: it imports nothing else of stratagem, so every
layer's registry can be a `Registry`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import re
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, TypeVar

from stratagem.errors import StratagemError

GROUP = "stratagem"
"""The entry-point group plugin packages declare."""

SEPARATOR = ":"
"""Between a plugin's namespace and its own name, for every kind: `highcard:high-card`."""

ENV_PLUGINS = "STRATAGEM_PLUGINS"
"""Modules or files to use as plugins, separated by commas (or the path separator)."""

ENV_NO_PLUGINS = "STRATAGEM_NO_PLUGINS"
"""`1` turns every plugin off: no entry point, no `--plugin`, no `plugins:`."""

_NAMESPACE = re.compile(r"[A-Za-z_][A-Za-z0-9_\-.]*")

RESERVED = frozenset(
    {"stratagem", "openspiel", "textarena", "axl", "scripted", "local", "openai", "anthropic",
     "bedrock", "human", "strategy"}
)  # fmt: skip
"""Prefixes stratagem's own names use: a plugin cannot take them as its namespace (built-in names
win every clash)."""


@dataclass
class Plugin:
    """One plugin found: where it comes from, and once loaded, what it registered."""

    namespace: str
    target: str
    """The module (`mypkg._stratagem`) or file (`/abs/high_card.py`) that registers its names."""
    origin: str
    """How it was found: "entry point", "command line", "experiment file", "environment"."""
    distribution: str | None = None
    version: str | None = None
    loaded: bool = False
    error: str | None = None
    """Why it failed to load (one line), once it has failed."""
    registered: dict[str, list[str]] = field(default_factory=dict)
    """Kind -> the full names it registered."""
    file_hash: str | None = None

    @property
    def is_file(self) -> bool:
        return self.target.endswith(".py")

    def same_code(self, other: Plugin) -> bool:
        """Whether two findings name one plugin: the same file, or modules of one top-level
        package (`--plugin demo` of an installed `demo` whose entry point is `demo._stratagem`)."""
        if self.is_file or other.is_file:
            return self.target == other.target
        return self.target.partition(".")[0] == other.target.partition(".")[0]

    def provenance(self) -> dict[str, str]:
        """What an episode records of the code that supplied its game or seats."""
        if self.distribution is not None:
            return {
                "plugin": self.namespace,
                "distribution": self.distribution,
                "version": self.version or "",
            }
        if self.file_hash is None:
            self.file_hash = _hash_of(self.target)
        return {"plugin": self.namespace, "sha256": self.file_hash or ""}


_lock = threading.RLock()
_plugins: dict[str, Plugin] = {}
_discovered = False
_loading: list[Plugin] = []
"""The plugins being imported now, innermost last: what a registration is attributed to."""


def enabled() -> bool:
    return os.environ.get(ENV_NO_PLUGINS, "").strip() not in {"1", "true", "yes"}


def _discover() -> None:
    """Find the entry points and the environment's plugins once (nothing is imported)."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    if not enabled():
        return
    try:
        points = importlib.metadata.entry_points(group=GROUP)
    except Exception as exc:  # a broken installed distribution must not stop a command
        _plugins.setdefault("?", Plugin("?", "?", "entry point", error=f"entry points: {exc}"))
        return
    for point in points:
        dist = point.dist
        _add(
            Plugin(
                point.name,
                point.value.partition(":")[0].strip(),
                "entry point",
                distribution=dist.name if dist is not None else None,
                version=dist.version if dist is not None else None,
            )
        )
    for spec in re.split(r"[,\n" + re.escape(os.pathsep) + "]", os.environ.get(ENV_PLUGINS, "")):
        if spec.strip():
            use(spec.strip(), origin="environment")


def _add(plugin: Plugin) -> Plugin:
    if plugin.namespace in RESERVED:
        plugin.error = f"namespace '{plugin.namespace}' is stratagem's own; rename the plugin"
        _plugins.setdefault(f"{plugin.namespace} ({plugin.target})", plugin)
        return plugin
    known = _plugins.get(plugin.namespace)
    if known is not None:
        if not known.same_code(plugin):
            plugin.error = (
                f"namespace '{plugin.namespace}' is taken by {known.target} ({known.origin})"
            )
            _plugins.setdefault(f"{plugin.namespace} ({plugin.target})", plugin)
        return known
    _plugins[plugin.namespace] = plugin
    return plugin


def use(spec: str, origin: str = "command line", base: Path | None = None) -> Plugin:
    """Name a module (`my_games`) or a file (`./lib/high_card.py`, relative to `base`) as a
    plugin; it is imported when one of its names is first resolved. Refuses what cannot be a
    plugin name, in one line."""
    text = spec.strip()
    if not text:
        raise StratagemError(f"plugin: an empty name ({origin})")
    if text.endswith(".py") or "/" in text or os.sep in text:
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = (base or Path.cwd()) / path
        path = path.resolve()
        if not path.is_file():
            raise StratagemError(f"plugin '{spec}' ({origin}): no such file {path}")
        namespace, target = path.stem, str(path)
    else:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", text):
            raise StratagemError(f"plugin '{spec}' ({origin}): not a module name or a .py file")
        namespace, target = text.partition(".")[0], text
    if not _NAMESPACE.fullmatch(namespace):
        raise StratagemError(f"plugin '{spec}' ({origin}): '{namespace}' cannot be a namespace")
    if not enabled():  # named, but off: none of its names resolves
        return Plugin(namespace, target, origin, error=f"plugins are off ({ENV_NO_PLUGINS}=1)")
    with _lock:
        _discover()
        return _add(Plugin(namespace, target, origin))


def plugins() -> list[Plugin]:
    """Every plugin found, loaded or not."""
    with _lock:
        _discover()
        return list(_plugins.values())


def find(namespace: str) -> Plugin | None:
    with _lock:
        _discover()
        return _plugins.get(namespace)


def load(plugin: Plugin) -> bool:
    """Import a plugin once; a failure is kept as its one-line `error` (never raised)."""
    with _lock:
        if plugin.loaded or plugin.error is not None or plugin in _loading:
            return plugin.loaded  # (a plugin that looks its own names up while it imports)
        _builtins_first()
        _loading.append(plugin)
        try:
            _import(plugin)
            plugin.loaded = True
        except Exception as exc:  # a plugin's own bug: reported in one line where it is used
            plugin.error = f"{type(exc).__name__}: {_one_line(str(exc))}"
        finally:
            _loading.pop()
        return plugin.loaded


def _builtins_first() -> None:
    """Register every built-in name before a plugin imports: stratagem modules a plugin imports
    for the first time register their names then, and those are stratagem's own, not the
    plugin's."""
    importlib.import_module("stratagem.register")
    for registry in list(_REGISTRIES):
        registry._ensure_builtin()


def load_all() -> list[Plugin]:
    """Import every plugin found (for listings): failures stay as their `error`."""
    for plugin in plugins():
        load(plugin)
    return plugins()


def _import(plugin: Plugin) -> ModuleType:
    if not plugin.is_file:
        return importlib.import_module(plugin.target)
    name = f"stratagem_plugin_{re.sub(r'[^A-Za-z0-9_]', '_', plugin.namespace)}"
    spec = importlib.util.spec_from_file_location(name, plugin.target)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {plugin.target}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    plugin.file_hash = _hash_of(plugin.target)
    return module


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "(no message)"


def _hash_of(path: str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return None


def loading() -> Plugin | None:
    """The plugin being imported now, if any."""
    return _loading[-1] if _loading else None


def split(name: str) -> tuple[str | None, str]:
    """`highcard:high-card` -> ("highcard", "high-card") when `highcard` is a plugin found;
    (None, name) for every other name (built-in prefixes such as `openspiel:` included)."""
    namespace, sep, rest = name.partition(SEPARATOR)
    if not sep or not rest:
        return None, name
    return (namespace, rest) if find(namespace) is not None else (None, name)


def unavailable(kind: str, name: str) -> StratagemError | None:
    """The one-line error for a name whose plugin failed to import; None otherwise (a name of
    no plugin, or one its loaded plugin does not register: the registry's unknown-name error)."""
    namespace, _ = split(name)
    plugin = find(namespace) if namespace else None
    if plugin is None:
        return None
    if plugin.error is not None:
        return StratagemError(
            f"{kind} '{name}': plugin '{plugin.namespace}' ({plugin.target}) failed to load: "
            f"{plugin.error}"
        )
    return None


T = TypeVar("T")

_REGISTRIES: list[Registry[Any]] = []
"""Every kind's registry, so that a plugin loads after all of stratagem's names."""


class Registry(Mapping[str, T], Generic[T]):
    """One kind's names (games, architectures, ...): its built-in modules are imported on first
    use and register through `add`, as plugins do; a plugin's names load with their plugin.

    Iterating lists the built-in names and those of plugins loaded so far; `load_all()` first
    for a full listing."""

    def __init__(self, kind: str, builtin: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self._builtin = builtin
        self._builtin_loaded = not builtin
        self._items: dict[str, T] = {}
        self._owners: dict[str, Plugin | None] = {}
        self.clashes: list[str] = []
        """Plugin names refused because a built-in (or an earlier plugin) has them."""
        _REGISTRIES.append(self)

    def _ensure_builtin(self) -> None:
        if self._builtin_loaded:
            return
        with _lock:
            if self._builtin_loaded:
                return
            self._builtin_loaded = True
            outer = _loading[:]
            _loading.clear()  # what a built-in module registers is stratagem's own
            try:
                for module in self._builtin:
                    importlib.import_module(module)
            finally:
                _loading[:] = outer

    def add(self, name: str, value: T) -> str:
        """Register `value` under `name`, or `<namespace>:name` while a plugin loads; returns
        the full name. A built-in name is registered once; a plugin's name that a built-in has
        is refused (built-ins win) and noted for `stratagem plugins`."""
        plugin = loading()
        full = name
        if plugin is not None and not name.startswith(f"{plugin.namespace}{SEPARATOR}"):
            full = f"{plugin.namespace}{SEPARATOR}{name}"
        if not full or full != full.strip():
            raise StratagemError(f"{self.kind} name {full!r}: must be non-empty, unpadded text")
        with _lock:
            if full in self._items:
                if plugin is None and self._owners.get(full) is None:
                    raise StratagemError(f"{self.kind} '{full}' is registered twice")
                self.clashes.append(f"{self.kind} '{full}' is already registered")
                if plugin is not None:
                    plugin.registered.setdefault(self.kind, [])
                return full
            self._items[full] = value
            self._owners[full] = plugin
            if plugin is not None:
                plugin.registered.setdefault(self.kind, []).append(full)
        return full

    def replace(self, name: str, value: T) -> None:
        """Change what a registered name holds (its entry, renamed to its full name)."""
        with _lock:
            if name not in self._items:
                raise KeyError(name)
            self._items[name] = value

    def remove(self, name: str) -> None:
        """Forget a name (tests that register a game for one test)."""
        with _lock:
            self._items.pop(name, None)
            self._owners.pop(name, None)

    def owner(self, name: str) -> Plugin | None:
        """The plugin that registered `name`; None for a built-in or an in-process name."""
        self.get(name)
        return self._owners.get(name)

    def _resolve(self, name: str) -> T | None:
        self._ensure_builtin()
        found = self._items.get(name)
        if found is not None:
            return found
        namespace, _ = split(name) if isinstance(name, str) else (None, name)
        if namespace is not None:
            plugin = find(namespace)
            if plugin is not None and load(plugin):
                return self._items.get(name)
        return None

    def __getitem__(self, name: str) -> T:
        found = self._resolve(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._resolve(name) is not None

    def __iter__(self) -> Iterator[str]:
        self._ensure_builtin()
        return iter(list(self._items))

    def __len__(self) -> int:
        self._ensure_builtin()
        return len(self._items)

    def __setitem__(self, name: str, value: T) -> None:
        """`GAMES["x"] = entry` as before the registry: the same as `add`."""
        self.add(name, value)

    def snapshot(self) -> tuple[dict[str, T], dict[str, Plugin | None]]:
        """What is registered now, for `restore` (tests that register names for one test)."""
        self._ensure_builtin()
        with _lock:
            return dict(self._items), dict(self._owners)

    def restore(self, saved: tuple[dict[str, T], dict[str, Plugin | None]]) -> None:
        with _lock:
            self._items, self._owners = dict(saved[0]), dict(saved[1])

    def builtin_names(self) -> list[str]:
        self._ensure_builtin()
        return [n for n, owner in self._owners.items() if owner is None]


@contextmanager
def isolated() -> Iterator[None]:
    """Forget every plugin found (tests that install and remove plugins in one process)."""
    global _discovered
    with _lock:
        saved, was = dict(_plugins), _discovered
        _plugins.clear()
        _discovered = False
    try:
        yield
    finally:
        with _lock:
            _plugins.clear()
            _plugins.update(saved)
            _discovered = was


def rediscover() -> None:
    """Find the entry points again (after a distribution was installed or removed)."""
    global _discovered
    with _lock:
        _plugins.clear()
        _discovered = False
    importlib.invalidate_caches()
