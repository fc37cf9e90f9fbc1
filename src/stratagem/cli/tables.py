"""Tables that fit the terminal: cells wrap instead of being cut, and when even wrapped columns do
not fit, the least useful columns are left out (and named under the table), never the names a user
has to type. Every cell is plain `Text`: data is never read as markup."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.table import Table
from rich.text import Text

BORDER = 3
"""Characters a column costs besides its text in rich's default box: two of padding, one rule."""
WRAP_MIN = 8
"""The narrowest a wrapping column is squeezed to by default (longer words fold beyond it)."""


@dataclass(frozen=True)
class Col:
    """A column: `keep` ranks it (the lowest is dropped first); `wrap=False` keeps every cell on
    one line, whole (for names a user types)."""

    header: str
    keep: int
    justify: Literal["left", "right"] = "left"
    wrap: bool = True
    least: int = WRAP_MIN
    """The narrowest a wrapping column may be squeezed to before columns are dropped."""


def _min_width(col: Col, cells: Sequence[str]) -> int:
    if not col.wrap:
        return max(len(s) for s in [col.header, *cells])
    header = max(len(w) for w in col.header.split())
    words = [len(w) for s in cells for w in s.split()]
    return max(header, min(col.least, max(words, default=1)))


def _widths(
    columns: Sequence[Col], natural: list[int], words: list[int], mins: list[int], room: int
) -> list[int]:
    """Every column at its natural width if that fits; else the wrapping ones first get their
    longest word whole (most valued first), then share the rest in proportion to their need."""
    if sum(natural) <= room:
        return natural
    widths = list(mins)
    for i in sorted(range(len(columns)), key=lambda i: -columns[i].keep):
        grow = min(words[i], natural[i]) - widths[i]
        if columns[i].wrap and 0 < grow <= room - sum(widths):
            widths[i] += grow
    spare = room - sum(widths)
    want = [n - w if c.wrap else 0 for c, n, w in zip(columns, natural, widths, strict=True)]
    if spare > 0 and sum(want) > 0:
        widths = [w + spare * x // sum(want) for w, x in zip(widths, want, strict=True)]
    return widths


def fitted_table(
    columns: Sequence[Col],
    rows: Sequence[Sequence[str]],
    width: int,
    title: Text | None = None,
) -> Table:
    """A table of `rows` no wider than `width`, dropping the lowest-`keep` columns if needed."""
    mins = [_min_width(c, [r[i] for r in rows]) for i, c in enumerate(columns)]
    shown = list(range(len(columns)))
    by_value = sorted(shown, key=lambda i: columns[i].keep)
    while len(shown) > 1 and sum(mins[i] + BORDER for i in shown) + 1 > width:
        shown.remove(by_value.pop(0))
    dropped = [columns[i].header for i in range(len(columns)) if i not in shown]
    caption = Text(f"(too narrow for: {', '.join(dropped)})") if dropped else None
    natural = [max(len(s) for s in [columns[i].header, *(r[i] for r in rows)]) for i in shown]
    room = width - BORDER * len(shown) - 1
    words = [max(len(w) for s in [columns[i].header, *(r[i] for r in rows)] for w in s.split())
             for i in shown]  # fmt: skip
    widths = _widths([columns[i] for i in shown], natural, words, [mins[i] for i in shown], room)
    table = Table(title=title, caption=caption)
    for i, w in zip(shown, widths, strict=True):
        col = columns[i]
        table.add_column(
            col.header, justify=col.justify, no_wrap=not col.wrap, overflow="fold", width=w
        )
    for row in rows:
        table.add_row(*(Text(row[i]) for i in shown))
    return table
