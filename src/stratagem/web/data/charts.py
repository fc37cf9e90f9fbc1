"""The numbers behind the viewer's charts of an experiment (issue 36 item 6), so the page only
draws them and its tables show exactly what was drawn.

- **cells**: each cell's mean per episode of seat 0's score, cooperation and invalid rate (the
  diff's per-episode metrics, `diff.episode_metrics`), with its 95% t interval;
- **rounds**: each cell's metric round by round (seat 0's payoff, whether its move was valid,
  whether a valid move was the cooperative one), the mean over the cell's episodes with its
  95% t interval: the band around the line;
- **variants**: each counterfactual variant against its default game in cells alike in
  everything else (the design's default comparison, `experiments.comparisons`), the paired
  difference variant - default per metric as the diff computes it (`diff.cell_comparisons`:
  paired by seed and repetition, clustered by seed where a seed holds several pairs), each
  metric's p-values Holm-adjusted across its pairs (`analysis.multiple`);
- **ratings** and **belief**: MAgIC's Bradley-Terry ratings and ToM's belief accuracy, as
  their reports compute them (`study_charts`); None where the experiment has no such games.

A mean's interval is `analysis.comparisons.cluster_t` over the episodes' values (the t interval
of a mean, mean ± t(G-1) · SE, with the CR1 standard error over seeds when several episodes of
the cell share a seed, else each episode its own cluster); None for fewer than two clusters.
"""

from __future__ import annotations

import math
import struct
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from stratagem.analysis.cells import CellKey, cell_key, order_key
from stratagem.analysis.comparisons import Comparison
from stratagem.analysis.comparisons import mean_interval as interval_of
from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.analysis.invalid import DECISION_EVENT, INVALID_EVENT
from stratagem.analysis.multiple import adjust_comparisons
from stratagem.errors import StratagemError
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_entry
from stratagem.web.data.diff import LEVEL, CellEpisodes, cell_comparisons
from stratagem.web.data.study_charts import study_charts

CELL_METRICS = ("score seat 0", "cooperation", "invalid rate")
"""The per-episode metrics drawn by cell and compared for variants (`diff.episode_metrics`)."""
ROUND_METRICS = ("score", "cooperation", "valid")
"""Seat 0's per-round values drawn over rounds."""


def experiment_charts(
    store: ResultStore, experiment_id: str, metrics: Mapping[CellKey, CellEpisodes]
) -> dict[str, Any]:
    """The charts' data; `metrics` is the experiment's cells' episode metrics (`Sources`)."""
    experiment = store.experiment(experiment_id)
    if experiment is None:
        raise StratagemError(f"unknown experiment '{experiment_id}'")
    keys = sorted(metrics, key=order_key)
    rounds = _rounds(
        load_episodes(store, experiment_id, event_kinds=(INVALID_EVENT, DECISION_EVENT))
    )
    declared = _declared_variants(experiment.config or {})
    return {
        "level": LEVEL,
        "cell_metrics": list(CELL_METRICS),
        "round_metrics": list(ROUND_METRICS),
        "cells": [_cell(k, metrics[k], rounds.get(k, {})) for k in keys],
        "variants": _variants(metrics, keys, declared),
        **study_charts(store, experiment, (k[2] for k in keys)),
    }


def mean_interval(values: Sequence[float], seeds: Sequence[Hashable]) -> dict[str, Any]:
    """The mean of `values` with its t interval, clustered by seed where that clusters
    anything (module docstring); `seeds[i]` is value i's seed."""
    if not values:
        return {"value": None, "low": None, "high": None, "n": 0}
    if len(seeds) != len(values):
        raise ValueError(f"{len(values)} values but {len(seeds)} seeds")
    # As `pair_clusters.shared_clusters`: clustered when two seeds or more, one holding several.
    sizes = Counter(seeds)
    labels = list(seeds) if len(sizes) >= 2 and max(sizes.values()) >= 2 else None
    # Every cell's rounds make thousands of means, of few distinct value lists (a few payoffs,
    # 0/1 validity): each list (its exact bits, its seeds as `cluster_t` codes them) is worked
    # out once, with `cluster_t`'s numbers less its p-value.
    key = (
        struct.pack(f"{len(values)}d", *values),
        None if labels is None else tuple(map(repr, labels)),
    )
    found = _SEEN.get(key)
    if found is None:
        if len(_SEEN) >= _KEPT:
            _SEEN.clear()
        value, low, high, n = interval_of(values, labels, LEVEL)
        found = {"value": _number(value), "low": _number(low), "high": _number(high), "n": n}
        _SEEN[key] = found
    return dict(found)


