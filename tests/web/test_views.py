"""The game-specific step views in a real browser (issue 25 item 3): a PD episode's round table
and cumulative payoffs at a step, checked against the stored rounds; a Chameleon episode with PGM
seats: its chat and its belief heat maps, whose numbers are the stored beliefs; and a seat's chat
holds no other seat's private vote (in the DOM, not hidden by CSS). The generic view stays below."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from support.browser import chromium, screenshot, serving
from support.chameleon_view import chameleon_replier
from support.pgm_play import play, scripted_model

from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.web.data import Sources

__all__ = ["chromium"]  # the session's browser, a fixture

WAIT_S = 20


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A Chameleon game (seats 0 and 2 PGM, seat 2 the chameleon) and a 4-round PD game against
    TitForTat by a scripted random model; their stored rounds and beliefs, and the viewer's URL
    and the names of its two sources."""
    models = scripted_model()
    next(models)[0] = chameleon_replier()
    try:
        store, chameleon = play(
            tmp_path_factory.mktemp("chameleon"), "chameleon/0", ["pgm", "magic", "pgm"]
        )
        beliefs = store.beliefs(chameleon)
        store.close()
    finally:
        models.close()
    pd = tmp_path_factory.mktemp("pd") / "out"
    config = {
        "name": "pd-view", "output": str(pd), "models": [{"model": "scripted/random:7"}],
        "games": ["pd"], "opponents": ["TitForTat"], "rounds": [4], "retry": {"base_delay": 0},
    }  # fmt: skip
    summary = asyncio.run(Runner(config_from_dict(config, "test"), show_progress=False).run())
    assert summary.finished == 1, summary.errors
    with ResultStore(pd / STORE_FILE, read_only=True) as pd_store:
        (episode,) = pd_store.episodes()
        rounds = pd_store.rounds(episode.id)
    with serving(Path(store.path).parent, pd) as url:
        yield {
            "url": url, "chameleon": chameleon, "beliefs": beliefs,
            "sources": [s["id"] for s in Sources([Path(store.path).parent, pd]).sources()],
            "pd": episode.id, "rounds": rounds,
        }  # fmt: skip


def wait(driver: Any, check: Any) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # A page redrawn between finding an element and reading it: look again.
    stale = (StaleElementReferenceException,)
    return WebDriverWait(driver, WAIT_S, ignored_exceptions=stale).until(lambda d: check(d))


def open_episode(driver: Any, url: str, source: str, episode: str, query: str = "") -> None:
    """The episode's replay, loaded afresh (not a hash change on the page of the test before)."""
    driver.get("about:blank")
    driver.get(f"{url}#/e/{quote(source, safe='')}/{episode}{query}")  # a name may hold "/"
    wait(
        driver,
        lambda d: d.execute_script(
            "return document.querySelector('h1')?.textContent === arguments[0]"
            " && !!document.querySelector('.step-box .step')",
            f"Episode {episode}",
        ),
    )


def goto(driver: Any, step: int) -> None:
    """Step `step` (0-based) by the slider."""
    driver.execute_script(
        "const s = document.querySelector('.timeline input[type=range]');"
        "s.value = String(arguments[0]); s.dispatchEvent(new Event('input'));",
        step,
    )


def texts(driver: Any, selector: str) -> list[list[str]]:
    """Each matched element's cells' text, row by row (text content, not what CSS shows)."""
    rows: list[list[str]] = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(r =>"
        " [...r.children].map(c => c.textContent))",
        selector,
    )
    return rows


def fmt(x: float) -> str:
    """app.js's number format: integers as they are, others to 3 places."""
    return str(int(x)) if float(x).is_integer() else f"{x:.3f}"


