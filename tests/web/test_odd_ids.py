"""Experiments whose ids hold what a URL path reads as syntax (issue 33 item 7): a `/`, `..`,
`%`, `?`, `#`, non-ASCII letters. The live server's API finds each one's cells, episodes and
pairs, and the live pages (real `stratagem view`, headless Chromium) open each experiment and its
episode from the experiments page's links."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from support.browser import chromium, serving
from support.scripted_run import run_scripted

from stratagem.web.server import build_app

__all__ = ["chromium"]  # the session's browser, a fixture

NAMES = ("exp/x", "..", ".", "a/../b", "100%", "q?x=1#y", "ünï/çødé", "%2F")
WAIT_S = 20


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One results directory holding an experiment of one PD episode under each of `NAMES`."""
    out = tmp_path_factory.mktemp("odd") / "out"
    for seed, name in enumerate(NAMES):  # a seed each: an episode's id is its spec's hash
        done = run_scripted(out, name, lambda r, s: "", models=[{"model": "scripted/first"}],
                            rounds=[1], seeds=[seed])  # fmt: skip
        assert done.finished == 1, done.errors
    yield out


def test_the_api_answers_every_odd_id(odd: Path) -> None:
    app = build_app([odd])
    try:
        client = TestClient(app, base_url="http://127.0.0.1")
        listed = {x["id"]: x for x in client.get("/api/experiments").json()}
        assert set(listed) == set(NAMES)
        for name in NAMES:
            ref = name.encode().hex()  # how the pages put an id in a path (source.js `id`)
            cells = client.get(f"/api/experiments/out/{ref}/cells")
            assert cells.status_code == 200, (name, cells.text)
            assert [c["episodes"] for c in cells.json()] == [1]
            episodes = client.get(f"/api/experiments/out/{ref}/episodes")
            assert episodes.status_code == 200, (name, episodes.text)
            (item,) = episodes.json()["items"]
            episode = client.get(f"/api/episodes/out/{item['id'].encode().hex()}")
            assert episode.status_code == 200 and episode.json()["experiment"] == name
            pairs = client.get(f"/api/pairs/out/{item['id'].encode().hex()}")
            assert pairs.status_code == 200, (name, pairs.text)
        # An id that is not hex (an id as it was given before) is one line: it is not found.
        missing = client.get("/api/experiments/out/exp%2Fx/cells")
        assert missing.status_code in (400, 404) and set(missing.json()) == {"error"}
    finally:
        app.state.data.close()


def _wait(driver: Any, check: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(lambda d: check(d))


def test_the_pages_open_every_odd_experiment_and_its_episode(chromium: Any, odd: Path) -> None:
    from selenium.webdriver.common.by import By

    def h1(d: Any) -> str:
        return str(d.execute_script("return document.querySelector('h1')?.textContent || ''"))

    def text(d: Any) -> str:
        return str(d.find_element(By.ID, "main").text)

    with serving(odd) as url:
        for name in NAMES:
            chromium.get(url)
            _wait(chromium, lambda d: h1(d) == "Experiments")
            links = chromium.find_elements(By.CSS_SELECTOR, "main table a")
            (link,) = [a for a in links if a.text == name]
            link.click()
            _wait(chromium, lambda d, n=name: h1(d) == n)
            _wait(chromium, lambda d: "Episodes (1)" in text(d))
            assert "Error" not in text(chromium)
            chromium.find_element(By.CSS_SELECTOR, 'main table tbody a[href^="#/e/"]').click()
            _wait(chromium, lambda d: h1(d).startswith("Episode "))
            _wait(chromium, lambda d: "step 1 of" in text(d))
            crumbs = chromium.find_element(By.ID, "crumbs").text
            assert name in crumbs, (name, crumbs)
            chromium.find_element(By.CSS_SELECTOR, "a.compare-link").click()  # the pairs' page
            _wait(chromium, lambda d: h1(d).startswith("Compare episode "))
            assert "Error" not in text(chromium)
