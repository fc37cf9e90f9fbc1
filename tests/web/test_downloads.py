"""Downloads (issue 36 item 9): a filtered episode list as a table of `stratagem.open`, the cells
table and a diff as CSV, JSONL and Parquet, and an episode as JSONL, from the live server and
the static export, over the real stores of test_cells_table's scripted runs."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from starlette.testclient import TestClient
from support.browser import chromium, serving
from support.named import only
from test_cells_table import _cell, _experiment, _wait, changed, many

from stratagem.analysis.frames import StoreFrames, open_store
from stratagem.experiments.episode_export import export_episodes
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.web.data import Sources, downloads
from stratagem.web.export import experiment_dir, export_site
from stratagem.web.server import build_app

__all__ = ["changed", "chromium", "many"]  # fixtures

LOCAL = "http://127.0.0.1"


@pytest.fixture(scope="module")
def client(many: Path) -> Any:
    app = build_app([many])
    try:
        yield TestClient(app, base_url=LOCAL)
    finally:
        app.state.data.close()


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows with every missing value as None (Parquet reads text back as Arrow's)."""
    return [{k: None if pd.isna(v) else v for k, v in r.items()} for r in frame.to_dict("records")]


def _path(many: Path, name: str) -> str:
    return f"/api/download/out/{_experiment(many).encode().hex()}/{name}"


def test_a_filtered_list_downloads_as_the_tables_of_stratagem_open(client: Any, many: Path) -> None:
    cell = _cell(many, "beta", 5)
    exp = _experiment(many)
    ids = [i["id"] for i in Sources([many]).episodes("out", exp, filters={"cell": cell})["items"]]
    with StoreFrames(open_store(many), exp) as frames:
        want = frames.rounds[frames.rounds["episode_id"].isin(ids)].reset_index(drop=True)
    assert len(want) == 5 * 2  # five rounds, two seats
    got = client.get(_path(many, "rounds.parquet"), params={"cell": cell})
    assert got.status_code == 200 and "attachment" in got.headers["content-disposition"]
    assert got.headers["content-disposition"].endswith('-rounds.parquet"')
    assert _rows(pd.read_parquet(io.BytesIO(got.content))) == _rows(want)
    csv = client.get(_path(many, "rounds.csv"), params={"cell": cell})
    assert csv.headers["content-type"].startswith("text/csv")
    assert pd.read_csv(io.StringIO(csv.text))["episode_id"].tolist() == want["episode_id"].tolist()
    lines = client.get(_path(many, "episodes.jsonl"), params={"model": "alpha"}).text.splitlines()
    assert len(lines) == 26 and {json.loads(x)["episode_id"] for x in lines} <= {
        i for i in StoreFrames(open_store(many), exp).episodes["episode_id"]
    }
    cells = client.get(_path(many, "cells.csv"), params={"model": "beta"}).text.splitlines()
    assert len(cells) == 1 + 26 and "score_seat_1" in cells[0]


