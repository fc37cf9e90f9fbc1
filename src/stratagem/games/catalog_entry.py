"""A catalog entry: a named game, where its numbers come from and how to build it (its own
module so that the catalog and the libraries' game strings both make entries)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from stratagem.games.base import Game


@dataclass(frozen=True)
class CatalogEntry:
    """A named game: where its numbers come from and how to build it."""

    name: str
    description: str
    source: str
    """The spec section its rules and numbers come from, e.g. "seed-001 §4.1"."""
    family: str
    factory: Callable[..., Game]
    """Builds the game; keyword options (public-good's multiplier, ...) are its parameters."""
    rounds: tuple[int, ...] = ()
    """Numbers of rounds the source study repeats the game for; () if not repeated."""
    variant_of: str | None = None
    """The default game this counterfactual transforms (seed-003 §1)."""
    counterfactual: str = ""
    """What the variant changes, by content: "default", "label-based", "payoff-based" or "joint"."""
    paper_caption: str = ""
    """How the study's result tables caption this game (seed-003 §0.1: PD captions are wrong)."""
    settings: str | None = None
    """The settings file (`games/data/<settings>.json`) its `setting` option indexes, if any:
    `<name>/<k>` names setting k, `<name>/*` the file's selected set (seed-004 §3's 103
    settings)."""

    def options(self) -> tuple[str, ...]:
        """Keyword options the factory accepts."""
        return tuple(inspect.signature(self.factory).parameters)
