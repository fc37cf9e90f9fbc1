"""The ToM study's figures (seed-002): KL over turns (Figure 4), the proposals' (request, offer)
scatter and the m–r consistency map (Figure 5), and the normalised decision coefficients
(Figure 6).

Drawn with matplotlib's object API on the Agg canvas (`analysis.plots.new_figure`), never pyplot.
Labels (model names) are shown as written: `literal` keeps matplotlib from reading `$...$`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

from stratagem.analysis.plots import PALETTE, new_figure
from stratagem.studies.tom.records import GROUPS

Key = tuple[str, str]
"""(model, group)."""
Interval = tuple[float, float] | None
MRPoint = tuple[float, float, Interval, Interval]
"""m, r and their intervals."""
MARKERS = {"V0": "o", "V1": "s", "V2": "^"}
LINESTYLES = {"V0": ":", "V1": "--", "V2": "-"}


def literal(text: str) -> str:
    """A label shown as written: `$...$` is not mathematics, a leading underscore not hidden."""
    text = text.replace("$", r"\$")
    return " " + text if text.startswith("_") else text


def _colours(keys: Sequence[Key]) -> dict[str, str]:
    models = list(dict.fromkeys(m for m, _ in keys))
    return {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(models)}


def kl_turn_figure(by_turn: Mapping[Key, Mapping[int, tuple[float, int]]]) -> Figure:
    """Figure 4: mean KL(V0_opp ‖ V1_focal) per turn, one line per (model, group); colour is
    the model, line style the group."""
    figure = new_figure(7.0, 4.0)
    ax = figure.add_subplot()
    colours = _colours(list(by_turn))
    for (model, group), turns in by_turn.items():
        xs = sorted(turns)
        ys = [turns[t][0] for t in xs]
        ax.plot(
            xs,
            ys,
            color=colours[model],
            linestyle=LINESTYLES.get(group, "-"),
            marker=MARKERS.get(group, "o"),
            markersize=4,
            label=literal(f"{model} · {group}"),
        )
    ax.set_xlabel("turn")
    ax.set_ylabel("mean KL (nats)")
    ax.grid(alpha=0.3)
    figure.legend(frameon=False, loc="outside right upper", fontsize=8)
    return figure


def scatter_figure(points: Mapping[Key, Sequence[tuple[float, float]]]) -> Figure:
    """Figure 5 (left): each (model, group)'s proposals as (request, offer) in the proposer's
    own V0, with the y = x line of a fair trade."""
    keys = list(points)
    cols = min(3, max(1, len(keys)))
    rows = math.ceil(len(keys) / cols) if keys else 1
    figure = new_figure(3.2 * cols + 0.5, 3.0 * rows)
    colours = _colours(keys)
    top = max((max(x, y) for pts in points.values() for x, y in pts), default=1.0) or 1.0
    for k, key in enumerate(keys):
        ax = figure.add_subplot(rows, cols, k + 1)
        xs = [x for x, _ in points[key]]
        ys = [y for _, y in points[key]]
        ax.scatter(xs, ys, s=14, alpha=0.6, color=colours[key[0]], marker=MARKERS.get(key[1], "o"))
        ax.plot([0, top], [0, top], color="grey", linewidth=0.8, linestyle=":")
        ax.set_title(literal(f"{key[0]} · {key[1]} (n={len(xs)})"), fontsize=8)
        ax.set_xlabel("request (own V0)", fontsize=8)
        ax.set_ylabel("offer (own V0)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    return figure


def mr_figure(
    summaries: Mapping[Key, MRPoint],
) -> Figure:
    """Figure 5 (right), the m–r map: one point per (model, group) at (r, m) with its interval
    bars, arrows joining V0 → V1 → V2 of each model; m = 1 (fair) drawn as a line."""
    figure = new_figure(6.5, 4.5)
    ax = figure.add_subplot()
    colours = _colours(list(summaries))
    for (model, group), (m, r, m_ci, r_ci) in summaries.items():
        yerr = None if m_ci is None else [[max(0.0, m - m_ci[0])], [max(0.0, m_ci[1] - m)]]
        xerr = None if r_ci is None else [[max(0.0, r - r_ci[0])], [max(0.0, r_ci[1] - r)]]
        ax.errorbar(
            [r],
            [m],
            yerr=yerr,
            xerr=xerr,
            fmt=MARKERS.get(group, "o"),
            color=colours[model],
            capsize=3,
            alpha=0.85,
            label=literal(f"{model} · {group}"),
        )
    for model in dict.fromkeys(m for m, _ in summaries):
        chain = [summaries[(model, g)] for g in GROUPS if (model, g) in summaries]
        for a, b in itertools.pairwise(chain):
            ax.annotate(
                "",
                xy=(b[1], b[0]),
                xytext=(a[1], a[0]),
                arrowprops={"arrowstyle": "->", "color": colours[model], "alpha": 0.7},
            )
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("r (Pearson, request vs offer)")
    ax.set_ylabel("m (slope of offer on request)")
    ax.grid(alpha=0.3)
    figure.legend(frameon=False, loc="outside right upper", fontsize=8)
    return figure


def coefficient_figure(rows: Mapping[Key, Mapping[str, float]], features: Sequence[str]) -> Figure:
    """Figure 6: each (model, group)'s effective coefficients divided by their largest
    magnitude, as grouped bars over the gain/loss features."""
    figure = new_figure(7.5, 4.0)
    ax = figure.add_subplot()
    keys = list(rows)
    width = 0.8 / max(1, len(keys))
    colours = _colours(keys)
    for k, key in enumerate(keys):
        xs = [j + (k - (len(keys) - 1) / 2) * width for j in range(len(features))]
        ys = [rows[key].get(f, 0.0) for f in features]
        ax.bar(
            xs,
            ys,
            width=width,
            color=colours[key[0]],
            alpha={"V0": 0.45, "V1": 0.7, "V2": 1.0}.get(key[1], 0.8),
            edgecolor="black",
            linewidth=0.3,
            label=literal(f"{key[0]} · {key[1]}"),
        )
    ax.set_xticks(range(len(features)), list(features))
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.set_ylim(-1.1, 1.1)
    ax.set_ylabel("c / max|c|")
    ax.grid(alpha=0.3, axis="y")
    figure.legend(frameon=False, loc="outside right upper", fontsize=8)
    return figure
