"""A cell-level diff of two experiments (issue 25 item 6): for each cell both hold, each general
metric's difference B - A with its t interval and p-value (`analysis.comparisons.compare_paired`),
the p-values Holm-adjusted across every difference the diff shows (one table, one family:
`analysis.multiple`; the sentence under the table is `correction`).

Cells are `analysis.cells.cell_key`'s (model x agent x game x opponent or line-up x rounds), as
the cells table groups them. **What is paired**: within a cell, the episodes at the same spec
position, the same seed and repetition. When A and B are one experiment in two results
directories (before and after a prompt change), those are the episodes with the same id (an id
is made from the spec); otherwise, the same repetition of the same seed. Several episodes at one
position (specs that differ in what the cell key leaves out) pair in store order. An episode
without a partner is left out of every difference and counted (`unpaired_a`, `unpaired_b`); a
cell held by one side only is listed (`only_a`, `only_b`) with its episode count.

The metrics are the cells table's, per episode: each seat's total payoff, seat 0's cooperation
(share of its valid moves that were cooperative; a pair where either side has none, or a game
that is not a matrix game, is left out of that metric only, so its `n` is smaller), seat 0's
invalid rate, and the episode's spend in dollars (every seat's calls). A difference is the mean
of the per-pair differences, so each episode counts once whatever its number of moves (the cells
table pools the moves of a cell instead).

**Beyond the noise** (issue 36 item 7). A difference is beyond the noise when it is larger in
size than the noise floor of its metric (`analysis.noise_floor`: the difference two identical
cells stay within 95% of the time), where either experiment played replicate cells for that
metric (seat 0's score, cooperation and invalid rate; the larger floor of the two sides); for
any other metric, or without replicate cells, when its paired interval excludes 0. Each row
says which rule decided (`noise_by`).

**Clusters.** The repetitions of one seed share its chance moves: when a cell's pairs span
several seeds and a seed holds several pairs, the pairs are clustered by seed (the cluster-robust
t); else, when one position holds several pairs, by position; else each pair is its own cluster,
the paired t (`analysis.pair_clusters`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stratagem.analysis.cells import CellKey, order_key
from stratagem.analysis.comparisons import Comparison, compare_paired
from stratagem.analysis.multiple import adjust_comparisons
from stratagem.analysis.noise_floor import NoiseFloor, noise_floor
from stratagem.analysis.pair_clusters import shared_clusters
from stratagem.analysis.tallies import EpisodeTally
from stratagem.web.data.listing import cell_text

LEVEL = 0.95
"""The intervals' level."""

PAIRED_BY = "seed and repetition"

Position = tuple[str, str]
"""(seed, repetition) as text: what makes two episodes of one cell the same episode."""

PairKey = tuple[str, str, int]
"""A pair: its position, and its rank among the pairs at that position (store order)."""

Values = dict[str, float | None]

FLOOR_METRICS = {"score seat 0": "score", "cooperation": "cooperation", "invalid rate": "invalid"}
"""The diff's metrics a noise floor exists for: `analysis.noise_floor`'s name of each."""


@dataclass
class CellEpisodes:
    """A cell's label and each of its finished episodes' position and metric values."""

    label: dict[str, Any]
    episodes: list[tuple[Position, dict[str, float | None]]] = field(default_factory=list)


def episode_metrics(
    episodes: Iterable[EpisodeTally],
    costs: Mapping[str, Mapping[int, float]],
    cooperation_in: Container[str] | None = None,
) -> dict[CellKey, CellEpisodes]:
    """Each cell's episodes with their metrics; `costs` is `ResultStore.seat_costs`'s answer.
    `cooperation_in`: the games where cooperation means something (`applies.game_facts`;
    None: every game); elsewhere (Rock-Paper-Scissors) it is no value, as in the cells table."""
    out: dict[CellKey, CellEpisodes] = {}
    for e in episodes:
        key = e.key
        if key not in out:
            model, agent, game, opponent, rounds = key
            out[key] = CellEpisodes({"cell": cell_text(key),
                                     "model": model, "agent": agent, "game": game,
                                     "opponent": opponent, "lineup": list(e.lineup),
                                     "rounds": rounds})  # fmt: skip
        cooperative, valid, invalid = e.cooperative, e.valid, e.invalid
        values: dict[str, float | None] = {
            f"score seat {k}": total for k, total in enumerate(e.totals)
        }
        # As `cells_of` divides a cell's tallies, here one episode's.
        applies = cooperation_in is None or key[2] in cooperation_in
        values["cooperation"] = (
            cooperative / valid if applies and valid and cooperative >= 0 else None
        )
        values["invalid rate"] = invalid / (valid + invalid) if valid + invalid else 0.0
        values["cost usd"] = float(sum(costs.get(e.id, {}).values()))
        position = (str(e.seed), str(e.repetition))
        out[key].episodes.append((position, values))
    return out


