"""The cells table you can work with and the diff's likewise (issue 36 item 7), over real stores of
scripted runs: 52 cells (two model ids x 26 round counts) to page, sort and filter, each row
opening its episodes through the `cell` filter, live and in the static export; a diff whose one
model changed between A and B, so some cells differ beyond the noise and some do not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from support.browser import chromium, rendered, serving
from support.named import only
from support.scripted_run import run_scripted

from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request
from stratagem.web.data import Sources
from stratagem.web.data.listing import BadQuery
from stratagem.web.export import experiment_dir, export_site
from stratagem.web.server import build_app

__all__ = ["chromium"]  # the session's browser, a fixture

ROUNDS = list(range(1, 27))
WAIT_S = 20


def _experiment(folder: Path) -> str:
    with ResultStore(folder / STORE_FILE, read_only=True) as store:
        (exp,) = store.experiments()
        return exp.id


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """52 cells: model ids "alpha" and "beta" (two scripts) x rounds 1-26 against TitForTat."""
    out = tmp_path_factory.mktemp("cells") / "out"
    cooperate = lambda request, sample: request.choices[0]  # noqa: E731
    register_script("cells-beta", cooperate)
    models = [{"model": f"scripted/cells-{i}", "id": i} for i in ("alpha", "beta")]
    try:
        summary = run_scripted(out, "cells-alpha", cooperate, models=models, rounds=ROUNDS)
    finally:
        _REGISTERED.pop("cells-beta", None)
    assert summary.finished == 52, summary.errors
    return out


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A and B: model "same" always cooperates in both; model "changed" cooperates in A and
    defects on every other call in B. Seeds 0-2, two repetitions."""
    root = tmp_path_factory.mktemp("noise")
    calls = [0]

    def sometimes(request: Request, sample: int) -> str:
        calls[0] += 1
        return request.choices[calls[0] % 2]

    cooperate = lambda request, sample: request.choices[0]  # noqa: E731
    register_script("noise-other", sometimes)
    register_script("noise-coop", cooperate)
    try:
        out = []
        for side, script in (("a", "noise-coop"), ("b", "noise-other")):
            models = [{"model": "scripted/noise-same", "id": "same"},
                      {"model": f"scripted/{script}", "id": "changed"}]  # fmt: skip
            summary = run_scripted(root / side, "noise-same", cooperate, models=models,
                                   rounds=[4], seeds=[0, 1, 2], repetitions=2)  # fmt: skip
            assert summary.finished == 12, summary.errors
            out.append(root / side)
    finally:
        _REGISTERED.pop("noise-other", None)
        _REGISTERED.pop("noise-coop", None)
    return out[0], out[1]


# -- the data layer ----------------------------------------------------------------------------


def test_the_cell_filter_lists_exactly_a_cells_episodes(many: Path) -> None:
    sources = Sources([many])
    exp = _experiment(many)
    cells = sources.cells(only(sources), exp)
    assert len(cells) == 52 and len({c["cell"] for c in cells}) == 52
    cell = next(c for c in cells if c["model"] == "beta" and c["rounds"] == 7)
    got = sources.episodes(only(sources), exp, filters={"cell": cell["cell"]})
    assert got["total"] == cell["episodes"] == 1
    with ResultStore(many / STORE_FILE, read_only=True) as store:
        (record,) = [store.episode(i["id"]) for i in got["items"]]
    assert record is not None and record.spec["rounds"] == 7
    assert record.spec["model_id"] == "beta"
    with pytest.raises(BadQuery, match="filter cell="):
        sources.episodes(only(sources), exp, filters={"cell": '["nobody"]'})
    app = build_app([many])
    try:
        client = TestClient(app, base_url="http://127.0.0.1")
        hexed = exp.encode().hex()
        answer = client.get(f"/api/experiments/out/{hexed}/episodes", params={"cell": "[1]"})
    finally:
        app.state.data.close()
    assert answer.status_code == 400 and "filter cell=" in answer.json()["error"]


