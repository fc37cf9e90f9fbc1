"""How many games each challenger's competitions were planned to have: what the authors' code
divides the social role rates by (seed-004 §4, §10.2: n = 20 when 21 or more games were planned
in the competition, else the number planned; `MetricOptions.game_count`).

"Planned" reads as the episodes of the competition in the experiment's grid, finished or not:
the store holds every episode of the grid with its status, so a game that crashed, was
interrupted or has not run yet still counts, as a setting the code ran and lost does. An
imported experiment holds only what was imported, which is then what was planned. A played
game's competition is its record's; an unplayed social game's is read from the seats the
challenger holds (§4: the single spy seat, or both majority seats).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from stratagem.analysis.episodes import EpisodeData
from stratagem.experiments.store import ResultStore
from stratagem.studies.magic.entities import competitions, seat_entities
from stratagem.studies.magic.records import (
    GAMES,
    MAJORITY_ROLES,
    SPY_ROLES,
    MagicGame,
)

Planned = Mapping[tuple[str, str], int]
"""(challenger entity, competition) -> games planned."""

_THEORY = {"cost-sharing": "cost-sharing", "npd3": "pd", "public-good": "pg"}


def _competition(game: str, seats: int) -> str:
    if game in SPY_ROLES:
        return SPY_ROLES[game] if seats == 1 else MAJORITY_ROLES[game]
    return _THEORY[game]


def planned_games(
    store: ResultStore,
    config: Mapping[str, Any],
    episodes: Sequence[EpisodeData],
    games: Sequence[MagicGame],
) -> dict[tuple[str, str], int]:
    """The planned count of every (challenger, competition) of the experiments `episodes`
    belong to (module docstring); `games` are the records of the played ones."""
    played = {g.episode_id: g for g in games}
    experiments = dict.fromkeys(e.record.experiment_id for e in episodes)
    every = [
        EpisodeData(r, (), ())
        for x in experiments
        for r in store.episodes(x)
        if r.game.partition("/")[0] in GAMES
    ]
    entities = {e.record.id: seat_entities(e, config) for e in every}
    names = {e.record.id: e.record.game.partition("/")[0] for e in every}
    counts: Counter[tuple[str, str]] = Counter()
    for eid, comp in competitions(every, entities, config).items():
        record = played.get(eid)
        if record is not None:
            counts[(record.challenger, record.competition)] += 1
            continue
        counts[(comp.challenger, _competition(names[eid], len(comp.seats)))] += 1
    return dict(counts)
