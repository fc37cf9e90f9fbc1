"""The Analysis part of an experiment's page in a real browser (issue 35): a leaderboard row opens
the episode list filtered to it, with the row's count as the list's total; the calibration table
and its reliability diagram are drawn; a model id that is markup stays text; and a row's link in
the HTML report, served under its sandboxing policy, opens the same list. The real `stratagem
view` over `magic_results` (scripted MAgIC Chameleon games), in headless Chromium."""

from __future__ import annotations

import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from support.browser import chromium, serving
from support.named import only
from test_browser import csp_errors, wait

from stratagem.analysis.report import build_report
from stratagem.web.data import Sources
from stratagem.web.data.reports import REPORT_CSP, report_url

__all__ = ["chromium"]  # the session's browser, a fixture


@pytest.fixture(scope="module")
def reported(magic_results: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the results with its HTML report written."""
    copy = tmp_path_factory.mktemp("magic-view") / "out"
    shutil.copytree(magic_results, copy)
    build_report(copy)
    return copy


@pytest.fixture(scope="module")
def served(reported: Path) -> Iterator[str]:
    """`stratagem view` over the reported copy; the URL."""
    with serving(reported) as url:
        yield url


@pytest.fixture(scope="module")
def analysis(magic_results: Path) -> dict[str, Any]:
    """The experiment's analysis as the data layer answers it, its id, and each row's ids."""
    sources = Sources([magic_results])
    (x,) = sources.experiments()
    found = sources.analysis(only(sources), x["id"])
    listed = lambda group: sources.episodes(only(sources), x["id"], filters={"group": group})  # noqa: E731
    ids = {
        r["group"]: [e["id"] for e in listed(r["group"])["items"]]
        for b in found["leaderboards"]
        for r in b["rows"]
    }
    return {"id": x["id"], "ids": ids, **found}


def one_episode_row(analysis: dict[str, Any]) -> dict[str, Any]:
    """A role row behind a single game: its list is a part of the experiment's episodes."""
    (board,) = (b for b in analysis["leaderboards"] if b["id"] == "magic/roles")
    return next(r for r in board["rows"] if r["episodes"] == 1)


def episodes_heading(driver: Any) -> str:
    return str(driver.execute_script(
        "return [...document.querySelectorAll('h2')].map((h) => h.textContent)"
        ".find((t) => t.startsWith('Episodes')) || ''"
    ))  # fmt: skip


def test_a_row_opens_its_episodes_and_the_calibration_is_drawn(
    chromium: Any, served: str, analysis: dict[str, Any], magic_model: str
) -> None:
    from selenium.webdriver.common.by import By

    driver = chromium
    driver.get(f"{served}#/x/out/{quote(analysis['id'])}")
    wait(driver, lambda d: episodes_heading(d) == "Episodes (8)")
    summary = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "details.analysis summary"))
    summary[0].click()  # folded until asked: its ratings refit bootstraps
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "table.leaderboard"))
    # The calibration table and, for the PGM beliefs, the reliability diagram with a dot per bin.
    (scored,) = (c for c in analysis["calibration"] if c["probabilistic"])
    (diagram,) = driver.find_elements(By.CSS_SELECTOR, "svg.reliability")
    bins = [b for b in scored["bins"] if b["count"]]
    assert len(diagram.find_elements(By.CSS_SELECTOR, "circle.bin")) == len(bins) >= 2
    figure = driver.find_element(By.CSS_SELECTOR, ".reliability-figure")
    assert figure.is_displayed() and f"{magic_model} (pgm)" in figure.text
    tables = driver.find_elements(By.CSS_SELECTOR, "details.analysis table")
    assert any("Brier" in t.text and "PGM belief M" in t.text for t in tables)
    assert any("Noise floor" in t.text and "±0" in t.text for t in tables)
    # A model id that is markup is text everywhere, never an element.
    assert driver.find_elements(By.CSS_SELECTOR, "details.analysis b") == []
    assert f"{magic_model}|pgm" in driver.find_element(By.CSS_SELECTOR, "table.leaderboard").text
    # A row's label opens its episodes: the list's total is the row's count, the row marked.
    row = one_episode_row(analysis)
    link = next(
        a for a in driver.find_elements(By.CSS_SELECTOR, "table.leaderboard a.group-link")
        if f"group={quote(row['group'], safe='')}" in (a.get_attribute("href") or "")
        and a.text == row["label"]
    )  # fmt: skip
    link.click()
    wait(driver, lambda d: episodes_heading(d) == "Episodes (1)")
    assert row["group"] in driver.find_element(By.CSS_SELECTOR, ".group-note").text
    chosen = driver.find_elements(By.CSS_SELECTOR, "tr.group-row.chosen")
    assert [c.find_element(By.TAG_NAME, "a").text for c in chosen] == [row["label"]]
    shown = driver.find_elements(By.CSS_SELECTOR, "main table a[href^='#/e/']")
    assert [a.text for a in shown] == analysis["ids"][row["group"]]
    driver.find_element(By.LINK_TEXT, "all episodes").click()
    wait(driver, lambda d: episodes_heading(d) == "Episodes (8)")
    assert csp_errors(driver) == []


def test_a_report_link_opens_the_row_s_episodes(
    chromium: Any, served: str, analysis: dict[str, Any]
) -> None:
    from selenium.webdriver.common.by import By

    url = served + report_url("out", analysis["id"])
    with urllib.request.urlopen(url) as response:  # the report runs sandboxed, no script
        assert response.headers["content-security-policy"] == REPORT_CSP
    driver = chromium
    driver.get(url)
    row = follow_row_link(driver, analysis)
    assert row["group"] in driver.find_element(By.CSS_SELECTOR, ".group-note").text


def follow_row_link(driver: Any, analysis: dict[str, Any]) -> dict[str, Any]:
    """Click a one-episode row's link in the report shown, and wait for the viewer's list of
    that episode; the row."""
    from selenium.webdriver.common.by import By

    row = one_episode_row(analysis)
    wanted = f"group={quote(row['group'], safe='')}"
    link = wait(driver, lambda d: next(
        (a for a in d.find_elements(By.CSS_SELECTOR, "td a") if wanted in a.get_attribute("href")),
        None,
    ))  # fmt: skip
    assert link.text == row["label"]
    link.click()  # the sandboxed report navigates itself to the viewer, which finds the source
    wait(driver, lambda d: "#/x/out/" in d.current_url and episodes_heading(d) == "Episodes (1)")
    return row


def test_with_a_token_a_report_link_opens_the_row_s_episodes_too(
    chromium: Any, reported: Path, analysis: dict[str, Any]
) -> None:
    """`view --host` (a token, kept in a cookie once the printed URL was opened): the sandboxed
    report has an opaque origin, so its link is a cross-site navigation, which a SameSite=Strict
    cookie would not follow (403)."""
    from selenium.webdriver.common.by import By

    with serving(reported, host="127.0.0.2") as printed:
        base = printed.split("?", 1)[0]
        driver = chromium
        driver.get(printed)  # the person opens the printed URL: the token becomes a cookie
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "main h1, main h2"))
        driver.get(base + report_url("out", analysis["id"]))
        follow_row_link(driver, analysis)
