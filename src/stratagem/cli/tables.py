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
"""The narrowest a wrapping column is squeezed to (its longest word folds beyond that)."""


@dataclass(frozen=True)
class Col:
    """A column: `keep` ranks it (the lowest is dropped first); `wrap=False` keeps every cell on
    one line, whole (for names a user types)."""

    header: str
    keep: int
    justify: Literal["left", "right"] = "left"
    wrap: bool = True


def _min_width(col: Col, cells: Sequence[str]) -> int:
    if not col.wrap:
        return max(len(s) for s in [col.header, *cells])
    header = max(len(w) for w in col.header.split())
    words = [len(w) for s in cells for w in s.split()]
    return max(header, min(WRAP_MIN, max(words, default=1)))


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
    table = Table(title=title, caption=caption)
    for i in shown:
        col = columns[i]
        table.add_column(
            col.header,
            justify=col.justify,
            no_wrap=not col.wrap,
            overflow="fold",
            min_width=mins[i] if not col.wrap else None,
        )
    for row in rows:
        table.add_row(*(Text(row[i]) for i in shown))
    return table
