"""An episode's stage game, resolved once for every reader of the store.

An episode stores its labels and payoff tensor when it was played by stratagem, but an imported one
may name its game only (`pd/sh`, `rps/ba3` in seed-003's logs, docs/episode-format.md), leaving
both NULL. Every reader (status cells, the report, the studies' metrics) asks here, so they all see
the same game, and a game that cannot be resolved comes with its precise reason.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments.store import EpisodeRecord
from stratagem.games.catalog import catalog_name, get_stage
from stratagem.games.matrix.normal_form import NormalFormGame

__all__ = ["catalog_name", "is_dilemma", "is_two_by_two", "resolve_game", "try_resolve"]


def resolve_game(record: EpisodeRecord) -> NormalFormGame:
    """The episode's stage game: its stored labels and payoffs, or else its catalog game's.

    Raises StratagemError saying exactly why not (no matrix game of that name, payoffs of the
    wrong shape, ...), so a reader that drops the episode can say why.
    """
    labels = None if record.labels is None else json.dumps(record.labels)
    payoffs = None if record.game_payoffs is None else json.dumps(record.game_payoffs)
    try:
        return _resolve(record.game, labels, payoffs)
    except StratagemError as exc:
        raise StratagemError(f"episode '{record.id}': {exc}") from None


def try_resolve(record: EpisodeRecord) -> NormalFormGame | str:
    """The stage game, or the reason it cannot be resolved."""
    try:
        return resolve_game(record)
    except StratagemError as exc:
        return str(exc)


@functools.lru_cache(maxsize=256)
def _resolve(game: str, labels_json: str | None, payoffs_json: str | None) -> NormalFormGame:
    """Cached on the stored JSON: thousands of episodes share a handful of stage games."""
    labels: Any = None if labels_json is None else json.loads(labels_json)
    payoffs: Any = None if payoffs_json is None else json.loads(payoffs_json)
    if labels is None or payoffs is None:
        name = catalog_name(game)
        try:
            stage = get_stage(name)
        except StratagemError as exc:
            what = " or ".join(
                w for w, v in (("labels", labels), ("payoffs", payoffs)) if v is None
            )
            raise StratagemError(
                f"game '{game}' stores no {what} and is not a matrix game of the catalog ({exc})"
            ) from None
        labels = stage.labels if labels is None else labels
        payoffs = stage.payoffs if payoffs is None else payoffs
    return NormalFormGame(game, labels, payoffs)


def is_two_by_two(game: NormalFormGame) -> bool:
    """Two players with two actions each: the shape of the thesis' behaviour metrics."""
    return game.n_players == 2 and all(len(ls) == 2 for ls in game.labels)


def is_dilemma(game: NormalFormGame) -> bool:
    """Prisoner's Dilemma payoffs for the row player (T > R > P > S, action 0 = cooperate),
    recognised by payoffs rather than by name (seed-001 §10.2 fits SFEM on these)."""
    if not is_two_by_two(game):
        return False
    t = game.table
    r, s = float(t[0][0][0]), float(t[0][1][0])
    temptation, p = float(t[1][0][0]), float(t[1][1][0])
    return temptation > r > p > s
