"""Game settings shipped as package data (`games/data/<name>.json`): the studies' published
settings and the ones regenerated for them by the scripts under `scripts/` (each file records its
source and the script that made it).

A settings file is a JSON object `{"source": "...", "settings": [{...}, ...]}`, optionally with
`"selected": [indices]`: the set an experiment plays when it names every setting (`<game>/*`),
the others being candidates (seed-004 §4's balance filter chooses among them). A game takes one
setting by its index.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from stratagem.errors import StratagemError


@cache
def _document(name: str) -> dict[str, Any]:
    try:
        text = resources.files("stratagem.games").joinpath(f"data/{name}.json").read_text("utf-8")
    except FileNotFoundError:
        raise StratagemError(f"no settings file for '{name}' in the package") from None
    document: dict[str, Any] = json.loads(text)
    return document


def _load(name: str) -> tuple[dict[str, Any], ...]:
    return tuple(_document(name)["settings"])


def selected(name: str) -> tuple[int, ...]:
    """The indices of the set an experiment plays (`<game>/*`): the file's `selected`, or every
    setting when it has none."""
    chosen = _document(name).get("selected")
    return tuple(range(len(_load(name)))) if chosen is None else tuple(chosen)


def settings(name: str) -> tuple[dict[str, Any], ...]:
    """Every setting of a settings file, in order."""
    return _load(name)


def setting(name: str, index: int) -> dict[str, Any]:
    """Setting `index` of a settings file, or a one-line error naming the valid range."""
    every = _load(name)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(every):
        raise StratagemError(
            f"{name}: setting must be an integer in 0..{len(every) - 1}, got {index!r}"
        )
    return dict(every[index])
