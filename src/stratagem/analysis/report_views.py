"""The view models of a report: what `templates/report.html.j2` renders, built by report sections.

Plain frozen data (tables of cells, plots as data URIs, paragraphs, notes), so a section is built
and tested without the template, and every study's section module can share them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from stratagem.analysis import plots

LONG_TABLE = 40
"""Tables with more rows than this are shown folded (an HTML <details>, no script needed)."""

# -- view models --------------------------------------------------------


@dataclass(frozen=True)
class CellView:
    text: str
    css: str = ""
    links: tuple[tuple[str, str], ...] = ()
    """(text, anchor in this page) links shown instead of `text`, e.g. to transcripts."""
    style: str = ""
    """Inline CSS made by the report itself (a heat map's colours), never from data."""
    href: str = ""
    """A URL relative to the report that `text` links to (a leaderboard row's episodes in the
    viewer, `analysis.leaderboards`)."""


@dataclass(frozen=True)
class TableView:
    title: str
    caption: str
    columns: tuple[str, ...]
    numeric: tuple[bool, ...]
    rows: tuple[tuple[CellView, ...], ...]
    note: str = ""
    tag: str = ""
    """Where the table's shape comes from, e.g. "thesis Table 3.2"."""
    legend: str = ""
    """What the column abbreviations mean."""
    folded: bool = False
    css: str = ""
    """The table's class, e.g. "heat" for a heat map drawn as a table."""
    kind: str = field(default="table", init=False)


@dataclass(frozen=True)
class PlotView:
    title: str
    caption: str
    uri: str
    alt: str


@dataclass(frozen=True)
class PlotGrid:
    plots: tuple[PlotView, ...]
    columns: int = 2
    kind: str = field(default="plots", init=False)


@dataclass(frozen=True)
class TableGrid:
    """Small tables side by side."""

    tables: tuple[TableView, ...]
    kind: str = field(default="tables", init=False)


@dataclass(frozen=True)
class Paragraph:
    text: str
    kind: str = field(default="p", init=False)


@dataclass(frozen=True)
class Note:
    """A one-line remark: why a section is missing, or what to keep in mind."""

    text: str
    kind: str = field(default="note", init=False)


@dataclass(frozen=True)
class Heading:
    text: str
    kind: str = field(default="h3", init=False)


@dataclass(frozen=True)
class Definitions:
    items: tuple[tuple[str, str], ...]
    compact: bool = False
    kind: str = field(default="dl", init=False)


@dataclass(frozen=True)
class GameView:
    name: str
    description: str
    matrix: TableView | None


@dataclass(frozen=True)
class GameCards:
    games: tuple[GameView, ...]
    kind: str = field(default="games", init=False)


@dataclass(frozen=True)
class TranscriptLine:
    """One line of a transcript; `body` (a prompt or a reply) is shown preformatted under it."""

    kind: str
    who: str
    text: str
    body: str = ""
    hidden: str = ""
    """Who could see it, when not every seat ("seat 1 only"); empty when public."""


@dataclass(frozen=True)
class TranscriptRound:
    title: str
    lines: tuple[TranscriptLine, ...]


@dataclass(frozen=True)
class TranscriptView:
    anchor: str
    title: str
    summary: str
    seats: tuple[str, ...]
    rounds: tuple[TranscriptRound, ...]
    outcome: str


@dataclass(frozen=True)
class TranscriptGroup:
    """The sampled transcripts of one setting, each folded (an HTML <details>)."""

    title: str
    transcripts: tuple[TranscriptView, ...]
    kind: str = field(default="transcripts", init=False)


Block = (
    TableView
    | TableGrid
    | PlotGrid
    | Paragraph
    | Note
    | Heading
    | Definitions
    | GameCards
    | TranscriptGroup
)


@dataclass
class Section:
    id: str
    title: str
    blocks: list[Block] = field(default_factory=list)


@dataclass(frozen=True)
class Stat:
    label: str
    value: str
    warn: bool = False


# -- formatting ------------------------------------------------------------------------------------


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def cell(value: object, decimals: int = 2) -> CellView:
    if value is None:
        return CellView("–", "empty")
    if isinstance(value, bool):
        return CellView("yes" if value else "no")
    if isinstance(value, float):
        return CellView(f"{value:.{decimals}f}")
    if isinstance(value, int):
        return CellView(f"{value:,}")
    if isinstance(value, CellView):
        return value
    return CellView(str(value))


def make_table(
    title: str,
    caption: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    note: str = "",
    tag: str = "",
    legend: str = "",
    decimals: int = 2,
    fold: bool | None = None,
    css: str = "",
) -> TableView:
    """A table view; columns whose values are all numbers are right-aligned, floats get
    `decimals` decimals, missing values show as a dash."""
    body = [list(r) for r in rows]
    numeric = []
    for j in range(len(columns)):
        values = [r[j] for r in body if j < len(r) and r[j] is not None]
        is_num = bool(values) and all(
            is_number(v) or (isinstance(v, CellView) and "num" in v.css) for v in values
        )
        numeric.append(is_num and j > 0)
    return TableView(
        title=title,
        caption=caption,
        columns=tuple(columns),
        numeric=tuple(numeric),
        rows=tuple(
            tuple(_css(cell(v, decimals), numeric[j]) for j, v in enumerate(r)) for r in body
        ),
        note=note,
        tag=tag,
        legend=legend,
        folded=len(body) > LONG_TABLE if fold is None else fold,
        css=css,
    )


def _css(cell: CellView, numeric: bool) -> CellView:
    """The cell's final classes: `num` exactly when its column is numeric, `wrap` for long text
    (short text stays on one line, so names like "plain-choice" are not broken)."""
    classes = [c for c in cell.css.split() if c != "num"]
    if numeric:
        classes.insert(0, "num")
    elif len(cell.text) > 32:
        classes.append("wrap")
    return replace(cell, css=" ".join(classes))


def plot_view(figure_png: bytes, title: str, caption: str) -> PlotView:
    return PlotView(title, caption, plots.png_data_uri(figure_png), title)
