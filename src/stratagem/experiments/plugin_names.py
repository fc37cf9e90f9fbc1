"""Naming a plugin from an experiment file or the command line (`plugins.use`), and the form in
which it is stored: a file as its absolute path, so that the stored experiment names the same
plugin again from any directory (`store_plugins`), a module as its name.

Naming is refused in one line where the plugin could never be used: a namespace stratagem keeps
for itself, or one another plugin already has (the names `<namespace>:<name>` would then mean
the other plugin's)."""

from __future__ import annotations

import os
from pathlib import Path

from stratagem import plugins
from stratagem.errors import StratagemError


def is_file_spec(spec: str) -> bool:
    """A `.py` file or a path, as `plugins.use` tells them from module names."""
    text = spec.strip()
    return text.endswith(".py") or "/" in text or os.sep in text


def stored_form(spec: str, base: Path | None = None) -> str:
    """What names the same plugin from anywhere: a file's absolute path (relative to `base`, else
    the current directory), a module's name."""
    text = spec.strip()
    if not is_file_spec(text):
        return text
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return str(path.resolve())


def name_plugin(spec: str, origin: str, base: Path | None = None) -> str:
    """Name `spec` as a plugin (imported when one of its names is first resolved) and return its
    stored form. With plugins off (`STRATAGEM_NO_PLUGINS=1`) nothing is named."""
    form = stored_form(spec, base)
    if not plugins.enabled():
        return form
    plugin = plugins.use(spec, origin=origin, base=base)
    if plugin.namespace not in plugins.RESERVED and not plugin.same_code(
        plugins.Plugin(plugin.namespace, form, origin)
    ):
        raise StratagemError(
            f"plugin '{spec}' ({origin}): namespace '{plugin.namespace}' is taken by "
            f"{plugin.target} ({plugin.origin}); rename one of them"
        )
    if plugin.namespace in plugins.RESERVED:
        raise StratagemError(f"plugin '{spec}' ({origin}): {plugin.error}")
    return form
