"""A browser game whose seat's page was closed, abandoned from the launcher (issue 36 item 11):
`stratagem view OUT --play OUT` in a second process and headless Chromium. A person plays round
1 of a repeated dilemma and leaves the page; a new game is refused while the first holds OUT, and
the launcher offers "Abandon this game", which stops it: its episode stays unfinished with its
round stored, the store whole, and the next game starts at once."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from support.browser import chromium, serving

from stratagem.experiments.store import ResultStore

__all__ = ["chromium"]  # the session's browser, a fixture

WAIT_S = 30


def wait(driver: Any, check: Any) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    stale = (StaleElementReferenceException,)
    return WebDriverWait(driver, WAIT_S, ignored_exceptions=stale).until(lambda d: check(d))


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def one(driver: Any, selector: str) -> Any:
    return wait(driver, lambda d: (found := [e for e in css(d, selector) if e.is_enabled()])
                and found[0])  # fmt: skip


def text_of(driver: Any, selector: str) -> str:
    return str(driver.execute_script(
        "const n = document.querySelector(arguments[0]); return n ? n.textContent : ''", selector
    ))  # fmt: skip


def fill(field: Any, value: str) -> None:
    field.clear()
    field.send_keys(value)


def plan_and_start(driver: Any, seed: int) -> None:
    """The dilemma, seat 0 a person and seat 1 TitForTat, 3 rounds: planned, then started."""
    from selenium.webdriver.support.ui import Select

    Select(one(driver, "#launch-game")).select_by_value("dilemma")
    seats = wait(driver, lambda d: len(found := css(d, "#launch-seats input")) == 2 and found)
    fill(seats[0], "human")
    fill(seats[1], "TitForTat")
    fill(one(driver, "#launch-rounds"), "3")
    fill(one(driver, "#launch-seed"), str(seed))
    one(driver, "#launch-plan-button").click()
    wait(driver, lambda d: text_of(d, "#launch-plan").startswith("Plan: "))
    one(driver, "#launch-start").click()


def test_a_game_held_by_a_closed_seat_page_is_abandoned_from_the_launcher(
    chromium: Any, tmp_path: Path
) -> None:
    driver, out = chromium, tmp_path / "out"
    with serving(out, "--play", out) as url:
        driver.get(url + "#/launch")
        plan_and_start(driver, 7)
        one(driver, "#launch-links a.seat-link").click()  # the seat's page: round 1 played
        wait(driver, lambda d: text_of(d, "#status") == "Your move.")
        one(driver, "#move button.choice").click()
        wait(driver, lambda d: text_of(d, "#move") and css(d, "#move")[0].get_attribute(
            "data-turn") == "2" and text_of(d, "#status") == "Your move.")  # fmt: skip
        driver.get(url + "#/launch")  # the seat's page is closed for good
        driver.refresh()
        assert text_of(driver, "#launch-status").startswith("Playing…")
        plan_and_start(driver, 8)  # refused: the first game holds OUT
        wait(driver, lambda d: "abandon it" in text_of(d, "#launch-error"))
        one(driver, "#launch-abandon").click()
        wait(driver, lambda d: text_of(d, "#launch-status").startswith("the game was abandoned"))
        assert not css(driver, "#launch-abandon")
        with ResultStore(out / "stratagem.db") as store:
            (episode,) = store.episodes()
            assert episode.status == "running" and episode.payoffs is None
            assert len(store.rounds(episode.id)) == 1  # the round played is kept
        one(driver, "#launch-start").click()  # the launcher is free: the next game starts
        wait(driver, lambda d: css(d, "#launch-links a.seat-link"))
        assert text_of(driver, "#launch-status").startswith("Playing…")
        logged = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert [m for m in logged if "409" not in m] == [], logged  # the refusal, and only it
    with sqlite3.connect(out / "stratagem.db") as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with ResultStore(out / "stratagem.db") as store:
        first = [e for e in store.episodes() if e.status == "running" and store.rounds(e.id)]
        assert len(first) == 1 and len(store.episodes()) == 2