def test_the_diff_says_which_differences_are_beyond_the_noise(
    changed: tuple[Path, Path], magic_results: Path
) -> None:
    a, b = (("a", _experiment(changed[0])), ("b", _experiment(changed[1])))
    got = Sources(list(changed)).diff(a, b)
    assert got["noise"] == []  # no replicate cells: the interval decides
    by_model = {c["model"]: c for c in got["cells"]}
    assert set(by_model) == {"same", "changed"}
    for m in by_model["same"]["metrics"]:
        assert (m["noise_by"], m["beyond_noise"]) == ("interval", False)
    coop = next(m for m in by_model["changed"]["metrics"] if m["metric"] == "cooperation")
    assert coop["diff"] == pytest.approx(-0.5) and coop["ci_high"] < 0 and coop["beyond_noise"]
    # With replicate cells (MAgIC, `replicates: 1`), the floor decides for seat 0's metrics.
    (exp,) = [x["id"] for x in Sources([magic_results]).experiments()]
    sources = Sources([magic_results])
    same = sources.diff(("out", exp), ("out", exp))
    floors = {n["metric"]: n["floor"] for n in same["noise"]}
    assert "score seat 0" in floors and "noise floor (" in same["noise"][0]["text"]
    for cell in same["cells"]:
        for m in cell["metrics"]:
            floored = m["metric"] in floors
            assert m["noise_by"] == ("floor" if floored else "interval")
            assert m["floor"] == (floors[m["metric"]] if floored else None)
            assert m["beyond_noise"] is False  # an experiment against itself


# -- the browser -------------------------------------------------------------------------------


def _wait(driver: Any, check: Any) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    stale = (StaleElementReferenceException,)
    return WebDriverWait(driver, WAIT_S, ignored_exceptions=stale).until(lambda d: check(d))


def _column(driver: Any, grid: str, k: int) -> list[str]:
    script = (
        f"return [...document.querySelectorAll('{grid} tbody tr')]"
        f".map(r => r.children[{k}].textContent)"
    )
    values: list[str] = driver.execute_script(script)
    return values


def _click_heading(driver: Any, grid: str, label: str) -> None:
    from selenium.webdriver.common.by import By

    for button in driver.find_elements(By.CSS_SELECTOR, f"{grid} th button.sort"):
        if button.text.startswith(label):
            button.click()
            return
    raise AssertionError(f"no heading {label}")


def test_the_cells_table_pages_sorts_filters_and_opens_a_cells_episodes(
    chromium: Any, many: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver, exp = chromium, _experiment(many)
    grid = ".grid"
    with serving(many) as url:
        driver.get(f"{url}#/x/out/{exp}")
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f"{grid} tbody tr"))
        assert len(_column(driver, grid, 0)) == 50  # paged
        assert "page 1 of 2" in driver.find_element(By.CSS_SELECTOR, ".grid-pager").text
        _click_heading(driver, grid, "Rounds")
        _click_heading(driver, grid, "Rounds")  # again: descending
        _wait(driver, lambda d: _column(d, grid, 4)[:3] == ["26", "26", "25"])
        heading = driver.find_element(By.CSS_SELECTOR, f"{grid} th[aria-sort=descending]")
        assert heading.text.startswith("Rounds")
        driver.find_element(By.CSS_SELECTOR, ".grid-pager button:last-child").click()
        _wait(driver, lambda d: _column(d, grid, 4) == ["1", "1"])
        # The list's model filter filters the cells too.
        models = driver.find_element(By.CSS_SELECTOR, "form.filters select[name=model]")
        Select(models).select_by_value("beta")
        driver.find_element(By.CSS_SELECTOR, "form.filters button[type=submit]").click()
        _wait(driver, lambda d: "26 of 52 cells" in d.find_element(By.ID, "main").text)
        assert set(_column(driver, grid, 0)) == {"beta"}
        # A row opens its cell's episodes: the list filtered to the cell, the row marked.
        row = next(
            r for r in driver.find_elements(By.CSS_SELECTOR, f"{grid} tbody tr")
            if r.find_elements(By.TAG_NAME, "td")[4].text == "9"
        )  # fmt: skip
        row.find_element(By.CSS_SELECTOR, "a.cell-link").click()
        _wait(driver, lambda d: "Episodes (1)" in d.find_element(By.ID, "main").text)
        assert "cell=" in driver.current_url and "model=beta" in driver.current_url
        chosen = driver.find_element(By.CSS_SELECTOR, "tr.cell-row.chosen")
        tds = [td.text for td in chosen.find_elements(By.TAG_NAME, "td")]
        assert (tds[0], tds[4]) == ("beta", "9")
        listed = driver.find_elements(By.CSS_SELECTOR, "main > table tbody tr td:first-child a")
        want = Sources([many]).episodes("out", exp, filters={"cell": _cell(many, "beta", 9)})
        assert [a.text for a in listed] == [i["id"] for i in want["items"]]


