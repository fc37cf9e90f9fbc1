"""A game started from the viewer, in a real browser (issue 25 item 8, "From the viewer"):
`stratagem view OUT --play OUT` in a second process and headless Chromium, through the pages'
controls only: the "play a game" page, Ultimatum with seat 0 human and seat 1 `plain` on a
scripted model, its plan shown before it starts, the seat's link followed and the game played,
its result read as a sentence and its replay opened from the seat's page, then the episode
found in the viewer and read back from the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.browser import chromium, screenshot, serving

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
    return wait(driver, lambda d: (found := css(d, selector)) and found[0])


def text_of(driver: Any, selector: str) -> str:
    return str(driver.execute_script(f"return document.querySelector('{selector}').textContent"))


def fill(field: Any, value: str) -> None:
    field.clear()
    field.send_keys(value)


def test_a_person_starts_ultimatum_from_the_viewer_plays_it_and_sees_it(
    chromium: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    driver, out = chromium, tmp_path / "out"
    with serving(out, "--play", out) as url:
        driver.get(url)
        one(driver, "#launch-link").click()
        Select(one(driver, "#launch-game")).select_by_value("ultimatum")
        seats = wait(driver, lambda d: len(found := css(d, "#launch-seats input")) == 2 and found)
        fill(seats[0], "human")
        fill(seats[1], "plain")
        fill(one(driver, "#launch-model"), "scripted/always:accept")
        fill(one(driver, "#launch-seed"), "7")
        assert not one(driver, "#launch-start").is_enabled()  # the plan comes first
        one(driver, "#launch-plan-button").click()
        wait(driver, lambda d: text_of(d, "#launch-plan").startswith("Plan: 1 episode to play"))
        assert not one(driver, "#launch-confirm-row").is_displayed()  # a free model
        one(driver, "#launch-start").click()
        link = one(driver, "#launch-links a.seat-link")
        screenshot(driver, "play-launch")
        assert link.text.startswith(f"{url}play#") and link.get_attribute("href") == link.text
        assert text_of(driver, "#launch-status") == "Playing…"
        link.click()  # the seat's page, as the person it was sent to opens it

        def asked(d: Any) -> Any:
            found = [c for c in css(d, "#move input[type=number]") if c.is_enabled()]
            return found and text_of(d, "#status") == "Your move." and found[0]

        wait(driver, asked).send_keys("40")
        sends = "#move button:enabled"
        wait(driver, lambda d: [b for b in css(d, sends) if b.text == "Send"])[0].click()
        wait(driver, lambda d: text_of(d, "#status") == "Game over. You won 60 to 40.")
        one(driver, "#replay").click()  # the seat's page links to the game's replay
        wait(driver, lambda d: css(d, ".ultimatum-view tbody tr"))
        assert [c.text for c in css(driver, ".ultimatum-view tbody tr td")][:3] == [
            "100", "40", "60"
        ]  # fmt: skip
        replay = driver.current_url

        driver.get(url + "#/launch")  # back in the viewer: the game and its episode
        wait(driver, lambda d: text_of(d, "#launch-status") == "Game over. Seat 0 won 60 to 40.")
        one(driver, "#launch-episode").click()
        wait(driver, lambda d: css(d, ".ultimatum-view tbody tr"))
        row = [c.text for c in css(driver, ".ultimatum-view tbody tr td")]
        assert row[:3] == ["100", "40", "60"] and driver.current_url == replay
        logged = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not logged, logged  # the pages' icon (favicon.svg) included
    with ResultStore(out / "stratagem.db") as store:
        (episode,) = store.episodes()
        assert episode.status == "finished" and episode.payoffs == (60.0, 40.0)
        assert episode.players[0]["kind"] == "human"
        assert driver.current_url.partition("?")[0].endswith(f"#/e/out/{episode.id}")
