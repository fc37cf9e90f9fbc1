"""`stratagem plugins`: every plugin found, where it comes from, what it registers, and why one
failed to load (a warning line, exit status 0: a broken plugin is the plugin's problem to show,
not a failure of the command)."""

from __future__ import annotations

from stratagem import plugins
from stratagem.cli.common import PluginOption, _say, app, out, use_plugins
from stratagem.experiments.store_plugins import failed_line

PLURALS = {"study": "studies", "strategy": "strategies"}
"""Registry kinds whose plural is not `<kind>s`."""

ORIGINS = {
    "command line": "on the command line",
    "experiment file": "in an experiment file",
    "environment": f"in {plugins.ENV_PLUGINS}",
}
"""How `source` says who named a plugin, by its `Plugin.origin`."""

HOW_TO_ADD = (
    "add one: an entry point in the `stratagem` group of a package's pyproject.toml "
    '([project.entry-points.stratagem] NAME = "MODULE"), --plugin MODULE_OR_FILE on a command, '
    "`plugins:` in an experiment file, or "
    f"{plugins.ENV_PLUGINS}=MODULE_OR_FILE[,MODULE_OR_FILE...] (docs/plugins.md)"
)


@app.command("plugins")
def plugins_(plugin: PluginOption = None) -> None:
    """List the plugins found (entry points of the `stratagem` group, --plugin, STRATAGEM_PLUGINS):
    where each comes from and the names it registers, each loaded to find them; a plugin that
    fails to load is a warning line.

    STRATAGEM_PLUGINS: modules or .py files to use as plugins in every command, separated by
    commas. STRATAGEM_NO_PLUGINS=1: no plugin at all (no entry point, --plugin, `plugins:` or
    STRATAGEM_PLUGINS).
    """
    if not plugins.enabled():
        _say(out, f"plugins are off ({plugins.ENV_NO_PLUGINS}=1): no entry point, --plugin, "
                  f"`plugins:` or {plugins.ENV_PLUGINS} is used")  # fmt: skip
        return
    use_plugins(plugin)
    found = plugins.load_all()
    if not found:
        _say(out, f"no plugins found; {HOW_TO_ADD}")
        return
    for each in found:
        _say(out, f"{each.namespace}: {source(each)}")
        if each.error is not None:
            _say(out, f"  warning: {failed_line(each)}")
            continue
        names = {kind: listed for kind, listed in each.registered.items() if listed}
        if not names:
            _say(out, "  registers no names")
        for kind, listed in names.items():
            _say(out, f"  {PLURALS.get(kind, kind + 's')}: {', '.join(listed)}")


def source(plugin: plugins.Plugin) -> str:
    """Where a plugin's code comes from and who named it."""
    if plugin.distribution is not None:
        where = (
            f"entry point of {plugin.distribution} {plugin.version or '(no version)'} "
            f"(module {plugin.target})"
        )
    elif plugin.is_file:
        digest = plugin.provenance().get("sha256") or "unreadable"
        where = f"file {plugin.target} (sha256 {digest})"
    else:
        where = f"module {plugin.target}"
    if plugin.origin == "entry point":
        return where
    return f"{where}; named {ORIGINS.get(plugin.origin, 'by ' + plugin.origin)}"
