"""OpenSpiel's Python module, imported only when an `openspiel:` game is named, so stratagem
works without the `openspiel` extra and says how to get it when one is."""

from __future__ import annotations

import functools
from typing import Any

from stratagem.errors import StratagemError

PREFIX = "openspiel:"
"""How a game name says it is an OpenSpiel game string: `openspiel:kuhn_poker`."""


@functools.cache
def pyspiel() -> Any:
    try:
        import pyspiel as module
    except ImportError:
        raise StratagemError(
            "OpenSpiel games need the open_spiel package: pip install 'stratagem[openspiel]'"
        ) from None
    return module