_SEEN: dict[tuple[bytes, tuple[str, ...] | None], dict[str, Any]] = {}
"""`mean_interval`'s answers by their inputs (at most `_KEPT`)."""
_KEPT = 1 << 16


def _number(value: float | None) -> float | None:
    """JSON has no NaN or infinity: such a value is no value."""
    return value if value is not None and math.isfinite(value) else None


def _cell(
    key: CellKey, cell: CellEpisodes, rounds: Mapping[str, Mapping[int, list[tuple[str, float]]]]
) -> dict[str, Any]:
    means = {}
    for name in CELL_METRICS:
        found = [(p[0], x) for p, v in cell.episodes if (x := v.get(name)) is not None]
        means[name] = mean_interval([float(x) for _, x in found], [s for s, _ in found])
    over = {
        name: [{"round": r, **mean_interval([v for _, v in got], [s for s, _ in got])}
               for r, got in sorted(rounds.get(name, {}).items())]
        for name in ROUND_METRICS
        if name != "cooperation" or means[name]["n"]  # none where it does not apply (RPS)
    }  # fmt: skip
    return {**cell.label, "label": _label(key), "episodes": len(cell.episodes),
            "metrics": means, "over_rounds": {k: v for k, v in over.items() if v}}  # fmt: skip


def _label(key: CellKey) -> str:
    model, agent, game, opponent, rounds = key
    return " · ".join(str(p) for p in (model, agent, game, f"vs {opponent}", f"{rounds} rounds"))


_Rounds = dict[CellKey, dict[str, dict[int, list[tuple[str, float]]]]]
"""Cell -> metric -> round -> (seed, value) of each episode that has the round."""


def _rounds(episodes: Sequence[EpisodeData]) -> _Rounds:
    """Seat 0's values per round, by cell (as `analysis.cells.move_tally` counts moves: a move
    in an invalid round is invalid; cooperation is the first action, of valid moves only)."""
    out: _Rounds = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for e in episodes:
        if not e.seats or not e.rounds:
            continue
        into = out[cell_key(e, 0)]
        seed = str(e.record.seed)  # as `diff.episode_metrics` names positions
        stage = e.stage
        first = stage.labels[0][0] if stage is not None else None
        failed = e.invalid_rounds(0)
        for r in e.rounds:
            move = r.actions[0] if r.actions else None
            valid = move is not None and r.round not in failed
            into["valid"][r.round].append((seed, 1.0 if valid else 0.0))
            if r.payoffs:
                into["score"][r.round].append((seed, float(r.payoffs[0])))
            if valid and first is not None:
                into["cooperation"][r.round].append((seed, 1.0 if move == first else 0.0))
    return out


def _declared_variants(config: Mapping[str, Any]) -> dict[str, str]:
    """The file's `variants:` as name -> base game (a stored config is plain JSON)."""
    found = config.get("variants")
    entries = found if isinstance(found, list) else []
    return {
        str(v["name"]): str(v["base"])
        for v in entries
        if isinstance(v, Mapping) and v.get("name") and v.get("base")
    }


def _default_of(game: str, declared: Mapping[str, str]) -> str:
    """A variant's default game: the catalog's `variant_of` of it or of its declared base (as
    `experiments.comparisons.default_comparisons` finds it); the game itself otherwise."""
    name = declared.get(game, game)
    try:
        return get_entry(name).variant_of or name
    except StratagemError:
        return name


def _variants(
    metrics: Mapping[CellKey, CellEpisodes], keys: Sequence[CellKey], declared: Mapping[str, str]
) -> dict[str, Any]:
    rows: list[tuple[dict[str, Any], dict[str, Comparison]]] = []
    for key in keys:
        model, agent, game, opponent, rounds = key
        base = (model, agent, _default_of(game, declared), opponent, rounds)
        if base != key and base in metrics:
            cell, compared = cell_comparisons(metrics[base], metrics[key])
            kept = {m: c for m, c in compared.items() if m in CELL_METRICS}
            rows.append(({**cell, "base": base[2], "variant": game}, kept))
    corrections: dict[str, str] = {}
    for name in CELL_METRICS:
        where = [c for _, c in rows if name in c]
        adjusted, corrections[name] = adjust_comparisons([c[name] for c in where])
        for c, a in zip(where, adjusted, strict=True):
            c[name] = a
    pairs = [{**cell, "metrics": {m: _difference(c) for m, c in compared.items()}}
             for cell, compared in rows]  # fmt: skip
    return {"pairs": pairs, "correction": corrections}


def _difference(c: Comparison) -> dict[str, Any]:
    return {"value": _number(c.estimate), "low": _number(c.ci_low), "high": _number(c.ci_high),
            "p": _number(c.p), "p_adjusted": _number(c.p_adjusted), "n": c.n,
            "method": c.method}  # fmt: skip
