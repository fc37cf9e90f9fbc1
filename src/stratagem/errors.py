"""The one exception type for errors a user can cause (bad config, unknown name, bad file).

The CLI prints its message on one line and exits with status 2, so messages must say what is wrong
and where, without needing a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class StratagemError(Exception):
    """An error caused by user input; its message is shown to the user as is."""


def unknown_name(kind: str, name: str, valid: Iterable[str]) -> StratagemError:
    """Build the error for an unknown registry name, suggesting the closest valid names."""
    choices = sorted(valid)
    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}?" if close else f"valid: {', '.join(choices)}"
    return StratagemError(f"unknown {kind} '{name}': {hint}")
