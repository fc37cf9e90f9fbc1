"""The counterfactual section's heat maps, drawn as coloured tables (`analysis.heat`): paired
differences and persistence per (model,) prompt and variant, and action shares against the
equilibria. One table per family or game scales to seed-003's dozens of model and prompt rows,
and each number stays readable."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from statistics import fmean

from stratagem.analysis.heat import heat_table
from stratagem.analysis.report_views import TableView
from stratagem.studies.counterfactual.paired_analysis import PairedCell


def row_label(model: str, prompt: str, models: int) -> str:
    """A heat map row: the prompt, prefixed by the model when several models share the map."""
    return prompt if models <= 1 else f"{model} · {prompt}"


def _by_row(
    values: Mapping[tuple[str, str, str], list[float]],
) -> tuple[str, list[str], list[str], list[list[float]]]:
    """(what a row is, row labels, variants, grid of means over opponents) from (model, prompt,
    variant) keys."""
    keys = list(dict.fromkeys((m, p) for m, p, _ in values))
    variants = list(dict.fromkeys(v for _, _, v in values))
    grid = [
        [fmean(values[(m, p, v)]) if (m, p, v) in values else float("nan") for v in variants]
        for m, p in keys
    ]
    models = len({m for m, _ in keys})
    corner = "prompt" if models <= 1 else "model · prompt"
    return corner, [row_label(m, p, models) for m, p in keys], variants, grid


def paired_points_heat(cells: Sequence[PairedCell], title: str, caption: str) -> TableView | None:
    """Mean variant − default total points per (model,) prompt and variant, over opponents."""
    diffs: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for c in cells:
        if c.points is not None:
            diffs[(c.model, c.prompt, c.variant_game)].append(c.points.estimate)
    if not diffs:
        return None
    corner, rows, variants, grid = _by_row(diffs)
    bound = max((abs(x) for row in grid for x in row if x == x), default=1.0) or 1.0
    return heat_table(
        title, caption, corner, rows, variants, grid, vmin=-bound, vmax=bound,
        colormap="RdBu", decimals=1,
        legend="Red: the variant scores less than the default game; blue: more.",
    )  # fmt: skip


def persistence_heat(cells: Sequence[PairedCell], title: str, caption: str) -> TableView | None:
    """Canonical-strategy persistence per (model,) prompt and variant, over opponents."""
    scores: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for c in cells:
        if c.persistence.score is not None:
            scores[(c.model, c.prompt, c.variant_game)].append(c.persistence.score)
    if not scores:
        return None
    corner, rows, variants, grid = _by_row(scores)
    return heat_table(
        title, caption, corner, rows, variants, grid, vmin=0.0, vmax=1.0,
        legend="1: the default game's behaviour unchanged; 0: nothing of it left.",
    )  # fmt: skip


def action_heat(
    shares: Mapping[str, Sequence[float]],
    labels: Sequence[str],
    equilibria: Sequence[Sequence[float]],
    title: str,
    caption: str,
    corner: str,
) -> TableView:
    """Each row's action shares under the stage game's equilibria (the top rows)."""
    names = [
        f"equilibrium {k + 1}" if len(equilibria) > 1 else "equilibrium"
        for k in range(len(equilibria))
    ]
    grid = [list(sigma) for sigma in equilibria] + [list(v) for v in shares.values()]
    return heat_table(title, caption, corner, [*names, *shares], labels, grid, vmin=0.0, vmax=1.0)
