"""stratagem: measure how LLM-based agents reason and behave in strategic games.

The public API is `__all__` and what docs/api.md lists; every other module is internal.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from stratagem import plugins, register, testing
    from stratagem.api import env, open, parallel_env

__all__ = ["__version__", "env", "open", "parallel_env", "plugins", "register", "testing"]

_API = frozenset({"env", "open", "parallel_env"})
"""Names of `stratagem.api` served from here, imported on first use: `import stratagem` (every
command does) stays light, with no pandas and no PettingZoo."""

_MODULES = frozenset({"plugins", "register", "testing"})
"""The public submodules, imported on first use for the same reason (`register` brings in every
registry, the web layer's views included)."""


def __getattr__(name: str) -> Any:
    if name in _API:
        from stratagem import api

        return getattr(api, name)
    if name in _MODULES:
        return importlib.import_module(f"stratagem.{name}")
    raise AttributeError(f"module 'stratagem' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
