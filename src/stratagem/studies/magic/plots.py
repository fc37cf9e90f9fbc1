"""The MAgIC radar chart (seed-004 §9.2): the seven abilities of each challenger as one polygon.

The paper's radar figure is lost from the seed; what survives is the axis order, clockwise from
the top (Judgement, Reasoning, Deception, Collaboration, Coordination, Rationality,
Self-Awareness: `radar.RADAR_AXES`), and that the values are percentages whose enclosed area is
compared. So the axes start at 12 o'clock and run clockwise, values in %, and the radial scale
reaches past 100 when Deception (whose maximum is 125, §6.4) does.

Drawn with matplotlib's object API on the Agg canvas (`analysis.plots.new_figure`), never pyplot.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.projections.polar import PolarAxes

from stratagem.analysis.plots import PALETTE, new_figure
from stratagem.errors import StratagemError
from stratagem.studies.magic.radar import RADAR_AXES

LINESTYLES: tuple[str, ...] = ("-", "--", "-.", ":")
"""Cycled after the palette, so a ninth entity is still told apart from the first."""


def literal(text: str) -> str:
    """A label shown as written: matplotlib reads `$...$` as mathematics and leaves labels that
    start with an underscore out of the legend."""
    text = text.replace("$", r"\$")
    return " " + text if text.startswith("_") else text


def radar_figure(polygons: Sequence[tuple[str, Sequence[float]]], title: str = "") -> Figure:
    """One closed polygon per (label, seven values in %, in `RADAR_AXES` order); labels are
    shown as written."""
    if not polygons:
        raise StratagemError("nothing to plot: no entity has all seven abilities")
    n = len(RADAR_AXES)
    for label, values in polygons:
        if len(values) != n:
            raise StratagemError(f"{label}: a radar needs {n} values, got {len(values)}")
    angles = [2 * math.pi * k / n for k in range(n)]
    figure = new_figure(7.5, 5.5)
    # Constrained layout does not see the polar axis labels: leave room for them.
    figure.set_layout_engine("constrained", w_pad=0.45, h_pad=0.15)
    ax = figure.add_subplot(projection="polar")
    assert isinstance(ax, PolarAxes)
    ax.set_theta_offset(math.pi / 2)  # the first axis at the top
    ax.set_theta_direction(-1)  # clockwise
    top = max(100.0, 1.05 * max(max(v) for _, v in polygons))
    for i, (label, values) in enumerate(polygons):
        colour = PALETTE[i % len(PALETTE)]
        style = LINESTYLES[(i // len(PALETTE)) % len(LINESTYLES)]
        xs, ys = [*angles, angles[0]], [*values, values[0]]
        ax.plot(xs, ys, color=colour, linestyle=style, linewidth=1.6, label=literal(label))
        ax.fill(xs, ys, color=colour, alpha=0.08)
    ax.set_xticks(angles, [axis for _, axis in RADAR_AXES])
    ax.set_ylim(0, top)
    ax.set_yticks([25, 50, 75, 100])
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(alpha=0.4)
    if title:
        ax.set_title(title)
    figure.legend(frameon=False, loc="outside right upper", fontsize=8)
    return figure
