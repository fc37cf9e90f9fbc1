"""stratagem: measure how LLM-based agents reason and behave in strategic games."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from stratagem.api import open

__all__ = ["__version__", "open"]

_API = frozenset({"open"})
"""Names of `stratagem.api` served from here, imported on first use: `import stratagem` (every
command does) stays light, with no pandas."""


def __getattr__(name: str) -> Any:
    if name in _API:
        from stratagem import api

        return getattr(api, name)
    raise AttributeError(f"module 'stratagem' has no attribute {name!r}")