def _cell(folder: Path, model: str, rounds: int) -> str:
    (exp,) = [x["id"] for x in Sources([folder]).experiments()]
    cells = Sources([folder]).cells(folder.name, exp)
    return str(next(c["cell"] for c in cells if c["model"] == model and c["rounds"] == rounds))


def test_a_cells_episodes_open_in_the_static_export(many: Path, tmp_path: Path) -> None:
    sources, exp = Sources([many]), _experiment(many)
    out = tmp_path / "site"
    export_site(sources, out)
    cell = _cell(many, "alpha", 3)
    text = (out / experiment_dir("out", exp) / "episodes.js").read_text()
    data = json.loads(text.split("=", 2)[2].rstrip().rstrip(";"))
    live = sources.episodes(only(sources), exp, filters={"cell": cell})["items"]
    assert [data["items"][k]["id"] for k in data["index"]["cell"][cell]] == [i["id"] for i in live]
    from urllib.parse import quote

    dom = rendered(f"{(out / 'index.html').as_uri()}#/x/out/{exp}?cell={quote(cell)}")
    assert "Episodes (1)" in dom and "cell-row chosen" in dom and "Error" not in dom


def test_the_diff_shows_only_cells_beyond_the_noise(
    chromium: Any, changed: tuple[Path, Path]
) -> None:
    from selenium.webdriver.common.by import By

    driver = chromium
    ea, eb = _experiment(changed[0]), _experiment(changed[1])
    want = Sources(list(changed)).diff(("a", ea), ("b", eb))
    with serving(*changed) as url:
        driver.get(f"{url}#/diff/a/{ea}/b/{eb}")
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".grid tbody tr"))
        assert "the paired interval excludes 0" in driver.find_element(By.ID, "main").text
        every = _column(driver, ".grid", 0)
        assert {c.split(" · ")[0] for c in every} == {"same", "changed"}
        driver.find_element(By.CSS_SELECTOR, "form.diff-filters input[name=noise]").click()
        driver.find_element(By.CSS_SELECTOR, "form.diff-filters button[type=submit]").click()
        _wait(driver, lambda d: "noise=1" in d.current_url)
        _wait(driver, lambda d: "1 of 2 shared cells" in d.find_element(By.ID, "main").text)
        shown = _column(driver, ".grid", 0)
        changed_cell = next(c for c in want["cells"] if c["model"] == "changed")
        assert len(shown) == len(changed_cell["metrics"])
        assert {c.split(" · ")[0] for c in shown} == {"changed"}
        beyond = driver.find_elements(By.CSS_SELECTOR, ".grid tr.beyond")
        assert len(beyond) == sum(m["beyond_noise"] for m in changed_cell["metrics"]) > 0
        # Each row opens the cell's episodes in A and in B.
        links = driver.find_elements(By.CSS_SELECTOR, ".grid a.diff-cell-link")
        links[1].click()
        _wait(driver, lambda d: "Episodes (6)" in d.find_element(By.ID, "main").text)
        assert f"/x/b/{eb}" in driver.current_url.replace("%2F", "/")
