"""Grouped bar plots (seed-001 §10.1) and the PNG plumbing that self-contained reports need.

The thesis' plot pipeline takes any triple (main group, subgroup, metric): the main group on the X
axis, the subgroup as the bar colour, and the bar height the group mean with its standard deviation
as the error bar. `grouped_bar_figure` is that pipeline on plain list-of-dict rows, so it works on
the Appendix-A table as well as on metrics computed from the store.

Figures are built with matplotlib's object API (`Figure` + Agg canvas), never pyplot, so plotting
needs no display, touches no global state and is safe to call from a server or a test.

Choices the thesis leaves open, as options: the error bar is the *sample* standard deviation
(ddof = 1, what seaborn's `errorbar="sd"` draws; 0 for a single value) by default, or the standard
error, or none; rows whose metric is missing (None, NaN or an empty string) are left out of their
group; groups are ordered by value (numbers numerically) unless an order is given.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from stratagem.errors import StratagemError

Row = Mapping[str, Any]
ErrorBar = Literal["std", "sem", "none"]

PALETTE: tuple[str, ...] = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
"""Okabe-Ito colours: distinguishable with colour-blindness and in greyscale print. The hue level
at position i always gets colour i, so a level keeps its colour across plots with the same order."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def new_figure(width: float = 7.0, height: float = 4.5) -> Figure:
    """A figure on the Agg canvas, with the house style's size."""
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def figure_png(figure: Figure, dpi: int = 120) -> bytes:
    """The figure rendered as PNG bytes (no timestamp metadata, so output is reproducible)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def save_png(png: bytes, path: str | Path) -> Path:
    """Write PNG bytes, creating parent folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(png)
    return target


def png_data_uri(png: bytes) -> str:
    """A `data:` URI for PNG bytes, so an HTML report embeds its images and stays one file."""
    if not png.startswith(PNG_SIGNATURE):
        raise StratagemError("not PNG data: the PNG signature is missing")
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def png_img_tag(png: bytes, alt: str, width: int | None = None) -> str:
    """An `<img>` element embedding the PNG, with escaped alt text."""
    size = f' width="{int(width)}"' if width is not None else ""
    return f'<img src="{png_data_uri(png)}" alt="{html.escape(alt, quote=True)}"{size}>'


def order_key(text: str) -> tuple[int, float, str]:
    """Sort key for values as text: numbers first in numeric order, then text alphabetically."""
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def value_order(values: Iterable[object]) -> list[str]:
    """Distinct values as text, in `order_key` order."""
    return sorted({str(v) for v in values}, key=order_key)


def _number(row: Row, column: str, index: int) -> float | None:
    if column not in row:
        raise StratagemError(f"row {index} has no column '{column}'")
    value = row[column]
    if value is None or (isinstance(value, str) and value.strip() == ""):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise StratagemError(
            f"row {index}: column '{column}' must be a number, got {value!r}"
        ) from None
    return None if math.isnan(number) else number


@dataclass(frozen=True)
class GroupStat:
    """Mean and error of the metric for one (x, hue) group."""

    x: str
    hue: str | None
    mean: float
    error: float
    n: int


def group_stats(
    rows: Sequence[Row], x: str, y: str, hue: str | None = None, *, error: ErrorBar = "std"
) -> list[GroupStat]:
    """Mean and error bar of `y` for each (x, hue) group that has at least one value."""
    if error not in ("std", "sem", "none"):
        raise StratagemError(f"error bar must be 'std', 'sem' or 'none', got {error!r}")
    groups: dict[tuple[str, str | None], list[float]] = {}
    for i, row in enumerate(rows):
        for column in (x, hue):
            if column is not None and column not in row:
                raise StratagemError(f"row {i} has no column '{column}'")
        value = _number(row, y, i)
        if value is None:
            continue
        group = (str(row[x]), str(row[hue]) if hue is not None else None)
        groups.setdefault(group, []).append(value)
    stats = []
    for (gx, gh), values in groups.items():
        n = len(values)
        mean = sum(values) / n
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
        err = {"std": sd, "sem": sd / math.sqrt(n), "none": 0.0}[error]
        stats.append(GroupStat(gx, gh, mean, err, n))
    return stats


def grouped_bar_figure(
    rows: Sequence[Row],
    x: str,
    y: str,
    hue: str | None = None,
    *,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    x_order: Sequence[str] | None = None,
    hue_order: Sequence[str] | None = None,
    error: ErrorBar = "std",
    ylim: tuple[float, float] | None = None,
    annotate: bool = False,
    size: tuple[float, float] = (7.0, 4.5),
) -> Figure:
    """Bars of mean `y` per `x` group, one colour per `hue` subgroup, with error bars.

    A group with no values leaves a gap rather than a zero-height bar, so absence is visible.
    """
    stats = group_stats(rows, x, y, hue, error=error)
    if not stats:
        raise StratagemError(f"nothing to plot: no row has a value for '{y}'")
    xs = [str(v) for v in x_order] if x_order is not None else value_order(s.x for s in stats)
    hues: list[str | None]
    if hue is None:
        hues = [None]
    elif hue_order is not None:
        hues = [str(v) for v in hue_order]
    else:
        hues = list(value_order(s.hue for s in stats))
    by_key = {(s.x, s.hue): s for s in stats}

    figure = new_figure(*size)
    ax = figure.add_subplot()
    width = 0.8 / len(hues)
    for j, level in enumerate(hues):
        offsets = [i - 0.4 + width * (j + 0.5) for i in range(len(xs))]
        cells = [by_key.get((gx, level)) for gx in xs]
        positions = [p for p, c in zip(offsets, cells, strict=True) if c is not None]
        present = [c for c in cells if c is not None]
        if not present:
            continue
        bars = ax.bar(
            positions,
            [c.mean for c in present],
            width=width * 0.95,
            color=PALETTE[j % len(PALETTE)],
            label=level if level is not None else y,
            yerr=[c.error for c in present] if error != "none" else None,
            capsize=3 if error != "none" else 0,
            error_kw={"elinewidth": 1, "ecolor": "#333333"},
        )
        if annotate:
            ax.bar_label(bars, labels=[f"{c.mean:.2f}" for c in present], fontsize=8, padding=2)
    ax.set_xticks(range(len(xs)), xs)
    ax.set_xlabel(xlabel if xlabel is not None else x)
    error_note = {"std": " (mean ± sd)", "sem": " (mean ± se)", "none": " (mean)"}[error]
    ax.set_ylabel(ylabel if ylabel is not None else y + error_note)
    ax.set_title(title if title is not None else f"{y} by {x}" + (f" and {hue}" if hue else ""))
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.spines[["top", "right"]].set_visible(False)
    if hue is not None:
        ax.legend(title=hue, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def grouped_bar_png(
    rows: Sequence[Row], x: str, y: str, hue: str | None = None, **options: Any
) -> bytes:
    """`grouped_bar_figure` rendered as PNG bytes (same options)."""
    return figure_png(grouped_bar_figure(rows, x, y, hue, **options))


def save_grouped_bar(
    path: str | Path, rows: Sequence[Row], x: str, y: str, hue: str | None = None, **options: Any
) -> Path:
    """`grouped_bar_figure` written to a PNG file (same options); returns the path."""
    return save_png(grouped_bar_png(rows, x, y, hue, **options), path)
