"""Links that last (issue 36 item 8): each results directory goes by its folder's name, told
apart by its parent folders where two share one (`a/results`, `b/results`), whatever the order
the directories are given in, live and in the static export; and the cells table counted over
the episodes the list's filters keep (issue 36 item 7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from support.browser import chromium, rendered, serving
from support.scripted_run import run_scripted
from test_cells_table import _column, _wait

from stratagem.errors import StratagemError
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.web.data import Sources
from stratagem.web.data.names import source_names
from stratagem.web.export import experiment_dir, export_site
from stratagem.web.server import build_app

__all__ = ["chromium"]

A, B = "a/results", "b/results"


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two results directories both named `results`: A cooperates, B defects every third call
    (so its episodes differ in outcome), each against TitForTat and AlwaysDefect."""
    root = tmp_path_factory.mktemp("names")
    calls = [0]

    def sometimes(request: Any, sample: int) -> str:
        calls[0] += 1
        return str(request.choices[1 if calls[0] % 3 == 0 else 0])

    always = lambda request, sample: request.choices[0]  # noqa: E731
    common: dict[str, Any] = {"rounds": [3], "opponents": ["TitForTat", "AlwaysDefect"]}
    got = run_scripted(root / "a" / "results", "names-a", always, seeds=[0, 1], **common)
    assert got.finished == 4, got.errors
    got = run_scripted(root / "b" / "results", "names-b", sometimes, seeds=[0, 1, 2], **common)
    assert got.finished == 6, got.errors
    return root / "a" / "results", root / "b" / "results"


def _experiment(folder: Path) -> str:
    with ResultStore(folder / STORE_FILE, read_only=True) as store:
        (exp,) = store.experiments()
        return exp.id


def _ids(sources: Sources) -> dict[str, str]:
    return {s["path"]: s["id"] for s in sources.sources()}


# -- the names -------------------------------------------------------------------------------------


def test_two_folders_of_one_name_are_told_apart_and_the_order_does_not_matter(
    twins: tuple[Path, Path],
) -> None:
    forward, backward = Sources(list(twins)), Sources(list(reversed(twins)))
    assert sorted(_ids(forward).values()) == [A, B]
    assert _ids(forward) == _ids(backward)  # each store keeps its name in either order
    (one,) = Sources([twins[1]]).sources()  # alone, a folder goes by its own name
    assert one["id"] == "results"
    (file,) = Sources([twins[1] / STORE_FILE]).sources()  # a store file: its folder's name
    assert file["id"] == "results"


def test_the_naming_rule() -> None:
    paths = [Path(p) for p in ("/w/x/a/results/s.db", "/w/y/a/results/s.db", "/w/b/results/s.db")]
    assert source_names(paths) == ["x/a/results", "y/a/results", "b/results"]
    assert source_names(paths[::-1]) == ["b/results", "y/a/results", "x/a/results"]
    same_folder = [Path("/w/r/one.db"), Path("/w/r/two.db"), Path("/v/q/s.db")]
    assert source_names(same_folder) == ["w/r/one.db", "w/r/two.db", "q"]
    assert source_names([Path("/top.db")]) == ["top.db"]  # a store in the root folder


def test_an_index_is_not_a_name(twins: tuple[Path, Path]) -> None:
    """An old link's number is refused (it named a directory by its place in the command line,
    which a link must not depend on); the episode page then opens through its experiment `x`."""
    sources = Sources(list(twins))
    with pytest.raises(StratagemError, match="unknown source '0': expected one of 'a/results'"):
        sources.version("0")


# -- the API and the export ------------------------------------------------------------------------


def test_the_api_takes_a_name_holding_a_slash_in_every_route(twins: tuple[Path, Path]) -> None:
    exp = _experiment(twins[1])
    app = build_app(list(twins))
    try:
        client = TestClient(app, base_url="http://127.0.0.1")
        name = quote(B, safe="")  # as the pages put it in a path: one segment
        base = f"/api/experiments/{name}/{exp.encode().hex()}"
        assert [c["episodes"] for c in client.get(f"{base}/cells").json()] == [3, 3]
        listed = client.get(f"{base}/episodes").json()
        assert listed["total"] == 6
        episode = listed["items"][0]["id"]
        hexed = episode.encode().hex()
        shown = client.get(f"/api/episodes/{name}/{hexed}").json()
        assert shown["experiment"] == exp
        assert client.get(f"/api/version/{name}").status_code == 200
        assert client.get(f"/api/pairs/{name}/{hexed}").status_code == 200
        assert client.get(f"/api/download-episode/{name}/{hexed}.jsonl").status_code == 200
        # `a=`/`b=` carry the name URL-encoded: its first "/" ends it.
        both = {"a": f"{name}/{episode}", "b": f"{name}/{episode}"}
        assert client.get("/api/compare", params=both).json()["first_difference"] is None
        refs = {"a": f"{quote(A, safe='')}/{_experiment(twins[0])}", "b": f"{name}/{exp}"}
        assert client.get("/api/diff", params=refs).json()["b"] == {"source": B, "experiment": exp}
        missing = client.get(f"/api/experiments/0/{exp.encode().hex()}/cells")
        assert missing.status_code == 404 and "unknown source '0'" in missing.json()["error"]
    finally:
        app.state.data.close()


