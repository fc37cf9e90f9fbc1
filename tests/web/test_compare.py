"""Comparing two episodes (issue 25 item 6): steps aligned, the first differing step marked,
and the pairs offered (the same episode id in two directories, the same cell under two models
or on a game and its variant), over real stores written by scripted runs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from support.browser import chromium, screenshot, serving

from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request
from stratagem.web.data import Perspective, Sources
from stratagem.web.data.compare import align
from stratagem.web.server import build_app

__all__ = ["chromium"]  # the session's browser, a fixture

NAME = "compare-test"
EVERYTHING = Perspective.parse("all")


def _run(
    folder: Path,
    flip_at: int | None,
    games: list[str],
    models: list[str],
    agents: tuple[str, ...] = ("plain",),
) -> Path:
    """A PD run against TitForTat whose scripted model cooperates, except that it defects on
    its `flip_at`-th call (counted from 0) when set: two runs differ in that one reply."""
    calls = [0]

    def reply(request: Request, sample: int) -> str:
        k = calls[0]
        calls[0] += 1
        return "defection" if k == flip_at else "cooperation"

    register_script(NAME, reply)
    try:
        config = config_from_dict(
            {
                "name": "cmp",
                "output": str(folder),
                "models": [{"model": m} for m in models],
                "agents": [{"name": a, "kind": "plain"} for a in agents],
                "games": games,
                "opponents": ["TitForTat"],
                "rounds": [4],
                "seeds": [0],
            },
            "test",
        )
        summary = asyncio.run(Runner(config, show_progress=False).run())
        assert summary.failed == 0, summary.errors
    finally:
        _REGISTERED.pop(NAME, None)
    return folder


@pytest.fixture(scope="module")
def before_after(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same one-episode experiment twice: the second run defects in round 3 (index 2)."""
    root = tmp_path_factory.mktemp("cmp")
    model = [f"scripted/{NAME}"]
    return _run(root / "before", None, ["pd"], model), _run(root / "after", 2, ["pd"], model)


@pytest.fixture
def sources(before_after: tuple[Path, Path]) -> Iterator[Sources]:
    found = Sources(list(before_after))
    yield found
    found.close()


def _only_episode(folder: Path) -> str:
    with ResultStore(folder / STORE_FILE, read_only=True) as store:
        (record,) = store.episodes()
        return record.id


def test_the_first_step_where_an_action_differs_is_marked(
    sources: Sources, before_after: tuple[Path, Path]
) -> None:
    episode = _only_episode(before_after[0])
    assert episode == _only_episode(before_after[1])  # the same id in both directories
    aligned = align(
        sources.episode("before", episode, EVERYTHING),
        sources.episode("after", episode, EVERYTHING),
    )
    rows = aligned["steps"]
    assert len(rows) == 4
    c, d = "cooperation", "defection"
    assert [r["a"]["0"] for r in rows] == [c, c, c, c]
    assert [r["b"]["0"] for r in rows] == [c, c, d, c]
    assert [r["b"]["1"] for r in rows] == [c, c, c, d]  # TitForTat answers
    assert aligned["first_difference"] == 2
    assert [r["same"] for r in rows] == [True, True, False, False]
    same = sources.episode("before", episode, EVERYTHING)
    assert align(same, same)["first_difference"] is None


def test_the_same_episode_id_in_two_directories_is_offered(
    sources: Sources, before_after: tuple[Path, Path]
) -> None:
    (pair,) = sources.pairs("before", _only_episode(before_after[0]))
    assert pair["kind"] == "same-id"
    assert (pair["a"]["source"], pair["b"]["source"]) == ("before", "after")
    assert pair["a"]["episode"] == pair["b"]["episode"]


