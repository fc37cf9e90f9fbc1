"""The viewer's browser tests: the real `stratagem view` in a second process and Debian's headless
Chromium driven by Selenium (issue 25, "tested in a real browser"). Where Chromium, its driver or
Selenium is missing the tests skip with one line saying what to install; nothing is downloaded
(Selenium Manager is never asked: both binaries are named)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

COMMAND = str(Path(sys.executable).with_name("stratagem"))
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (1280, 900)
"""A fixed window, so screenshots and layouts are the same on every machine."""
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"


def missing() -> str | None:
    """What the browser tests lack on this machine, or None."""
    lacking = [p for p in (CHROMIUM, CHROMEDRIVER) if not shutil.which(p)]
    if importlib.util.find_spec("selenium") is None:
        lacking.append("the selenium package (pip install -e '.[dev]')")
    return ", ".join(lacking) or None


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """One headless Chromium for every browser test, with its console log kept."""
    lacking = missing()
    if lacking:
        pytest.skip(
            f"browser tests: {lacking} missing; install Debian's chromium and chromium-driver"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager: never the network
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


@contextmanager
def serving(
    *results: Path | str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    host: str = "127.0.0.1",
) -> Iterator[str]:
    """`stratagem view RESULTS...` (and options) on a free port, run in `cwd`, until the block
    ends; the URL it prints (with `?token=` on a `host` other than 127.0.0.1)."""
    proc = subprocess.Popen(
        [COMMAND, "view", *map(str, results), *(["--host", host] if host != "127.0.0.1" else [])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})}, cwd=cwd,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    try:
        token = r"\?token=[\w-]+" if host != "127.0.0.1" else ""
        assert re.fullmatch(rf"http://{re.escape(host)}:\d+/{token}", url), (url, proc.stderr)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert "Traceback" not in err, err


def screenshot(driver: Any, name: str) -> None:
    """docs/img/NAME.png of the page shown, when STRATAGEM_SCREENSHOTS=1 (`make screenshots`)."""
    if os.environ.get("STRATAGEM_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def rendered(page: str) -> str:
    """The DOM of `page` after its scripts ran, in headless Chromium (skipped without one)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("Chromium is not installed: the exported pages are not opened in a browser")
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
         "--dump-dom", page],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return done.stdout