def test_the_export_uses_the_same_names(twins: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "site"
    export_site(Sources(list(reversed(twins))), out)
    listed = json.loads((out / "data/sources.js").read_text().split("=", 2)[2].rstrip()[:-1])
    assert {s["id"] for s in listed} == {A, B}
    exp = _experiment(twins[1])
    assert (out / experiment_dir(B, exp) / "cells.js").is_file()
    episode = Sources([twins[1]]).episodes("results", exp)["items"][0]["id"]
    # The live server's link opens the same episode from the export's files.
    index = (out / "index.html").as_uri()
    dom = rendered(f"{index}#/e/{quote(B, safe='')}/{quote(episode, safe='')}?x={exp}")
    assert f"Episode {episode}" in dom and "Error" not in dom
    dom = rendered(f"{index}#/x/{quote(B, safe='')}/{exp}")
    assert "Episodes (6)" in dom and "Error" not in dom


def test_a_link_from_view_a_b_opens_the_same_episode_in_view_b_a(
    chromium: Any, twins: tuple[Path, Path]
) -> None:
    from selenium.webdriver.common.by import By

    driver, exp = chromium, _experiment(twins[1])
    with serving(*twins) as url:
        driver.get(f"{url}#/x/{quote(B, safe='')}/{exp}")
        link = _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "main a[href^='#/e/']"))
        episode = link[0].text
        link[0].click()
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".timeline .counter"))
        copied = driver.current_url.partition("#")[2]
        assert copied.startswith(f"/e/{quote(B, safe='')}/")
    with serving(*reversed(twins)) as url:
        driver.get(f"{url}#{copied}")
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".timeline .counter"))
        heading = driver.find_element(By.TAG_NAME, "h1").text
        assert heading == f"Episode {episode}"
        assert exp in driver.find_element(By.ID, "crumbs").text
        assert driver.current_url.partition("#")[2].startswith(f"/e/{quote(B, safe='')}/")


# -- the cells follow the list's filters (issue 36 item 7) ----------------------------------------


FILTERED: list[tuple[dict[str, str], str | None]] = [
    ({"outcome": "seat 1 won"}, None),
    ({"status": "finished", "invalid": "0"}, None),
    ({"seat_kind": "strategy"}, "defection"),
    ({"status": "failed"}, None),
]


@pytest.mark.parametrize(("filters", "query"), FILTERED)
def test_each_cell_counts_the_episodes_the_list_keeps(
    twins: tuple[Path, Path], filters: dict[str, str], query: str | None
) -> None:
    sources, exp = Sources([twins[1]]), _experiment(twins[1])
    rows = sources.cells("results", exp, filters=filters, query=query)
    listed = sources.episodes("results", exp, filters=filters, query=query, per_page=500)
    finished = [i for i in listed["items"] if i["status"] == "finished"]
    assert sum(r["episodes"] for r in rows) == len(finished)
    for row in rows:
        opened = sources.episodes("results", exp, filters={**filters, "cell": row["cell"]},
                                  query=query)  # fmt: skip
        assert row["episodes"] == opened["total"] > 0


def test_a_filter_changes_the_counts_and_the_means(twins: tuple[Path, Path]) -> None:
    sources, exp = Sources([twins[1]]), _experiment(twins[1])
    every = sources.cells("results", exp)
    won = sources.cells("results", exp, filters={"outcome": "seat 1 won"})
    assert sum(r["episodes"] for r in won) < sum(r["episodes"] for r in every)
    # game, model, agent and cell pick rows on the page: the counts do not follow them.
    assert sources.cells("results", exp, filters={"model": "nobody", "cell": "x"}) == every


def test_the_cells_table_follows_the_list_s_filters_in_the_browser(
    chromium: Any, twins: tuple[Path, Path], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver, exp = chromium, _experiment(twins[1])
    want = Sources([twins[1]]).cells("results", exp, filters={"outcome": "seat 1 won"})
    grid = ".grid"
    with serving(twins[1]) as url:
        driver.get(f"{url}#/x/results/{exp}")
        _wait(driver, lambda d: _column(d, grid, 5) == ["3", "3"])
        form = driver.find_element(By.CSS_SELECTOR, "form.filters")
        Select(form.find_element(By.NAME, "outcome")).select_by_value("seat 1 won")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "p.cells-counted"))
        note = driver.find_element(By.CSS_SELECTOR, "p.cells-counted").text
        assert (
            note
            == "Counted over the finished episodes the list's filters keep (outcome seat 1 won)."
        )
        counts = _column(driver, grid, 5)
        assert counts == [str(r["episodes"]) for r in want]
        # A row's count is the length of the list it opens.
        driver.find_elements(By.CSS_SELECTOR, f"{grid} a.cell-link")[0].click()
        heading = f"Episodes ({counts[0]})"
        _wait(driver, lambda d: heading in d.find_element(By.ID, "main").text)
        assert "outcome=seat" in driver.current_url
    out = tmp_path / "site"
    export_site(Sources([twins[1]]), out)
    dom = rendered(f"{(out / 'index.html').as_uri()}#/x/results/{exp}?outcome=seat%201%20won")
    assert "This export counts every finished episode in its cells" in dom
