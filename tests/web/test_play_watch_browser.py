"""A game with no human seat watched in a real browser (issue 37 item 5): the viewer's episode page
follows it as it is played, at the pace asked, whether started by `stratagem play --web` (the
embedded model against a strategy, the issue's own command) or from the viewer's play page; the
page stays at the latest step unless the person moved back."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from support.browser import chromium, serving
from support.play import COMMAND

from stratagem.experiments.store import ResultStore

__all__ = ["chromium"]  # the session's browser, a fixture

WAIT_S = 120
LINK = re.compile(r"watch: (http://127\.0\.0\.1:\d+/#/e/play/[0-9a-f]+)")  # OUT's folder: its name


def wait(driver: Any, check: Any) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    stale = (StaleElementReferenceException,)
    return WebDriverWait(driver, WAIT_S, ignored_exceptions=stale).until(lambda d: check(d))


def one(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return wait(
        driver, lambda d: (found := d.find_elements(By.CSS_SELECTOR, selector)) and found[0]
    )


def shown(driver: Any) -> tuple[int, int, str] | None:
    """The step shown, the steps there are, and the episode's status (None: not drawn yet)."""
    got = driver.execute_script(
        "const c = document.querySelector('.counter'), f = document.querySelector('.facts');"
        "return c && f ? [c.textContent, f.textContent] : null;"
    )
    match = got and re.search(r"step (\d+) of (\d+)", got[0])
    status = got and re.search(r"status (\w+)", got[1])
    return (int(match[1]), int(match[2]), status[1]) if match and status else None


def follow(driver: Any, until: Any) -> list[tuple[int, int, str]]:
    """What the episode page showed, read every 0.2 s, until `until(shown)` holds."""
    seen: list[tuple[int, int, str]] = []
    deadline = time.monotonic() + WAIT_S
    while not (seen and until(seen[-1])):
        assert time.monotonic() < deadline, seen
        now = shown(driver)
        if now is not None and (not seen or now != seen[-1]):
            seen.append(now)
        time.sleep(0.2)
    return seen


def no_errors(driver: Any, stopped: bool = False) -> None:
    """Nothing went wrong on the page (`stopped`: but its polls of the stopped server)."""
    ignored = ("favicon.ico", "ERR_CONNECTION_REFUSED") if stopped else ("favicon.ico",)
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    logged = [m for m in severe if not any(i in m for i in ignored)]
    driver.get("about:blank")
    driver.get_log("browser")  # the next test's log starts empty
    assert not logged, logged


@contextmanager
def watched(tmp_path: Path, *args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`stratagem play ARGS --web --out TMP/play --seed 7` and the link it prints."""
    proc = subprocess.Popen(
        [COMMAND, "play", *args, "--web", "--out", str(tmp_path / "play"), "--seed", "7"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline()
        match = LINK.fullmatch(line.strip())
        assert match, (line, proc.stderr.read() if proc.stderr and not line else "")
        yield match[1], proc
    finally:
        if proc.poll() is None:
            proc.kill()


def test_play_web_with_no_human_seat_shows_the_game_as_it_is_played(
    chromium: Any, tmp_path: Path
) -> None:
    driver = chromium
    with watched(tmp_path, "dilemma", "--seat", "0=plain", "--seat", "1=TitForTat",
                 "--rounds", "4", "--pace", "1") as (url, proc):  # fmt: skip
        driver.get(url)
        seen = follow(driver, lambda s: s == (4, 4, "finished"))
        out, err = proc.communicate(timeout=60)  # the server stops once the page has the end
    running = [s for s in seen if s[2] == "running"]
    assert len({n for _, n, _ in running}) >= 2, seen  # steps appeared while it was played
    assert all(k == n for k, n, _ in seen), seen  # and the page stayed at the latest
    assert proc.returncode == 0, err
    assert "game over: seat 0: " in out
    no_errors(driver, stopped=True)
    with ResultStore(tmp_path / "play" / "stratagem.db", read_only=True) as store:
        (episode,) = store.episodes()
        assert episode.status == "finished" and url.endswith(f"/{episode.id}")
        assert episode.players[0]["model"] == "local/gemma-3-270m"
        assert len(store.rounds(episode.id)) == 4 and len(store.llm_calls(episode.id)) == 4


def test_a_game_started_from_the_play_page_with_no_human_seat_is_watched(
    chromium: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    driver, out = chromium, tmp_path / "out"
    with serving(out, "--play", out) as url:
        driver.get(url)
        one(driver, "#launch-link").click()
        Select(one(driver, "#launch-game")).select_by_value("dilemma")
        for k, who in enumerate(["TitForTat", "AlwaysDefect"]):
            field = one(driver, f"#launch-seats input[name=seat-{k}]")
            field.clear()
            field.send_keys(who)
        for name, value in (("rounds", "12"), ("seed", "3"), ("pace", "1")):
            one(driver, f"#launch-{name}").send_keys(value)
        one(driver, "#launch-plan-button").click()
        wait(driver, lambda d: one(d, "#launch-start").is_enabled())
        one(driver, "#launch-start").click()
        wait(driver, lambda d: "#/e/" in d.current_url)  # the episode page, as it is played
        first = follow(driver, lambda s: s[1] >= 2)
        assert all(k == n and status == "running" for k, n, status in first), first
        one(driver, "button[title='first (Home)']").click()  # the person moves back...
        back = follow(driver, lambda s: s[1] > first[-1][1])
        assert back[-1][0] == 1 and back[-1][2] == "running", back  # ...and stays there
        # The URL keeps the step moved to (issue 36 item 8); the episode's link without a step,
        # opened again while it is played, opens at its latest step.
        assert "step=1" in driver.current_url
        link = re.sub(r"[?&]step=1\b", "", driver.current_url)
        driver.get("about:blank")
        driver.get(link)
        again = follow(driver, lambda s: True)
        assert again[0][0] == again[0][1] > 2 and again[0][2] == "running", again
        end = follow(driver, lambda s: s[2] == "finished")
        assert end[-1] == (12, 12, "finished"), end
        page = driver.current_url
        no_errors(driver)
    with ResultStore(out / "stratagem.db", read_only=True) as store:
        (episode,) = store.episodes()
        assert episode.status == "finished" and episode.seed == 3
        assert page.split("?")[0].endswith(f"/{episode.id}")  # the step follows (?step=N)
        assert [p["kind"] for p in episode.players] == ["strategy", "strategy"]
        assert len(store.rounds(episode.id)) == 12
