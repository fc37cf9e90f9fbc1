"""What applies to a cell (issue 36 item 5): the cells data says which metrics apply to its game
(cooperation in the Prisoner's Dilemma, none in Rock-Paper-Scissors) and which outcomes its
episodes can be filtered by, and the episode list offers only those ("spy won" in Chameleon,
never in a PD experiment)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import chromium, serving
from support.named import only
from support.scripted_run import run_scripted
from test_browser import heading, wait

from stratagem.web.data import Sources

__all__ = ["chromium"]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Prisoner's Dilemma and Rock-Paper-Scissors (`eq1`) against tft-br."""
    out = tmp_path_factory.mktemp("applies") / "out"
    reply = lambda request, sample: request.choices[0]  # noqa: E731
    summary = run_scripted(
        out, "matrix", reply, games=["pd", "eq1"], opponents=["tft-br"], rounds=[2]
    )
    assert (summary.finished, summary.failed) == (2, 0), summary.errors
    return out


def cells(folder: Path) -> dict[str, dict[str, Any]]:
    sources = Sources([folder])
    (x,) = sources.experiments()
    return {c["game"]: c for c in sources.cells(only(sources), x["id"])}


def test_cooperation_and_the_spy_s_outcomes_apply_only_where_defined(
    matrix: Path, magic_results: Path
) -> None:
    by_game = cells(matrix)
    pd, rps = by_game["pd"], by_game["eq1"]
    assert "cooperation" in pd["metrics"] and "cooperation" not in rps["metrics"]
    # In one experiment with both, the PD's cell has a cooperation rate and the RPS cell none:
    # not in the table, nor its charts (by cell and over rounds), nor a diff.
    assert pd["cooperation"] is not None and rps["cooperation"] is None
    sources = Sources([matrix])
    (x,) = sources.experiments()
    charts = {c["game"]: c for c in sources.charts(only(sources), x["id"])["cells"]}
    assert charts["pd"]["metrics"]["cooperation"]["n"] == 1
    assert charts["eq1"]["metrics"]["cooperation"]["n"] == 0
    assert "cooperation" in charts["pd"]["over_rounds"]
    assert "cooperation" not in charts["eq1"]["over_rounds"]
    for cell in (pd, rps):
        assert cell["outcomes"] == ["seat 0 won", "seat 1 won", "draw", "tie"]
    for cell in cells(magic_results).values():
        assert {"spy won", "spy lost"} <= set(cell["outcomes"])
        assert "seat 2 won" in cell["outcomes"]


@pytest.fixture(scope="module")
def viewer(matrix: Path, magic_results: Path) -> Iterator[str]:
    with serving(matrix, magic_results) as url:
        yield url


def offered(driver: Any, viewer: str, experiment: str) -> list[str]:
    from selenium.webdriver.common.by import By

    driver.get(viewer)
    heading(driver, "Experiments")
    wait(driver, lambda d: d.find_elements(By.LINK_TEXT, experiment))[0].click()
    heading(driver, experiment)
    select = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "select[name=outcome]"))
    return [o.get_attribute("value") for o in select[0].find_elements(By.TAG_NAME, "option")]


def test_the_outcome_filter_offers_what_applies_to_the_experiment(
    chromium: Any, viewer: str
) -> None:
    assert offered(chromium, viewer, "matrix") == ["", "seat 0 won", "seat 1 won", "draw", "tie"]
    magic = offered(chromium, viewer, "magic-analysis")
    assert {"spy won", "spy lost", "seat 2 won"} <= set(magic)