def _pairs(a: CellEpisodes, b: CellEpisodes) -> dict[PairKey, tuple[Values, Values]]:
    by_position: dict[Position, list[Values]] = defaultdict(list)
    for position, values in b.episodes:
        by_position[position].append(values)
    out: dict[PairKey, tuple[Values, Values]] = {}
    taken: dict[Position, int] = defaultdict(int)
    for position, values in a.episodes:
        partners = by_position.get(position)
        if partners:
            out[(*position, taken[position])] = (values, partners.pop(0))
            taken[position] += 1
    return out


def _compare(a: dict[PairKey, float], b: dict[PairKey, float]) -> Comparison:
    """B minus A over these pairs, clustered by seed, else by position, where that clusters
    anything (module docstring)."""
    keys = list(a)
    levels: tuple[tuple[str, dict[PairKey, Hashable]], ...] = (
        ("seed", {k: k[0] for k in keys}),
        ("seed and repetition", {k: k[:2] for k in keys}),
    )
    for cluster_by, groups in levels:
        clusters = shared_clusters(keys, groups)
        if clusters is not None:
            return compare_paired(a, b, paired_by=PAIRED_BY, clusters=clusters,
                                  cluster_by=cluster_by, level=LEVEL)  # fmt: skip
    return compare_paired(a, b, paired_by=PAIRED_BY, level=LEVEL)


def _metric_names(a: CellEpisodes, b: CellEpisodes) -> list[str]:
    names: dict[str, None] = {}
    for _, values in [*a.episodes, *b.episodes]:
        names.update(dict.fromkeys(values))
    return list(names)


def cell_comparisons(
    a: CellEpisodes, b: CellEpisodes
) -> tuple[dict[str, Any], dict[str, Comparison]]:
    """One shared cell: its label with its pairs and what was left unpaired, and each metric's
    paired difference (not yet adjusted)."""
    pairs = _pairs(a, b)
    out: dict[str, Comparison] = {}
    for name in _metric_names(a, b):
        xs: dict[PairKey, float] = {}
        ys: dict[PairKey, float] = {}
        for key, (x, y) in pairs.items():
            vx, vy = x.get(name), y.get(name)
            if vx is not None and vy is not None:
                xs[key], ys[key] = float(vx), float(vy)
        if xs:
            out[name] = _compare(xs, ys)
    cell = {
        **a.label,
        "pairs": len(pairs),
        "unpaired_a": len(a.episodes) - len(pairs),
        "unpaired_b": len(b.episodes) - len(pairs),
    }
    return cell, out


def noise_floors(*sides: Iterable[EpisodeTally]) -> dict[str, NoiseFloor]:
    """Each floored metric's noise floor by the diff's name: the larger of the sides' floors."""
    out: dict[str, NoiseFloor] = {}
    for tallies in map(list, sides):
        for name, metric in FLOOR_METRICS.items():
            floor = noise_floor(tallies, metric)
            if floor is not None and (name not in out or floor.floor > out[name].floor):
                out[name] = floor
    return out


def _metric_row(name: str, c: Comparison, floor: NoiseFloor | None) -> dict[str, Any]:
    beyond = floor.beaten_by(c.estimate) if floor is not None else c.significant
    return {"metric": name, "a": c.mean_a, "b": c.mean_b, "diff": c.estimate,
            "ci_low": c.ci_low, "ci_high": c.ci_high, "p": c.p, "p_adjusted": c.p_adjusted,
            "n": c.n, "clusters": c.clusters, "cluster_by": c.cluster_by,
            "method": c.method, "floor": None if floor is None else floor.floor,
            "noise_by": "interval" if floor is None else "floor",
            "beyond_noise": bool(beyond)}  # fmt: skip


def diff(
    a: Mapping[CellKey, CellEpisodes],
    b: Mapping[CellKey, CellEpisodes],
    floors: Mapping[str, NoiseFloor] | None = None,
) -> dict[str, Any]:
    """The diff of B against A: the shared cells' differences, and the cells of one side only;
    `floors` the noise floors by metric (`noise_floors`), beside which a difference is beyond
    the noise (module docstring)."""
    floors = floors or {}

    def alone(side: Mapping[CellKey, CellEpisodes], other: Mapping[CellKey, CellEpisodes]) -> Any:
        keys = sorted((k for k in side if k not in other), key=order_key)
        return [{**side[k].label, "episodes": len(side[k].episodes)} for k in keys]

    shared = sorted((k for k in a if k in b), key=order_key)
    compared = [cell_comparisons(a[k], b[k]) for k in shared]
    adjusted, correction = adjust_comparisons([c for _, cs in compared for c in cs.values()])
    found = iter(adjusted)
    cells = [
        {**cell, "metrics": [_metric_row(n, next(found), floors.get(n)) for n in comparisons]}
        for cell, comparisons in compared
    ]
    return {
        "level": LEVEL,
        "paired_by": PAIRED_BY,
        "correction": correction,
        "cells": cells,
        "noise": [
            {"metric": n, "floor": f.floor, "cells": f.cells, "text": f.text()}
            for n, f in floors.items()
        ],
        "only_a": alone(a, b),
        "only_b": alone(b, a),
    }
