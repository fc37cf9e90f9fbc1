"""Links that last (issue 36 item 8), in a real browser over a Chameleon game: an episode found
by a search opens at the step that matched, the text marked; its link names its experiment;
the URL follows the step shown (1-based, as the page counts), so a copied link reopens there;
and a link whose results directory is unknown still opens through its experiment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from support.browser import chromium, serving
from support.chameleon_view import REASKED_REPLY
from test_browser import counter, heading, wait

__all__ = ["chromium"]


@pytest.fixture(scope="module")
def viewer(chameleon: tuple[Path, str]) -> Iterator[str]:
    with serving(chameleon[0]) as url:
        yield url


def query(driver: Any) -> dict[str, str]:
    """The parameters of the page's route (after the hash's "?")."""
    fragment = urlsplit(driver.current_url).fragment
    return {k: v[0] for k, v in parse_qs(fragment.partition("?")[2]).items()}


def test_a_search_hit_opens_at_its_step_marked_and_the_url_follows_the_step(
    chromium: Any, viewer: str, chameleon: tuple[Path, str]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = chromium
    episode = chameleon[1]
    search = "like THEM all"  # any case, as the list's search
    driver.get(f"{viewer}#/x/{chameleon[0].name}/pgm?q={search.replace(' ', '+')}")
    heading(driver, "pgm")
    wait(driver, lambda d: d.find_elements(By.LINK_TEXT, episode))[0].click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "mark.hit"))
    marks = driver.find_elements(By.CSS_SELECTOR, "mark.hit")
    assert {m.text for m in marks} == {"like them all"} and all(m.is_displayed() for m in marks)
    assert REASKED_REPLY.lower() in driver.find_element(By.CSS_SELECTOR, ".step-box").text.lower()
    shown = int(counter(driver).split()[1])
    assert shown > 1  # the re-asked vote is not in the first step
    assert query(driver) == {"x": "pgm", "q": search, "step": str(shown)}

    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_LEFT)
    wait(driver, lambda d: query(d).get("step") == str(shown - 1))
    link = driver.current_url
    driver.get(viewer)
    heading(driver, "Experiments")
    driver.get(link)  # the copied link reopens at its step
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".timeline .counter"))
    wait(driver, lambda d: counter(d).startswith(f"step {shown - 1} of"))


def test_an_episode_link_opens_through_its_experiment(
    chromium: Any, viewer: str, chameleon: tuple[Path, str]
) -> None:
    from selenium.webdriver.common.by import By

    driver = chromium
    episode = chameleon[1]
    driver.get(f"{viewer}#/e/7/{episode}?x=pgm&step=2")  # an old link's number: no such name
    heading(driver, f"Episode {episode}")
    wait(driver, lambda d: counter(d).startswith("step 2 of"))
    assert urlsplit(driver.current_url).fragment.startswith(f"/e/{chameleon[0].name}/{episode}?")
    driver.get(
        f"{viewer}#/e/{chameleon[0].name}/{episode}?x=other"
    )  # the wrong experiment: said, not shown
    wait(
        driver,
        lambda d: "is in experiment 'pgm', not 'other'" in d.find_element(By.TAG_NAME, "main").text,
    )
