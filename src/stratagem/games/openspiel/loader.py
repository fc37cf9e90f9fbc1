"""OpenSpiel's Python module, imported only when an `openspiel:` game is named, so stratagem
works without the `openspiel` extra and says how to get it when one is; and its C++ messages kept
off the terminal."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

from stratagem.errors import StratagemError

PREFIX = "openspiel:"
"""How a game name says it is an OpenSpiel game string: `openspiel:kuhn_poker`."""

_QUIET = threading.Lock()


@functools.cache
def pyspiel() -> Any:
    try:
        import pyspiel as module
    except ImportError:
        raise StratagemError(
            "OpenSpiel games need the open_spiel package: pip install 'stratagem[openspiel]'"
        ) from None
    return module


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Run with file descriptor 2 on /dev/null: OpenSpiel's C++ prints each error it raises
    (an unknown game's 128-line list of games, a file's lines) to stderr before Python sees it;
    the error itself still arrives, and is said in one line."""
    with _QUIET:
        sys.stderr.flush()
        try:
            saved = os.dup(2)
        except OSError:  # no stderr at all: nothing to keep quiet
            yield
            return
        try:
            with open(os.devnull, "w", encoding="utf-8") as null:
                os.dup2(null.fileno(), 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
