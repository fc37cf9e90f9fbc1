"""The viewer in a real browser (issue 25, "How"): the real `stratagem view` over a Chameleon game
played by scripted PGM and MAgIC seats and a PD game whose model replies are markup, walked in
headless Chromium: experiments -> experiment (cells, episodes, a filter, a search) -> an episode ->
step 3 -> a seat's perspective -> back. What a seat may not see is checked in the DOM, not the CSS.
`make screenshots` saves each page into docs/img/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import chromium, screenshot, serving
from support.chameleon_view import REASKED_REPLY, SECRET_WORD, analysis_marker, chameleon_replier
from support.pgm_play import play, scripted_model
from support.scripted_run import run_scripted

__all__ = ["chromium"]  # the session's browser, a fixture

MARKUP = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
WAIT_S = 20


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`stratagem view` over two results directories: a Chameleon game (seat 2 the chameleon) and
    a PD game whose replies are `MARKUP` and a move; the URL it prints."""
    models = scripted_model()
    next(models)[0] = chameleon_replier()
    try:
        store, _ = play(
            tmp_path_factory.mktemp("chameleon"), "chameleon/0", ["pgm", "magic", "pgm"]
        )
        store.close()
    finally:
        models.close()
    pd = tmp_path_factory.mktemp("pd") / "out"
    reply = lambda request, sample: f"{MARKUP} {request.choices[0]}"  # noqa: E731
    summary = run_scripted(pd, "markup", reply, rounds=[3])
    assert summary.finished == 1, summary.errors
    with serving(Path(store.path).parent, pd) as url:
        yield url


# -- helpers ---------------------------------------------------------------------------------------


def wait(driver: Any, check: Any) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # A page redrawn between finding an element and reading it: look again.
    stale = (StaleElementReferenceException,)
    return WebDriverWait(driver, WAIT_S, ignored_exceptions=stale).until(lambda d: check(d))


def heading(driver: Any, text: str) -> None:
    wait(
        driver,
        lambda d: d.execute_script("return document.querySelector('h1')?.textContent") == text,
    )


