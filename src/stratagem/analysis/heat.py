"""Heat maps as coloured HTML tables.

A report with dozens of models shows a metric per (model, prompt) row and per column as a heat
map. Drawn by matplotlib, one such image costs about a third of a second and its numbers cannot be
read or copied; as a table whose cells are coloured by value it costs next to nothing, every
number stays text, and the page stays one file without script. The colours are matplotlib's
colour maps (viridis for shares and scores, a diverging red-blue map centred on 0 for
differences), so they match the report's images.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib import colormaps

from stratagem.analysis.report_views import CellView, TableView, make_table

HEAT_CSS = "heat"
"""The table's class: the report's CSS draws its cells as tiles."""


def shade(value: float, vmin: float, vmax: float, colormap: str) -> str:
    """Inline style of a cell: its colour map colour, and ink that stays readable on it."""
    span = vmax - vmin
    position = 0.5 if span <= 0 else min(1.0, max(0.0, (value - vmin) / span))
    red, green, blue, _ = colormaps[colormap](position)
    # Relative luminance (sRGB weights) decides between black and white ink.
    light = 0.2126 * red + 0.7152 * green + 0.0722 * blue > 0.5
    colour = "#{:02x}{:02x}{:02x}".format(*(round(255 * c) for c in (red, green, blue)))
    return f"background:{colour};color:{'#000' if light else '#fff'}"


def heat_table(
    title: str,
    caption: str,
    corner: str,
    rows: Sequence[str],
    columns: Sequence[str],
    grid: Sequence[Sequence[float]],
    *,
    vmin: float,
    vmax: float,
    colormap: str = "viridis",
    decimals: int = 2,
    legend: str = "",
) -> TableView:
    """`grid[i][j]` for row `rows[i]` and column `columns[j]`; NaN is an empty cell."""
    body: list[list[object]] = []
    for label, values in zip(rows, grid, strict=True):
        line: list[object] = [label]
        for value in values:
            if math.isnan(value):
                line.append(None)
            else:
                style = shade(value, vmin, vmax, colormap)
                line.append(CellView(f"{value:.{decimals}f}", "num", style=style))
        body.append(line)
    return make_table(
        title, caption, (corner, *columns), body, legend=legend, fold=False, css=HEAT_CSS
    )
