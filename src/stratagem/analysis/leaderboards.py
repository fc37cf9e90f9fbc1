"""Leaderboards whose rows lead back to the episodes behind them (issue 35 item 5).

A study builds each of its leaderboards once, as this plain view model: a title, a caption, the
columns, and rows of text, each row with the ids of the episodes it was computed from. The report
renders a leaderboard as a table (`table_view`) whose row labels link into the viewer, and the
viewer (`web.data.analysis`) shows the same rows, each opening the episode list filtered to it
(`group=<key>`). So the numbers of a leaderboard are computed by one piece of code for both.

A row's group key is `<leaderboard id>/<row key>`: a leaderboard's id is unique among an
experiment's leaderboards (by convention it begins with its study's name, `magic/...`), and a
row's key (its label unless given) unique within its leaderboard.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import CellView, TableView, make_table
from stratagem.errors import StratagemError

VIEWER_PAGE = "../../index.html"
"""The viewer's page seen from a report it serves: `stratagem view` serves an experiment's report
at `report/<source>/<hex>.html`, and its export writes it there (`web.data.reports.report_url`)."""
EMPTY = "–"
"""A cell without a value."""


@dataclass(frozen=True)
class LeaderboardRow:
    label: str
    """What the first column shows (an entity), and the link's text."""
    cells: tuple[str, ...]
    """The other columns' texts."""
    episodes: tuple[str, ...]
    """The ids of the episodes the row was computed from."""
    key: str = ""
    """Unique within its leaderboard; the label when empty (give one where labels repeat)."""

    @property
    def name(self) -> str:
        return self.key or self.label


@dataclass(frozen=True)
class Leaderboard:
    id: str
    title: str
    caption: str
    columns: tuple[str, ...]
    """The label column's header, then one per cell."""
    rows: tuple[LeaderboardRow, ...]
    numeric: tuple[bool, ...] = ()
    """Per column, whether it holds numbers (shown right-aligned); empty: none does."""
    note: str = ""

    def __post_init__(self) -> None:
        where = f"leaderboard '{self.id}'"
        if not self.id or not self.columns:
            raise StratagemError(f"{where}: needs an id and at least the label's column")
        if self.numeric and len(self.numeric) != len(self.columns):
            raise StratagemError(f"{where}: {len(self.numeric)} numeric flags for "
                                 f"{len(self.columns)} columns")  # fmt: skip
        seen: set[str] = set()
        for row in self.rows:
            if len(row.cells) != len(self.columns) - 1:
                raise StratagemError(f"{where}: row '{row.name}' has {len(row.cells)} cells, "
                                     f"expected {len(self.columns) - 1}")  # fmt: skip
            if row.name in seen:
                raise StratagemError(f"{where}: two rows have the key '{row.name}'")
            seen.add(row.name)

    def group(self, row: LeaderboardRow) -> str:
        """The row's group key: what the viewer's `group=` filter takes."""
        return f"{self.id}/{row.name}"


LeaderboardBuilder = Callable[[ReportData, Sequence[EpisodeData]], list[Leaderboard]]
"""A study's leaderboards, from the report data and the episodes the study applies to (as its
sections get them), computed by the code its report sections use."""


def groups(boards: Sequence[Leaderboard]) -> dict[str, tuple[str, ...]]:
    """Every row's group key -> its episode ids; a leaderboard id used twice is an error (its
    rows' keys would be ambiguous)."""
    out: dict[str, tuple[str, ...]] = {}
    ids: set[str] = set()
    for board in boards:
        if board.id in ids:
            raise StratagemError(f"two leaderboards have the id '{board.id}'")
        ids.add(board.id)
        out.update((board.group(row), row.episodes) for row in board.rows)
    return out


def viewer_link(experiment_id: str, group: str) -> str:
    """The viewer's episode list of a row, from a report the viewer serves: the page's route
    `#/find/<experiment>?group=<key>` (web/pages/analysis.js), which opens the experiment in
    the results directory holding it (a report does not know the directory's number there)."""
    return f"{VIEWER_PAGE}#/find/{quote(experiment_id, safe='')}?group={quote(group, safe='')}"


def table_view(
    board: Leaderboard, link: Callable[[str], str] | None = None, *, tag: str = ""
) -> TableView:
    """The leaderboard as a report table; with `link` (group key -> URL) each row's label links
    to its episodes."""
    numeric = board.numeric or (False,) * len(board.columns)
    rows = [
        [
            CellView(row.label, href=link(board.group(row)) if link else ""),
            *(
                CellView(text, ("num" if flag else "") + (" empty" if text == EMPTY else ""))
                for text, flag in zip(row.cells, numeric[1:], strict=True)
            ),
        ]
        for row in board.rows
    ]
    return make_table(
        board.title, board.caption, board.columns, rows, note=board.note, tag=tag, fold=False
    )