def css(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def click_link(driver: Any, text: str) -> None:
    from selenium.webdriver.common.by import By

    wait(driver, lambda d: d.find_elements(By.LINK_TEXT, text))[0].click()


def counter(driver: Any) -> str:
    return str(css(driver, ".timeline .counter").text).strip()


def every_step(driver: Any, expression: str) -> list[Any]:
    """A JavaScript expression's value at each step of the episode shown, moved by the slider."""
    script = f"""
        const slider = document.querySelector('.timeline input[type=range]');
        const shown = slider.value, values = [];
        for (let i = 0; i <= Number(slider.max); i++) {{
          slider.value = String(i); slider.dispatchEvent(new Event('input'));
          values.push({expression});
        }}
        slider.value = shown; slider.dispatchEvent(new Event('input'));
        return values;"""
    values: list[Any] = driver.execute_script(script)
    assert values
    return values


def every_step_text(driver: Any) -> str:
    """The page's whole text at every step, closed <details> included."""
    return " ".join(every_step(driver, "document.body.textContent"))


def hidden_events(driver: Any) -> set[tuple[str, str]]:
    """Each hidden event shown at any step: its seat ("seat 1", "" for the engine's) and whom it
    is visible to ("visible to seat 1", "visible to seats 0, 1", or "the record only (no seat)"),
    from its heading."""
    heads = every_step(
        driver, "[...document.querySelectorAll('.event.hidden .head')].map(h => h.textContent)"
    )
    out: set[tuple[str, str]] = set()
    for head in (h for step in heads for h in step):
        parts = head.split(" · ")
        out.add((next((p for p in parts if p.startswith("seat ")), ""), parts[-1]))
    return out


def seen_by(seat: int, events: set[tuple[str, str]]) -> bool:
    """Whether every one of these hidden events was seat `seat`'s own or shown to it."""
    return all(
        who == f"seat {seat}"
        or str(seat)
        in to.removeprefix("visible to ").removeprefix("seats ").removeprefix("seat ").split(", ")
        for who, to in events
    )


def perspective(driver: Any, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    chooser = ".timeline label:last-of-type select"
    Select(css(driver, chooser)).select_by_value(value)
    wait(driver, lambda d: f"perspective={value.replace(':', '%3A')}" in d.current_url)
    # the page is drawn anew for the perspective: wait for its chooser to say so
    wait(driver, lambda d: css(d, chooser).get_attribute("value") == value)


def csp_errors(driver: Any) -> list[str]:
    """The console's Content-Security-Policy violations since the last read (the log drains)."""
    return [
        e["message"] for e in driver.get_log("browser") if "Content Security Policy" in e["message"]
    ]


# -- the walk ------------------------------------------------------------------------------------


def test_experiments_experiment_episode_step_3_seat_perspectives_and_back(
    chromium: Any, viewer: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = chromium
    driver.get(viewer)
    heading(driver, "Experiments")
    rows = driver.find_elements(By.CSS_SELECTOR, "main tbody tr")
    assert len(rows) == 2 and {r.find_element(By.TAG_NAME, "a").text for r in rows} == {
        "pgm",
        "markup",
    }
    screenshot(driver, "experiments")

    click_link(driver, "pgm")
    heading(driver, "pgm")
    cells, episodes = driver.find_elements(By.CSS_SELECTOR, "main table")[:2]
    assert "chameleon" in cells.text and "scripted/pgm-test" in cells.text
    (episode,) = [a.text for a in episodes.find_elements(By.CSS_SELECTOR, "tbody a")]
    screenshot(driver, "experiment")

    # a filter that keeps the game's episode, one that keeps none, a search for a reply's text
    status = css(driver, "select[name=status]")
    from selenium.webdriver.support.ui import Select

    Select(status).select_by_value("failed")
    css(driver, ".filters button[type=submit]").click()
    wait(driver, lambda d: "Episodes (0)" in d.find_element(By.TAG_NAME, "main").text)
    Select(css(driver, "select[name=status]")).select_by_value("finished")
    css(driver, ".filters button[type=submit]").click()
    wait(driver, lambda d: "Episodes (1)" in d.find_element(By.TAG_NAME, "main").text)
    search = css(driver, ".filters input[type=search]")
    search.send_keys("no reply says this", Keys.ENTER)
    wait(driver, lambda d: "Episodes (0)" in d.find_element(By.TAG_NAME, "main").text)
    search = css(driver, ".filters input[type=search]")
    search.clear()
    search.send_keys(REASKED_REPLY, Keys.ENTER)
    wait(driver, lambda d: "Episodes (1)" in d.find_element(By.TAG_NAME, "main").text)

    click_link(driver, episode)
    heading(driver, f"Episode {episode}")
    assert not counter(driver).startswith("step 1 of")  # opened where the search matched
    css(driver, "body").send_keys(Keys.HOME)
    assert counter(driver).startswith("step 1 of")
    nexts = [
        b for b in driver.find_elements(By.CSS_SELECTOR, ".timeline button") if "next" in b.text
    ]
    nexts[0].click()
    nexts[0].click()
    assert counter(driver).startswith("step 3 of")
    css(driver, "body").send_keys(Keys.ARROW_RIGHT)
    assert counter(driver).startswith("step 4 of")
    css(driver, "body").send_keys(Keys.ARROW_LEFT)
    assert counter(driver).startswith("step 3 of")
    everything = every_step_text(driver)
    for secret in (SECRET_WORD, analysis_marker(0), analysis_marker(2)):
        assert secret in everything
    hidden = hidden_events(driver)
    assert not any(seen_by(seat, hidden) for seat in (0, 1, 2))  # every seat's, and the engine's
    screenshot(driver, "episode")

    perspective(driver, "seat:1")  # seat 1 is told the word
    assert counter(driver).startswith("step 3 of")  # the step shown is kept
    seen = every_step_text(driver)
    assert SECRET_WORD in seen and REASKED_REPLY in seen  # its own re-asked vote
    hidden = hidden_events(driver)
    assert hidden and seen_by(1, hidden)  # its own hidden events only
    for secret in (analysis_marker(0), analysis_marker(2)):
        assert secret not in seen
    assert "I vote for Player 1." not in seen  # seat 2's private vote
    screenshot(driver, "episode-seat")

    perspective(driver, "seat:2")  # the chameleon
    seen = every_step_text(driver)
    hidden = hidden_events(driver)
    assert SECRET_WORD not in seen and hidden and seen_by(2, hidden)
    assert analysis_marker(2) in seen
    for secret in (analysis_marker(0), REASKED_REPLY, "I vote for Player 3."):
        assert secret not in seen

    driver.back()
    driver.back()
    wait(driver, lambda d: "perspective" not in d.current_url)
    chooser = ".timeline label:last-of-type select"  # the page drawn anew, not only the URL
    wait(driver, lambda d: css(d, chooser).get_attribute("value") == "all")
    assert SECRET_WORD in every_step_text(driver)
    driver.back()
    heading(driver, "pgm")
    assert not csp_errors(driver)


def test_stored_markup_shows_as_text_and_runs_nothing(chromium: Any, viewer: str) -> None:
    from selenium.webdriver.common.by import By

    driver = chromium
    driver.get(viewer)
    click_link(driver, "markup")
    heading(driver, "markup")
    link = wait(
        driver, lambda d: d.find_elements(By.CSS_SELECTOR, "main table tbody a[href^='#/e/']")
    )
    link[0].click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".timeline"))
    assert MARKUP in every_step_text(driver)  # shown as the model wrote it
    assert (
        driver.execute_script("return document.querySelectorAll('main img, main script').length")
        == 0
    )
    assert driver.execute_script("return window.__pwned") is None
    assert csp_errors(driver) == []
    # The log reader does see a violation: an inline script the CSP refuses.
    driver.execute_script(
        "const s = document.createElement('script'); s.textContent = 'window.__pwned=1';"
        "document.body.append(s);"
    )
    assert driver.execute_script("return window.__pwned") is None
    assert wait(driver, lambda d: csp_errors(d))


def test_what_a_page_leaves_out_is_not_shown_as_null(chromium: Any, viewer: str) -> None:
    """An experiment without an HTML report has no report links under Cells: nothing is shown
    there (the page once showed the text "null")."""
    from selenium.webdriver.common.by import By

    driver = chromium
    driver.get(viewer)
    click_link(driver, "markup")
    heading(driver, "markup")
    wait(driver, lambda d: "Episodes (" in d.find_element(By.TAG_NAME, "main").text)
    assert not driver.find_elements(By.CSS_SELECTOR, "main .report-links")
    texts = driver.execute_script(
        "return [...document.getElementById('main').childNodes]"
        ".filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent)"
    )
    assert texts == []  # every part of the page is an element; no stray text such as "null"
