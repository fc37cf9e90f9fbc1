"""Screenshots of the viewer's Charts part and cells table, for docs/viewer.md (issue 36).

Builds two results directories in a temporary folder, offline and in under a minute: (1) a
seed-003-style store of imported games (the counterfactual study's repeated PD, Stag Hunt and
RPS and their variants, three prompts against the study's bots and each other, with seeded random
moves and a few forfeits), written as the documented import JSONL (docs/episode-format.md) and
read in by `stratagem import`; (2) a short MAgIC run (the five games' setting 0, the vanilla and
the PGM challengers against replaying defenders) on a scripted model. It serves both with
`stratagem view` and saves, with headless Chromium (selenium, as the browser tests use it):

    docs/img/viewer-charts-seed003.png  docs/img/viewer-cells-seed003.png
    docs/img/viewer-charts-magic.png    docs/img/viewer-cells-magic.png

    .venv/bin/python scripts/viewer_screenshots.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
WINDOW = (1280, 900)
STRATAGEM = [sys.executable, "-c", "from stratagem.cli import main; main()"]
"""The `stratagem` command of this interpreter's install."""
GAMES = {"pd/pd": 12, "pd/pd-alt": 12, "pd/sh": 12, "rps/eq1": 12, "rps/eq1-alt": 12}
"""seed-003's games (spec §3.7) with their rounds, a few of them: a small store draws fast."""
PROMPTS = ("zs", "cot", "spp")
MODELS = ("Model A", "Model B")
MAGIC = """\
name: magic-scripted
output: {out}
models:
  - id: scripted
    model: scripted/random:7
agents:
  - {{name: magic, kind: magic, max_reasks: 1, options: {{probes: false}}}}
  - {{name: pgm, kind: pgm, max_reasks: 1, options: {{probes: false}}}}
  - {{name: fixed, kind: magic, max_reasks: 1, options: {{replay: true, probes: false}}}}
games: [chameleon/0, undercover/0, cost-sharing/0, npd3/0, public-good/0]
lineups:
  - {{challenger: magic, defenders: fixed, by: side}}
  - {{challenger: pgm, defenders: fixed, by: side}}
seeds: [0, 1, 2]
retry: {{base_delay: 0}}
"""


def seed003_lines(path: Path, seed: int = 3) -> int:
    """seed-003-style games as import lines (docs/episode-format.md, "From seed-003")."""
    from stratagem.games.catalog import get_stage

    rng = random.Random(seed)
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for game, n_rounds in GAMES.items():
            stage = get_stage(game.split("/", 1)[1])
            labels, table = stage.labels, stage.payoffs.tolist()
            bots = ["srep", "pp", "mf" if len(labels[0]) == 2 else "ap", "tft-br"]
            for m, model in enumerate(MODELS):
                bias = 0.55 + 0.2 * m  # how often the model plays its first action
                for row in PROMPTS:
                    for opponent in bots:
                        for k in range(3):
                            rounds: list[dict[str, Any]] = []
                            for t in range(n_rounds):
                                a = 0 if rng.random() < bias else rng.randrange(len(labels[0]))
                                b = rng.randrange(len(labels[1]))
                                moves: list[str | None] = [labels[0][a], labels[1][b]]
                                if rng.random() < 0.01:
                                    moves[0] = None  # a forfeit: an unparsable reply
                                valid = None not in moves
                                pay = table[a][b] if valid else [0.0, 0.0]
                                rounds.append({"round": t + 1, "actions": moves, "payoffs": pay,
                                               "valid": valid,
                                               "tokens": [rng.randrange(80, 600), 0]})  # fmt: skip
                            line = {
                                "experiment": {"id": "seed-003", "name": "seed-003 (generated)"},
                                "game": game, "seed": k,
                                "spec": {"model": model, "iteration": k},
                                "players": [
                                    {"name": row, "kind": "llm", "model": f"provider/model-{m}"},
                                    {"name": opponent, "kind": "strategy"},
                                ],
                                "rounds": rounds,
                                "payoffs": [sum(r["payoffs"][i] for r in rounds) for i in (0, 1)],
                            }  # fmt: skip
                            out.write(json.dumps(line) + "\n")
                            count += 1
    return count


def build(home: Path) -> tuple[Path, Path]:
    """The two results directories: `seed003` (imported) and `magic` (played)."""
    seed003, magic = home / "seed003", home / "magic"
    seed003.mkdir()
    lines = home / "seed003.jsonl"
    seed003_lines(lines)
    subprocess.run([*STRATAGEM, "import", str(lines), "--store", str(seed003 / "stratagem.db")],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    config = home / "magic.yaml"
    config.write_text(MAGIC.format(out=magic), encoding="utf-8")
    subprocess.run([*STRATAGEM, "run", str(config)], check=True, stdout=subprocess.DEVNULL)
    return seed003, magic


@contextmanager
def serving(*dirs: Path) -> Iterator[str]:
    """`stratagem view DIRS` on a free port until the block ends; its URL."""
    proc = subprocess.Popen([*STRATAGEM, "view", *map(str, dirs)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    try:
        if not re.fullmatch(r"http://127\.0\.0\.1:\d+/", url):
            raise SystemExit(f"stratagem view did not start: {url}")
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or ""
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager: never the network
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


def wait(driver: Any, check: Any, timeout: float = 60) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            found = check(driver)
        except Exception:  # a page redrawn while read: look again
            found = None
        if found:
            return found
        time.sleep(0.2)
    raise SystemExit("the page never showed what was awaited")


def shoot(driver: Any, url: str, name: str, out: Path) -> None:
    """The Charts part (opened, drawn) and the cells table of the experiment in results
    directory `name`, each scrolled to."""
    from selenium.webdriver.common.by import By

    with urllib.request.urlopen(f"{url}api/experiments") as answer:
        (experiment,) = [x["id"] for x in json.load(answer) if x["source"] == name]

    driver.get("about:blank")
    driver.get(f"{url}#/x/{quote(name, safe='')}/{quote(experiment, safe='')}")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".grid tbody tr"))
    summary = driver.find_element(By.CSS_SELECTOR, "details.charts summary")
    summary.click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "details.charts svg.chart"))
    time.sleep(0.5)
    driver.execute_script("document.querySelector('details.charts').scrollIntoView(true)")
    driver.save_screenshot(str(out / f"viewer-charts-{name}.png"))
    summary.click()  # folded again: the cells table comes up under the page's head
    cells = driver.find_element(By.XPATH, "//h2[text()='Cells']")
    driver.execute_script("arguments[0].scrollIntoView(true)", cells)
    time.sleep(0.3)
    driver.save_screenshot(str(out / f"viewer-cells-{name}.png"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        seed003, magic = build(Path(tmp))
        driver = browser()
        try:
            with serving(seed003, magic) as url:
                shoot(driver, url, "seed003", args.out)
                shoot(driver, url, "magic", args.out)
        finally:
            driver.quit()
    for name in ("charts-seed003", "cells-seed003", "charts-magic", "cells-magic"):
        path = args.out / f"viewer-{name}.png"
        print(f"{path} ({path.stat().st_size // 1024} kB)")


if __name__ == "__main__":
    main()
