"""The tables of an HTML report as rows of cell texts, for the report tests."""

from __future__ import annotations

from html.parser import HTMLParser


class _Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts, keyed by the caption title before it."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._title = ""
        self._in_title = False
        self._rows: list[list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = dict(attrs).get("class") or ""
        if (tag == "span" and "title" in classes.split()) or tag == "summary":
            self._in_title, self._title = True, ""
        elif tag == "table":
            self._rows = []
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("span", "summary"):
            self._in_title = False
        elif tag in ("td", "th") and self._rows is not None and self._cell is not None:
            self._rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table" and self._rows is not None:
            self.tables.setdefault(self._title.strip(), self._rows)
            self._rows = None

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title += data
        if self._cell is not None:
            self._cell.append(data)


def tables(html: str) -> dict[str, list[list[str]]]:
    parser = _Tables()
    parser.feed(html)
    return parser.tables


def row(table: list[list[str]], label: str) -> list[str]:
    return next(r for r in table if r and r[0] == label)
