"""Plots of seed-003's counterfactual analysis: paired differences, persistence, and RPS play
against the equilibrium. matplotlib's object API only (see `plots`), PNG bytes out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from statistics import fmean

from matplotlib.figure import Figure

from stratagem.analysis.plots import PALETTE, new_figure
from stratagem.errors import StratagemError
from stratagem.studies.counterfactual.tables import PairedCell


def paired_points_figure(cells: Sequence[PairedCell], title: str) -> Figure:
    """One row per (prompt, opponent): variant minus default total points, with the bootstrap
    interval, one colour per variant; the zero line is "no effect of the counterfactual"."""
    shown = [c for c in cells if c.points is not None]
    if not shown:
        raise StratagemError("nothing to plot: no default and variant games were paired")
    rows = list(dict.fromkeys((c.prompt, c.opponent) for c in shown))
    variants = list(dict.fromkeys(c.variant_game for c in shown))
    figure = new_figure(7.0, 1.2 + 0.32 * len(rows))
    ax = figure.add_subplot()
    step = 0.7 / max(1, len(variants))
    for j, variant in enumerate(variants):
        mine = {(c.prompt, c.opponent): c.points for c in shown if c.variant_game == variant}
        ys, xs, lo, hi = [], [], [], []
        for i, row in enumerate(rows):
            d = mine.get(row)
            if d is None:
                continue
            ys.append(i - 0.35 + step * (j + 0.5))
            xs.append(d.mean_diff)
            lo.append(d.mean_diff - (d.ci_low if d.ci_low is not None else d.mean_diff))
            hi.append((d.ci_high if d.ci_high is not None else d.mean_diff) - d.mean_diff)
        ax.errorbar(
            xs, ys, xerr=[lo, hi], fmt="o", color=PALETTE[j % len(PALETTE)], label=variant,
            markersize=4, capsize=2, elinewidth=1,
        )  # fmt: skip
    ax.axvline(0, color="#333333", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [f"{p} vs {o}" for p, o in rows])
    ax.invert_yaxis()
    ax.set_xlabel("variant − default total points (mean, 95% bootstrap interval)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(title="variant", frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


MAX_ANNOTATED = 60
"""Heat maps with more cells than this show colours only: every annotation is a text to lay out,
the bulk of a large map's drawing time (the tables hold the numbers)."""


def row_label(model: str, prompt: str, models: int) -> str:
    """A heat map row: the prompt, prefixed by the model when several models share the map."""
    return prompt if models <= 1 else f"{model} · {prompt}"


def _heatmap(
    grid: Sequence[Sequence[float]],
    rows: Sequence[str],
    columns: Sequence[str],
    title: str,
    label: str,
    *,
    vmin: float,
    vmax: float,
    cmap: str,
    decimals: int = 2,
) -> Figure:
    """One annotated heat map: drawing one image is far cheaper than a panel per model, so it
    scales to seed-003's dozens of model and prompt rows."""
    figure = new_figure(2.4 + 1.1 * len(columns), 1.1 + 0.3 * len(rows))
    ax = figure.add_subplot()
    image = ax.imshow(grid, vmin=vmin, vmax=vmax, cmap=cmap, aspect="auto")
    if len(rows) * len(columns) <= MAX_ANNOTATED:
        middle = (vmin + vmax) / 2
        for i, row in enumerate(grid):
            for j, value in enumerate(row):
                if value == value:  # not NaN
                    dark = (
                        value < middle
                        if cmap == "viridis"
                        else abs(value - middle) > 0.6 * (vmax - middle)
                    )
                    ax.text(j, i, f"{value:.{decimals}f}", ha="center", va="center",
                            color="white" if dark else "black", fontsize=8)  # fmt: skip
    ax.set_xticks(range(len(columns)), columns)
    ax.set_yticks(range(len(rows)), rows, fontsize=8 if len(rows) > 12 else None)
    ax.set_title(title)
    figure.colorbar(image, ax=ax, label=label)
    return figure


