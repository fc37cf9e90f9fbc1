"""A cell-level diff of two experiments (issue 25 item 6): for each cell both hold, each general
metric's difference B - A with a paired bootstrap interval (`analysis.paired.paired_difference`).

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
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stratagem.analysis.cells import CellKey, order_key
from stratagem.analysis.paired import paired_difference
from stratagem.analysis.tallies import EpisodeTally

N_BOOT = 2000
LEVEL = 0.95
SEED = 0
"""The bootstrap's replicates, interval level and seed: every diff of the same data is equal."""

Position = tuple[str, str]
"""(seed, repetition) as text: what makes two episodes of one cell the same episode."""


@dataclass
class CellEpisodes:
    """A cell's label and each of its finished episodes' position and metric values."""

    label: dict[str, Any]
    episodes: list[tuple[Position, dict[str, float | None]]] = field(default_factory=list)


def episode_metrics(
    episodes: Iterable[EpisodeTally], costs: Mapping[str, Mapping[int, float]]
) -> dict[CellKey, CellEpisodes]:
    """Each cell's episodes with their metrics; `costs` is `ResultStore.seat_costs`'s answer."""
    out: dict[CellKey, CellEpisodes] = {}
    for e in episodes:
        key = e.key
        if key not in out:
            model, agent, game, opponent, rounds = key
            out[key] = CellEpisodes({"model": model, "agent": agent, "game": game,
                                     "opponent": opponent, "lineup": list(e.lineup),
                                     "rounds": rounds})  # fmt: skip
        cooperative, valid, invalid = e.cooperative, e.valid, e.invalid
        values: dict[str, float | None] = {
            f"score seat {k}": total for k, total in enumerate(e.totals)
        }
        # As `cells_of` divides a cell's tallies, here one episode's.
        values["cooperation"] = cooperative / valid if valid and cooperative >= 0 else None
        values["invalid rate"] = invalid / (valid + invalid) if valid + invalid else 0.0
        values["cost usd"] = float(sum(costs.get(e.id, {}).values()))
        position = (str(e.seed), str(e.repetition))
        out[key].episodes.append((position, values))
    return out


def _pairs(
    a: CellEpisodes, b: CellEpisodes
) -> list[tuple[dict[str, float | None], dict[str, float | None]]]:
    by_position: dict[Position, list[dict[str, float | None]]] = defaultdict(list)
    for position, values in b.episodes:
        by_position[position].append(values)
    out = []
    for position, values in a.episodes:
        partners = by_position.get(position)
        if partners:
            out.append((values, partners.pop(0)))
    return out


def _metric_names(a: CellEpisodes, b: CellEpisodes) -> list[str]:
    names: dict[str, None] = {}
    for _, values in [*a.episodes, *b.episodes]:
        names.update(dict.fromkeys(values))
    return list(names)


def cell_diff(a: CellEpisodes, b: CellEpisodes) -> dict[str, Any]:
    """One shared cell: its pairs, what was left unpaired, and each metric's paired difference."""
    pairs = _pairs(a, b)
    metrics = []
    for name in _metric_names(a, b):
        both = [(x[name], y[name]) for x, y in pairs if x.get(name) is not None
                and y.get(name) is not None]  # fmt: skip
        if not both:
            continue
        d = paired_difference(
            [float(x) for x, _ in both if x is not None],
            [float(y) for _, y in both if y is not None],
            n_boot=N_BOOT,
            level=LEVEL,
            seed=SEED,
        )
        metrics.append({"metric": name, "a": d.mean_default, "b": d.mean_variant,
                        "diff": d.mean_diff, "ci_low": d.ci_low, "ci_high": d.ci_high,
                        "n": d.n})  # fmt: skip
    return {
        **a.label,
        "pairs": len(pairs),
        "unpaired_a": len(a.episodes) - len(pairs),
        "unpaired_b": len(b.episodes) - len(pairs),
        "metrics": metrics,
    }


def diff(a: Mapping[CellKey, CellEpisodes], b: Mapping[CellKey, CellEpisodes]) -> dict[str, Any]:
    """The diff of B against A: the shared cells' differences, and the cells of one side only."""

    def alone(side: Mapping[CellKey, CellEpisodes], other: Mapping[CellKey, CellEpisodes]) -> Any:
        keys = sorted((k for k in side if k not in other), key=order_key)
        return [{**side[k].label, "episodes": len(side[k].episodes)} for k in keys]

    shared = sorted((k for k in a if k in b), key=order_key)
    return {
        "level": LEVEL,
        "n_boot": N_BOOT,
        "cells": [cell_diff(a[k], b[k]) for k in shared],
        "only_a": alone(a, b),
        "only_b": alone(b, a),
    }
