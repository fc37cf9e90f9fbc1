"""The numbers behind the viewer's study charts (issue 36 item 6), computed by the studies' own
functions on the data their report sections read, so a chart shows the report's numbers:

- **ratings**: MAgIC's Bradley-Terry rating of every entity with its bootstrap interval, best
  first, as its leaderboard (`studies.magic.rating_section.bradley_terry_board`, with the
  section's bootstrap count, level and seed); each row carries its leaderboard group key, so a
  mark opens the same episodes as the Analysis part's row;
- **belief**: the ToM study's belief accuracy, KL(V0 opponent ‖ V1 focal) per turn for each
  (model, group), as its Figure 4 (`studies.tom.belief_accuracy.kl_points`, `kl_by_turn`,
  `kl_overall`), with the turns and games behind each mean.

Both read the experiment's own episodes (replicate copies out, `noise_floor.without_copies`) with
its stored analysis options, as `web.data.analysis` does; an experiment with neither study's
games is not read at all (a report's data holds every event: seconds at scale).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.needed_plugins import load_plugins
from stratagem.analysis.noise_floor import without_copies
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_options import merge
from stratagem.analysis.report_registry import resolve_options
from stratagem.experiments.records import ExperimentRecord
from stratagem.experiments.store import ResultStore
from stratagem.studies.registry import STUDIES

MAGIC, TOM = "magic", "tom"
"""The studies drawn here, by their registered names."""


def study_charts(
    store: ResultStore, experiment: ExperimentRecord, games: Iterable[str]
) -> dict[str, Any]:
    """The ratings and belief-accuracy charts' data (module docstring); `games` are the names of
    the experiment's cells' games, which say whether either study can apply."""
    bases = {g.partition("/")[0] for g in games}
    from stratagem.studies.magic.records import GAMES  # deferred: the studies load on demand
    from stratagem.studies.tom.extract import GAME

    if not bases & {*GAMES, GAME}:
        return {"ratings": None, "belief": None}
    settings = merge((experiment.config or {}).get("analysis") or {}, {})
    load_plugins(settings, store.plugin_records(experiment.id))
    data = without_copies(ReportData.load(store, experiment, resolve_options(settings)))
    mine = {name: [e for e in data.episodes if STUDIES[name].applies(e)] for name in (MAGIC, TOM)
            if name in STUDIES}  # fmt: skip
    return {
        "ratings": _ratings(data, mine[MAGIC]) if mine.get(MAGIC) else None,
        "belief": _belief(data, mine[TOM]) if mine.get(TOM) else None,
    }


def _number(value: float | None) -> float | None:
    """JSON has no NaN or infinity: such a value is no value."""
    return value if value is not None and math.isfinite(value) else None


def _ratings(data: ReportData, episodes: Sequence[EpisodeData]) -> dict[str, Any] | None:
    """The Bradley-Terry leaderboard's ratings, as `studies.magic.boards` builds it; None
    when no game has seats of two entities."""
    from stratagem.studies.magic.extract import magic_data, rating_results
    from stratagem.studies.magic.rating_section import bradley_terry_board
    from stratagem.studies.magic.section import LEVEL, RATING_BOOT, SEED

    results, costs = rating_results(magic_data(data.store, data.config, episodes))
    if not results:
        return None
    table, board = bradley_terry_board(results, costs, n_boot=RATING_BOOT, level=LEVEL, seed=SEED)
    rows = [
        {"entity": r.entity, "group": board.group(row), "value": _number(r.rating),
         "low": _number(r.ci_low), "high": _number(r.ci_high), "games": r.games,
         "comparisons": r.comparisons, "wins": r.wins, "ties": r.ties, "losses": r.losses,
         "episodes": len(row.episodes)}
        for r, row in zip(table.ratings, board.rows, strict=True)
    ]  # fmt: skip
    return {"title": board.title, "caption": board.caption, "level": LEVEL,
            "n_boot": RATING_BOOT, "base": table.base, "rows": rows}  # fmt: skip


def _belief(data: ReportData, episodes: Sequence[EpisodeData]) -> dict[str, Any] | None:
    """Figure 4's lines and the belief-accuracy table beside it, as the ToM section computes
    them (`studies.tom.section.belief_blocks`); None when no turn has both reports."""
    from stratagem.studies.tom.belief_accuracy import kl_by_turn, kl_overall, kl_points
    from stratagem.studies.tom.extract import tom_data
    from stratagem.studies.tom.options import TomOptions

    options = data.study_options(TOM, TomOptions)
    games = tom_data(episodes, data.store.beliefs, options).games
    points = kl_points(games, options)
    if not points:
        return None
    by_turn, overall = kl_by_turn(points), kl_overall(points)
    series = []
    for key in sorted(overall):
        model, group = key
        series.append({
            "model": model, "group": group, "mean": _number(overall[key][0]),
            "turns": overall[key][1],
            "games": len({p.episode_id for p in points if (p.model, p.group) == key}),
            "points": [{"turn": t, "value": _number(v), "n": n}
                       for t, (v, n) in sorted(by_turn[key].items())],
        })  # fmt: skip
    return {"epsilon": options.epsilon, "series": series}