def test_a_pd_step_shows_the_rounds_so_far_and_each_seats_cumulative_payoff(
    chromium: Any, stores: dict[str, Any]
) -> None:
    driver, rounds = chromium, stores["rounds"]
    assert len(rounds) == 4
    open_episode(driver, stores["url"], stores["sources"][1], stores["pd"])
    goto(driver, 2)  # step 3: rounds 1 to 3
    shown = texts(driver, ".rounds-view .round-table tbody tr")
    assert shown == [
        [str(r.round), *r.actions, *(fmt(p) for p in r.payoffs or ()), "yes" if r.valid else "no"]
        for r in rounds[:3]
    ]
    totals = [sum((r.payoffs or ())[k] for r in rounds[:3]) for k in (0, 1)]
    assert texts(driver, ".rounds-view .cumulative tbody tr") == [[fmt(t) for t in totals]]
    lines = driver.execute_script(
        "return [...document.querySelectorAll('.payoff-plot polyline')]"
        ".map(p => p.getAttribute('points').split(' ').length)"
    )
    assert lines == [4, 4]  # each seat: the origin and three rounds
    # the generic view stays below the game view
    assert driver.execute_script(
        "const [g, s] = [...document.querySelector('.step-box').children];"
        "return g.matches('.rounds-view') && s.matches('.step')"
    )
    screenshot(driver, "episode-pd")


def test_a_chameleon_step_shows_the_chat_and_heat_maps_of_the_stored_beliefs(
    chromium: Any, stores: dict[str, Any]
) -> None:
    driver = chromium
    open_episode(driver, stores["url"], stores["sources"][0], stores["chameleon"])
    last = driver.execute_script(
        "return Number(document.querySelector('.timeline input[type=range]').max)"
    )
    goto(driver, last)
    chat = [line[-1] for line in texts(driver, ".chat .chat-line")]
    clues = [f"It is a fruit, says seat {k}." for k in range(3)]
    assert [c for c in chat if c in clues] == clues  # in order
    assert {"I vote for Player 2.", "I vote for Player 3.", "I vote for Player 1."} <= set(chat)
    assert chat[0].startswith("Now the game starts!")
    # every stored belief matrix, by seat and analysis: its numbers, cell by cell
    expected: dict[str, list[list[float]]] = {}
    for b in stores["beliefs"]:
        if b.content.get("kind") == "belief":
            rows = expected.setdefault(f"seat {b.player} · {b.content['analysis']}", [[]] * 3)
            rows[b.content["perspective"]] = b.content["row"]
    assert len(expected) == 6  # two PGM seats, three analyses
    maps = driver.execute_script(
        "return [...document.querySelectorAll('.belief')].map(f => [f.querySelector('figcaption')"
        ".textContent, [...f.querySelectorAll('tbody tr')].map(r => [...r.querySelectorAll("
        "'td.cell')].map(c => [c.textContent, c.title, c.className]))])"
    )
    assert {caption for caption, _ in maps} == set(expected)
    for caption, rows in maps:
        want = expected[caption]
        assert [[float(title) for _, title, _ in row] for row in rows] == want
        assert [[text for text, _, _ in row] for row in rows] == [
            [f"{v:.3f}" for v in row] for row in want
        ]
        assert all(cls.startswith("cell heat-") for row in rows for _, _, cls in row)
    driver.execute_script(
        "document.querySelector('.social-view h3').scrollIntoView(); scrollBy(0, -60)"
    )
    screenshot(driver, "episode-chameleon")


def test_a_seats_chat_holds_its_own_private_vote_and_no_others(
    chromium: Any, stores: dict[str, Any]
) -> None:
    driver = chromium
    open_episode(
        driver, stores["url"], stores["sources"][0], stores["chameleon"], "?perspective=seat%3A1"
    )
    goto(driver, 99)
    lines = texts(driver, ".chat .chat-line")
    votes = [line for line in lines if line[-1].startswith("I vote for")]
    assert votes == [["Player 2 (seat 1)", "vote", "private to seat 1", "I vote for Player 3."]]
    text = driver.execute_script("return document.querySelector('.step-box').textContent")
    assert "I vote for Player 1." not in text and "I vote for Player 2." not in text
    assert "You are the chameleon!" not in text  # seat 2's private word message
    assert not driver.find_elements("css selector", ".belief")  # seat 1 is a MAgIC seat
