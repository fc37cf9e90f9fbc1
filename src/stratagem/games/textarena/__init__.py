"""TextArena's text games as stratagem games: `textarena:<env id>` (see `game`)."""

from stratagem.games.textarena.curated import CURATED
from stratagem.games.textarena.game import (
    DEFAULT_MAX_STEPS,
    TextArenaGame,
    TextArenaMove,
    TextArenaObservation,
    TextArenaState,
)
from stratagem.games.textarena.library import PREFIX

__all__ = [
    "CURATED",
    "DEFAULT_MAX_STEPS",
    "PREFIX",
    "TextArenaGame",
    "TextArenaMove",
    "TextArenaObservation",
    "TextArenaState",
]