def test_twins_within_an_experiment_are_offered(tmp_path: Path) -> None:
    """Two models on the PD and its variant pd-alt: each cell pairs with its other model and
    with its variant twin; episodes differing in both are no pair."""
    folder = _run(
        tmp_path / "grid", None, ["pd", "pd-alt"], [f"scripted/{NAME}", "scripted/defect"]
    )
    found = Sources([folder])
    (experiment,) = [e["id"] for e in found.experiments()]
    got = [
        p for e in found.episodes("grid", experiment)["items"] for p in found.pairs("grid", e["id"])
    ]
    kinds = sorted(p["kind"] for p in got)
    # Each pair from each of its two episodes.
    assert kinds == ["model"] * 4 + ["variant"] * 4
    for p in got:
        a, b = p["a"], p["b"]
        if p["kind"] == "model":
            assert a["game"] == b["game"] and a["models"] != b["models"]
        else:
            assert {a["game"], b["game"]} == {"pd", "pd-alt"} and a["models"] == b["models"]


def test_the_same_cell_under_two_agents_is_offered(tmp_path: Path) -> None:
    folder = _run(tmp_path / "agents", None, ["pd"], [f"scripted/{NAME}"], ("plain", "other"))
    found = Sources([folder])
    (experiment,) = [e["id"] for e in found.experiments()]
    first = found.episodes("agents", experiment)["items"][0]["id"]
    (pair,) = found.pairs("agents", first)
    assert pair["kind"] == "agent" and pair["a"]["episode"] == first
    assert {pair["a"]["agents"][0], pair["b"]["agents"][0]} == {"plain", "other"}


def test_the_api_compares_and_lists_pairs(before_after: tuple[Path, Path]) -> None:
    episode = _only_episode(before_after[0])
    app = build_app(list(before_after))
    try:
        client = TestClient(app, base_url="http://127.0.0.1")
        got = client.get(f"/api/compare?a=before/{episode}&b=after/{episode}&perspective=seat:1")
        assert got.status_code == 200
        body: dict[str, Any] = got.json()
        # Seat 1 sees seat 0's defection in the round's result, not in its hidden decision.
        assert body["first_difference"] == 2
        assert all(set(row["a"]) == {"0", "1"} for row in body["steps"])
        assert all(e["player"] == 1 for s in body["b"]["steps"] for e in s["events"]
                   if e["kind"] == "decision")  # fmt: skip
        assert body["a"]["perspective"] == body["b"]["perspective"] == "seat:1"
        assert body["a"]["seed"] is None and body["b"]["seed"] is None
        bad = client.get(f"/api/compare?a=before&b=after/{episode}")
        assert bad.status_code == 400 and "'a' must be <source>/<episode>" in bad.json()["error"]
        assert client.get(f"/api/compare?a=before/nope&b=after/{episode}").status_code == 404
        offered = client.get(f"/api/pairs/before/{episode.encode().hex()}").json()
        assert [p["kind"] for p in offered["pairs"]] == ["same-id"]
        assert offered["left_out"] == 0
        assert client.get(f"/api/pairs/before/{b'nope'.hex()}").status_code == 404
    finally:
        app.state.data.close()


def test_the_compare_page_marks_the_first_difference(
    chromium: Any, before_after: tuple[Path, Path]
) -> None:
    """Episode page -> "compare with..." -> the offered pair -> step 3 marked, in Chromium."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    episode = _only_episode(before_after[0])
    driver = chromium
    with serving(*before_after) as url:
        driver.get(f"{url}#/e/before/{episode}")
        wait = WebDriverWait(driver, 20)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "a.compare-link"))[0].click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "a.pair"))[0].click()
        marked = wait.until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "table.compare tr.first-diff")
        )
        assert len(marked) == 1
        assert marked[0].text.startswith("3 ◆ first difference")  # round 3
        assert "seat 0: defection" in marked[0].text
        note = driver.find_element(By.CSS_SELECTOR, ".first-note").text
        assert note == "First difference at round 3."
        rows = driver.find_elements(By.CSS_SELECTOR, "table.compare tbody tr")
        assert len(rows) == 4
        screenshot(driver, "compare")
        csp = [e for e in driver.get_log("browser") if "Content Security Policy" in e["message"]]
        assert csp == []