def persistence_figure(cells: Sequence[PairedCell], title: str) -> Figure:
    """(Model ×) prompt × variant heat map of canonical-strategy persistence, averaged over
    opponents."""
    scores: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for c in cells:
        if c.persistence.score is not None:
            scores[(c.model, c.prompt, c.variant_game)].append(c.persistence.score)
    if not scores:
        raise StratagemError("nothing to plot: no persistence score")
    keys = list(dict.fromkeys((m, p) for m, p, _ in scores))
    variants = list(dict.fromkeys(v for _, _, v in scores))
    grid = [[fmean(scores[(m, p, v)]) if (m, p, v) in scores else float("nan") for v in variants]
            for m, p in keys]  # fmt: skip
    models = len({m for m, _ in keys})
    rows = [row_label(m, p, models) for m, p in keys]
    return _heatmap(grid, rows, variants, title, "persistence (1 = unchanged)", vmin=0.0,
                    vmax=1.0, cmap="viridis")  # fmt: skip


def paired_points_heatmap(cells: Sequence[PairedCell], title: str) -> Figure:
    """(Model ×) prompt × variant heat map of the mean paired difference in total points,
    averaged over opponents: the many-model counterpart of `paired_points_figure`."""
    diffs: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for c in cells:
        if c.points is not None:
            diffs[(c.model, c.prompt, c.variant_game)].append(c.points.mean_diff)
    if not diffs:
        raise StratagemError("nothing to plot: no default and variant games were paired")
    keys = list(dict.fromkeys((m, p) for m, p, _ in diffs))
    variants = list(dict.fromkeys(v for _, _, v in diffs))
    grid = [[fmean(diffs[(m, p, v)]) if (m, p, v) in diffs else float("nan") for v in variants]
            for m, p in keys]  # fmt: skip
    bound = max((abs(x) for row in grid for x in row if x == x), default=1.0) or 1.0
    models = len({m for m, _ in keys})
    rows = [row_label(m, p, models) for m, p in keys]
    return _heatmap(grid, rows, variants, title, "variant − default total points", vmin=-bound,
                    vmax=bound, cmap="RdBu", decimals=1)  # fmt: skip


def action_heatmap(
    shares: Mapping[str, Sequence[float]],
    labels: Sequence[str],
    equilibria: Sequence[Sequence[float]],
    title: str,
) -> Figure:
    """Each row's action shares next to the stage game's equilibria (top rows): the many-model
    counterpart of `action_distribution_figure`."""
    if not shares:
        raise StratagemError("nothing to plot: no valid move")
    rows = [f"equilibrium {k + 1}" if len(equilibria) > 1 else "equilibrium"
            for k in range(len(equilibria))] + list(shares)  # fmt: skip
    grid = [list(sigma) for sigma in equilibria] + [list(v) for v in shares.values()]
    return _heatmap(grid, rows, labels, title, "share of player 0's valid moves", vmin=0.0,
                    vmax=1.0, cmap="viridis")  # fmt: skip


def action_distribution_figure(
    shares: Mapping[str, Sequence[float]],
    labels: Sequence[str],
    equilibria: Sequence[Sequence[float]],
    title: str,
) -> Figure:
    """Player 0's action shares per prompt (bars) against the stage game's equilibrium (black
    marks): seed-003 §7.7's "equilibrium rigidity" shows as bars far from the marks."""
    if not shares:
        raise StratagemError("nothing to plot: no valid move")
    prompts = list(shares)
    figure = new_figure(7.0, 4.0)
    ax = figure.add_subplot()
    width = 0.8 / len(prompts)
    for j, prompt in enumerate(prompts):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(labels))]
        ax.bar(xs, shares[prompt], width=width * 0.95, color=PALETTE[j % len(PALETTE)],
               label=prompt)  # fmt: skip
    for k, sigma in enumerate(equilibria):
        ax.hlines(
            sigma, [i - 0.45 for i in range(len(labels))], [i + 0.45 for i in range(len(labels))],
            colors="black", linewidth=2, linestyles="solid" if k == 0 else "dashed",
            label="equilibrium" if k == 0 else "_another equilibrium",
        )  # fmt: skip
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of player 0's valid moves")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure
