"""Browser play in a real browser (issue 25 item 8 and its "How"): a person plays whole games
through `stratagem play --web` in headless Chromium, with the page's controls only. Ultimatum and
Chameleon against a scripted model and against the embedded model, and TradeCraft with its
proposal picker and lookup tool; each stored episode is then read back, the human seat marked.
Model text with markup shows as text and runs nothing; the CSP refuses nothing the page does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.browser import chromium, screenshot
from support.web_play import Played, web_play

from stratagem.experiments.store import ResultStore

__all__ = ["chromium"]  # the session's browser, a fixture

MARKUP = '<img src=x onerror="window.__pwned=1">'
WAIT_S = 60


def wait(driver: Any, check: Any, seconds: float = WAIT_S) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    stale = (StaleElementReferenceException,)
    return WebDriverWait(driver, seconds, ignored_exceptions=stale).until(lambda d: check(d))


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def status(driver: Any) -> str:
    return str(driver.execute_script("return document.getElementById('status').textContent"))


def told(driver: Any) -> str:
    return str(driver.execute_script("return document.getElementById('told').textContent"))


def your_move(driver: Any, control: str) -> Any:
    """The enabled control once the page asks for a move."""

    def ready(d: Any) -> Any:
        found = [c for c in css(d, f"#move {control}") if c.is_enabled()]
        return found[0] if found and status(d) == "Your move." else None

    return wait(driver, ready)


def click(driver: Any, selector: str, text: str) -> None:
    button = wait(driver, lambda d: next(
        (b for b in css(d, selector) if b.text == text and b.is_enabled()), None))  # fmt: skip
    button.click()


def game_over(driver: Any, played: Played) -> str:
    wait(driver, lambda d: status(d).startswith(("Game over", "the game did not finish")))
    assert not driver.execute_script("return window.__pwned"), "markup ran"
    logged = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not logged, logged  # the page's icon (favicon.svg) included
    return status(driver)


def ended(driver: Any) -> bool:
    return status(driver).startswith(("Game over", "the game did not finish"))


def turn_shown(driver: Any) -> str:
    return str(driver.execute_script("return document.getElementById('move').dataset.turn"))


def stored(tmp_path: Path) -> Any:
    with ResultStore(tmp_path / "play" / "stratagem.db") as store:
        (episode,) = store.episodes()
        return episode, store.llm_calls(episode.id)


def test_ultimatum_against_a_scripted_model(chromium: Any, tmp_path: Path) -> None:
    args = ("ultimatum", "--seat", "0=human", "--seat", "1=plain",
            "--model", "scripted/always:accept")  # fmt: skip
    with web_play(tmp_path, *args) as played:
        chromium.get(played.links[0])
        amount = your_move(chromium, "input[type=number]")
        assert "You are the proposer." in told(chromium)
        amount.send_keys("150")
        click(chromium, "#move button", "Send")  # checked on the page: nothing is sent
        wait(chromium, lambda d: "from 0 to 100" in css(d, "#move .problem")[0].text)
        assert "not a legal move" not in told(chromium)
        amount.clear()
        amount.send_keys("40")
        screenshot(chromium, "play-ultimatum")
        click(chromium, "#move button", "Send")
        assert game_over(chromium, played) == "Game over. You won 60 to 40."
        replay = str(
            chromium.execute_script("return document.getElementById('replay').textContent")
        )
        assert replay == f"Replay the game: stratagem view {tmp_path / 'play'}"
        # The seat's token went in a header only: no URL the page requested holds it.
        token = played.links[0].partition("#")[2]
        asked = chromium.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        assert any("/api/seat" in u for u in asked), asked
        assert not [u for u in asked if token in u]
    assert played.rc == 0, played.err
    episode, calls = stored(tmp_path)
    assert episode.status == "finished" and episode.payoffs == (60.0, 40.0)
    assert episode.players[0]["kind"] == "human" and len(calls) == 1


def test_ultimatum_against_the_embedded_model(chromium: Any, tmp_path: Path) -> None:
    args = ("ultimatum", "--seat", "0=plain", "--seat", "1=human")  # the model proposes
    with web_play(tmp_path, *args) as played:
        chromium.get(played.links[1])
        your_move(chromium, "button.choice")
        assert [b.text for b in css(chromium, "#move button.choice")] == ["accept", "reject"]
        click(chromium, "#move button.choice", "accept")
        end = game_over(chromium, played)
    assert played.rc == 0, played.err
    episode, calls = stored(tmp_path)
    assert episode.players[1]["kind"] == "human"
    assert episode.players[0]["model"] == "local/gemma-3-270m" and calls
    mine, theirs = episode.payoffs[1], episode.payoffs[0]
    word = "Draw," if mine == theirs else "You won" if mine > theirs else "You lost"
    assert sum(episode.payoffs) == 100 and end == f"Game over. {word} {mine:g} to {theirs:g}."


def play_chameleon(driver: Any, played: Played, clue: str) -> str:
    """Seat 0's page: a clue typed, a vote clicked, the game to its end."""
    driver.get(played.links[0])
    area = your_move(driver, "textarea")
    assert "The word is: Grape" in told(driver)  # seat 0's own secret word
    area.send_keys(clue)
    click(driver, "#move button", "Send")
    your_move(driver, "button.choice")
    assert [b.text for b in css(driver, "#move button.choice")] == ["Player 2", "Player 3"]
    screenshot(driver, "play-chameleon")
    click(driver, "#move button.choice", "Player 3")
    return game_over(driver, played)


def test_chameleon_against_a_scripted_model(chromium: Any, tmp_path: Path) -> None:
    model = f"scripted/cycle:Sweet {MARKUP},I vote for Player 1."
    args = ("chameleon/0", "--seat", "0=human", "--seat", "1=magic", "--seat", "2=magic",
            "--model", model)  # fmt: skip
    with web_play(tmp_path, *args) as played:
        end = play_chameleon(chromium, played, "It grows in bunches.")
        text = told(chromium)
        assert f"Sweet {MARKUP}" in text  # the model's markup, as text
        assert "You are the chameleon" not in str(chromium.page_source)  # seat 2's secret
        assert "[Player 1]: I vote for Player 3." in text  # the person's own vote
    assert played.rc == 0, played.err
    episode, _ = stored(tmp_path)
    assert episode.status == "finished" and episode.players[0]["kind"] == "human"
    others = ", ".join(f"seat {k}: {p:g}" for k, p in enumerate(episode.payoffs) if k)
    word = "won" if episode.payoffs[0] == max(episode.payoffs) else "lost"
    assert end == f"Game over. You {word} with {episode.payoffs[0]:g} ({others})."


def test_chameleon_against_the_embedded_model(chromium: Any, tmp_path: Path) -> None:
    args = ("chameleon/0", "--seat", "0=human", "--seat", "1=magic",
            "--seat", "2=scripted:Red.,Player 1", "--set", "magic.probes=false")  # fmt: skip
    with web_play(tmp_path, *args) as played:
        play_chameleon(chromium, played, "It is purple.")
    assert played.rc == 0, played.err
    episode, calls = stored(tmp_path)
    assert episode.status == "finished" and episode.players[0]["kind"] == "human"
    assert {c.player for c in calls} == {1} and episode.players[1]["model"].startswith("local/")


def test_tradecraft_with_the_picker_and_the_lookup(chromium: Any, tmp_path: Path) -> None:
    args = ("tradecraft", "--seat", "0=human", "--seat", "1=scripted:reject")
    with web_play(tmp_path, *args) as played:
        chromium.get(played.links[0])
        your_move(chromium, "button.propose")
        css(chromium, "#move .tools input")[0].send_keys("shears")
        click(chromium, "#move button.lookup", "Item info")  # a query, not a move
        wait(chromium, lambda d: told(d).count("shears") >= 2)
        your_move(chromium, "button.propose")
        for box in css(chromium, "#move fieldset button.add"):
            box.click()  # one item each: our coal for their raw_iron
        from selenium.webdriver.support.ui import Select

        give, want = css(chromium, "#move fieldset select")
        Select(give).select_by_value("coal")
        Select(want).select_by_value("raw_iron")
        css(chromium, "#move textarea")[0].send_keys("hi")
        screenshot(chromium, "play-tradecraft")
        click(chromium, "#move button.propose", "Propose")
        wait(chromium, lambda d: "with 1 coal. Message: hi" in told(d))
        # the other moves to the end: no craft, nothing proposed, every proposal rejected
        answers = {"button.done": "Done crafting", "button": "Propose nothing",
                   "button.reject": "Reject"}  # fmt: skip
        while not ended(chromium):
            wait(chromium, lambda d: ended(d) or status(d) == "Your move.")
            turn = turn_shown(chromium)
            for selector, text in answers.items():
                found = [b for b in css(chromium, f"#move {selector}") if b.text == text]
                if found and found[0].is_enabled():
                    found[0].click()
                    wait(chromium, lambda d, was=turn: ended(d) or turn_shown(d) != was)
                    break
        game_over(chromium, played)
    assert played.rc == 0, played.err
    episode, _ = stored(tmp_path)
    assert episode.status == "finished" and episode.players[0]["kind"] == "human"
