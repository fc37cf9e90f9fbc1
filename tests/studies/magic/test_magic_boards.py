"""MAgIC's leaderboards in the report and the viewer (issue 35 item 5): one computation for both
(the viewer's rows are the report's rows, cell for cell), every row's entity in the report a link
to the viewer's list of exactly the row's games, and markup in a model id left as text."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from conftest import CHALLENGER
from support.report_html import tables

from stratagem.analysis.leaderboards import viewer_link
from stratagem.analysis.report import build_report
from stratagem.studies.magic.section import LINKS_NOTE
from stratagem.web.data import Sources
from stratagem.web.data.listing import MAX_PER_PAGE

LINK = re.compile(r'<a href="([^"]*)">([^<]*)</a>')


@pytest.fixture(scope="module")
def html_report(magic_store: Path) -> str:
    return build_report(magic_store.parent).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def viewed(magic_store: Path) -> tuple[Sources, str, dict[str, Any]]:
    sources = Sources([magic_store.parent])
    (x,) = sources.experiments()
    return sources, x["id"], sources.analysis(x["source"], x["id"])


def test_the_viewer_shows_the_report_s_rows(
    html_report: str, viewed: tuple[Sources, str, dict[str, Any]]
) -> None:
    found = tables(html_report)
    boards = viewed[2]["leaderboards"]
    assert [b["title"] for b in boards] == [
        "MAgIC leaderboard", "Bradley-Terry rating", "Deviation ratings", "Ratings by role",
        "Capability profile across the five games",
    ]  # fmt: skip
    for board in boards:
        table = found[board["title"]]
        assert table[0] == board["columns"]
        assert table[1:] == [[r["label"], *r["cells"]] for r in board["rows"]], board["id"]
    assert found["Bradley-Terry rating"][1][0] == CHALLENGER  # "chal<i>|magic", as text


def test_each_report_row_links_to_the_viewer_s_list_of_its_games(
    html_report: str, viewed: tuple[Sources, str, dict[str, Any]]
) -> None:
    sources, experiment, analysis = viewed
    links = LINK.findall(html_report)
    assert LINKS_NOTE in html.unescape(html_report)
    for board in analysis["leaderboards"]:
        for row in board["rows"]:
            href = html.escape(viewer_link(experiment, row["group"]))
            assert (href, html.escape(row["label"])) in links, row["group"]
            listed = sources.episodes(
                sources.sources()[0]["id"],
                experiment,
                filters={"group": row["group"]},
                per_page=MAX_PER_PAGE,
            )
            assert listed["total"] == row["episodes"] > 0
    # The link is the page's route with the experiment and the row's key, each encoded once.
    link = viewer_link("exp/1 #", "magic/roles/chameleon/chameleon/a|b&c")
    assert link == (
        "../../index.html#/find/exp%2F1%20%23?group=magic%2Froles%2Fchameleon%2Fchameleon%2Fa%7Cb%26c"
    )
    route, _, query = link.partition("?")
    assert unquote(route.rsplit("/", 1)[1]) == "exp/1 #"
    assert unquote(query.removeprefix("group=")) == "magic/roles/chameleon/chameleon/a|b&c"
