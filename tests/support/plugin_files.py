"""A plugin file named for one block of a test (as `--plugin FILE` names it), and every name it
registered forgotten afterwards, so the registries other tests see are the package's own."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stratagem import plugins
from stratagem.agents.registry import ARCHITECTURES
from stratagem.analysis import report_registry
from stratagem.games.registry import GAMES
from stratagem.llm import registry as models
from stratagem.strategies.registry import GAME_BOTS, STRATEGIES
from stratagem.studies.registry import EXPORTERS, IMPORTERS, STUDIES
from stratagem.web.views import VIEWS

REGISTRIES: dict[str, Any] = {
    "game": GAMES,
    "architecture": ARCHITECTURES,
    "strategy": STRATEGIES,
    "game bot": GAME_BOTS,
    "provider": models._FACTORIES,
    "study": STUDIES,
    "import format": IMPORTERS,
    "export format": EXPORTERS,
    "view": VIEWS,
}
"""Each kind a plugin registers (`Plugin.registered`) -> its registry."""


@contextmanager
def named_plugin(path: Path) -> Iterator[plugins.Plugin]:
    """`path` as the only plugin found (not loaded: it loads when one of its names is used)
    until the block ends; then it and every name it registered are forgotten."""
    with plugins.isolated():
        plugin = plugins.use(str(path), origin="command line")
        try:
            yield plugin
        finally:
            for kind, names in plugin.registered.items():
                for name in names:
                    REGISTRIES[kind].remove(name)  # a kind missing here fails the test: add it
                    if kind == "study":
                        report_registry._REGISTRY.pop(name, None)
            sys.modules.pop(f"stratagem_plugin_{plugin.namespace}", None)
