"""stratagem: measure how LLM-based agents reason and behave in strategic games."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from stratagem.api import env, open

__all__ = ["__version__", "env", "open"]

_API = frozenset({"env", "open"})
"""Names of `stratagem.api` served from here, imported on first use: `import stratagem` (every
command does) stays light, with no pandas and no PettingZoo."""


def __getattr__(name: str) -> Any:
    if name in _API:
        from stratagem import api

        return getattr(api, name)
    raise AttributeError(f"module 'stratagem' has no attribute {name!r}")