def test_bad_downloads_are_one_line_400s(
    client: Any, many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, params in (("rounds.xlsx", {}), ("nothing.csv", {}), ("rounds.csv", {"cell": "x"})):
        got = client.get(_path(many, name), params=params)
        assert got.status_code == 400 and "\n" not in got.json()["error"], name
    monkeypatch.setattr(downloads, "MAX_ROWS", 10)
    got = client.get(_path(many, "rounds.csv"))
    assert got.status_code == 400 and "more than 10" in got.json()["error"]


def test_csv_cells_cannot_be_formulas() -> None:
    frame = pd.DataFrame({"text": ["=1+1", "+1", "-cmd", "@SUM(A1)", "\t=x", "plain", None],
                          "number": [-1.5, 2, -3, 4, 5, 6, 7]})  # fmt: skip
    got = pd.read_csv(io.BytesIO(downloads.encode(frame, "csv")), keep_default_na=False)
    assert got["text"].tolist() == ["'=1+1", "'+1", "'-cmd", "'@SUM(A1)", "'\t=x", "plain", ""]
    assert got["number"].tolist() == [-1.5, 2, -3, 4, 5, 6, 7]
    rows = [json.loads(x) for x in downloads.encode(frame, "jsonl").decode().splitlines()]
    assert rows[0]["text"] == "=1+1" and rows[-1]["text"] is None  # JSONL holds values as they are


def test_an_episode_downloads_in_the_episode_format(client: Any, many: Path) -> None:
    exp = _experiment(many)
    episode = Sources([many]).episodes("out", exp)["items"][3]["id"]
    got = client.get(f"/api/download-episode/out/{episode.encode().hex()}.jsonl")
    out = io.StringIO()
    with ResultStore(many / STORE_FILE, read_only=True) as store:
        export_episodes(store, out, episode_ids=[episode])
    assert got.status_code == 200 and got.text == out.getvalue()
    assert client.get(f"/api/download-episode/out/{b'nope'.hex()}.jsonl").status_code == 404


def test_a_diff_downloads_with_its_noise_filter(changed: tuple[Path, Path]) -> None:
    a, b = ("a", _experiment(changed[0])), ("b", _experiment(changed[1]))
    app = build_app(list(changed))
    try:
        client = TestClient(app, base_url=LOCAL)
        params = {"a": f"{a[0]}/{a[1]}", "b": f"{b[0]}/{b[1]}"}
        every = pd.read_csv(io.StringIO(client.get("/api/download-diff/csv", params=params).text))
        beyond = client.get("/api/download-diff/csv", params={**params, "noise": "1"})
        kept = pd.read_csv(io.StringIO(beyond.text))
    finally:
        app.state.data.close()
    assert set(every["model"]) == {"same", "changed"} and set(kept["model"]) == {"changed"}
    assert kept["beyond_noise"].any() and "noise_by" in kept.columns


def test_the_export_writes_the_downloads_beside_its_data(many: Path, tmp_path: Path) -> None:
    sources, exp = Sources([many]), _experiment(many)
    out = tmp_path / "site"
    export_site(sources, out)
    folder = out / experiment_dir("out", exp) / "download"
    _, live = downloads.experiment_file(sources, "out", exp, "cells", "csv", {})
    assert (folder / "cells.csv").read_bytes() == live
    with StoreFrames(open_store(many), exp) as frames:
        assert _rows(pd.read_parquet(folder / "seats.parquet")) == _rows(frames.seats)
    episode = sources.episodes(only(sources), exp)["items"][0]["id"]
    line = (out / f"data/e/{b'out'.hex()}/{episode.encode().hex()}/episode.jsonl").read_text()
    assert json.loads(line)["id"] == episode
    seat = tmp_path / "seat"
    from stratagem.web.data import Perspective

    export_site(sources, seat, perspective=Perspective(1))
    assert not (seat / experiment_dir("out", exp) / "download").exists()


def test_the_pages_link_the_downloads_of_what_they_show(chromium: Any, many: Path) -> None:
    """The list's link carries its filters; fetched from the page, it holds the listed rows."""
    from selenium.webdriver.common.by import By

    driver, exp = chromium, _experiment(many)
    with serving(many) as url:
        driver.get(f"{url}#/x/out/{exp}?model=beta&status=finished")
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".list-downloads a.download"))
        link = driver.find_element(By.CSS_SELECTOR, ".list-downloads a.download")
        assert "model=beta" in link.get_attribute("href") and link.text == "CSV"
        text = driver.execute_async_script(
            "fetch(arguments[0]).then(r => r.text()).then(arguments[1])", link.get_attribute("href")
        )
        assert len(text.strip().splitlines()) == 1 + 26
        cells = driver.find_element(By.CSS_SELECTOR, "p.downloads a.download")
        assert "/cells.csv?model=beta" in cells.get_attribute("href")
        driver.find_element(By.CSS_SELECTOR, "main > table tbody tr td a").click()
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "a.episode-download"))
        href = driver.find_element(By.CSS_SELECTOR, "a.episode-download").get_attribute("href")
        assert "/api/download-episode/out/" in href
