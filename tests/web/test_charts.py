"""The viewer's charts (issue 36 item 6) over a real store written by a scripted run: PD and its
variant pd-alt against TitForTat, seeds 0-2 twice each. Their numbers equal a direct computation
from the stored episodes; in Chromium, from the live server and from a static export, each chart
draws one mark per cell, round or pair, its numbers table shows the data layer's numbers, a
model id that is markup stays text, and nothing breaks the pages' CSP."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pytest
import statsmodels.api as sm
from support.browser import chromium, serving
from support.cli import cli
from support.named import only
from support.scripted_run import run_scripted
from test_browser import csp_errors, wait
from test_export import read_data

from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.llm.types import Request
from stratagem.web.data import Sources
from stratagem.web.export import experiment_dir

__all__ = ["chromium"]  # the session's browser, a fixture

NAME = "charts-test"
MODEL = "m<i>x</i>"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    calls = [0]

    def sometimes(request: Request, sample: int) -> str:  # defects on every third call
        calls[0] += 1
        return request.choices[1 if calls[0] % 3 == 0 else 0]

    out = tmp_path_factory.mktemp("charts") / "out"
    done = run_scripted(
        out, NAME, sometimes, games=["pd", "pd-alt"], seeds=[0, 1, 2], repetitions=2,
        rounds=[4], models=[{"model": f"scripted/{NAME}", "id": MODEL}],
    )  # fmt: skip
    assert done.finished == 12, done.errors
    return out


@pytest.fixture(scope="module")
def charts(results: Path) -> dict[str, Any]:
    sources = Sources([results])
    (x,) = sources.experiments()
    return {"id": x["id"], **sources.charts(only(sources), x["id"])}


def _episodes(results: Path, game: str) -> list[EpisodeData]:
    with ResultStore(results / STORE_FILE, read_only=True) as store:
        (exp,) = store.experiments()
        found = load_episodes(store, exp.id, event_kinds=("invalid", "decision"))
    return [e for e in found if e.record.game == game]


def _cr1(values: np.ndarray, seeds: list[Any]) -> tuple[float, float]:
    """The mean's cluster-robust 95% t interval by statsmodels (CR1, G-1 degrees of freedom)."""
    fit = sm.OLS(values, np.ones(len(values))).fit(
        cov_type="cluster", cov_kwds={"groups": np.array(seeds)}, use_t=True
    )
    low, high = fit.conf_int()[0]
    return float(low), float(high)


def test_the_numbers_are_a_direct_computation(results: Path, charts: dict[str, Any]) -> None:
    cells = {c["game"]: c for c in charts["cells"]}
    assert set(cells) == {"pd", "pd-alt"}
    totals = {}
    for game in ("pd", "pd-alt"):
        episodes = _episodes(results, game)
        seeds = [e.record.seed for e in episodes]
        score = np.array([sum(r.payoffs[0] for r in e.rounds) for e in episodes])
        keys = [(e.record.seed, e.spec.get("repetition")) for e in episodes]
        totals[game] = dict(zip(keys, score, strict=True))
        got = cells[game]["metrics"]["score seat 0"]
        assert got["value"] == pytest.approx(score.mean())
        assert (got["low"], got["high"]) == pytest.approx(_cr1(score, seeds))
        for r in range(1, 5):  # round r: the mean of seat 0's payoffs in it
            paid = np.array([e.rounds[r - 1].payoffs[0] for e in episodes])
            point = cells[game]["over_rounds"]["score"][r - 1]
            assert (point["round"], point["n"]) == (r, 6)
            assert point["value"] == pytest.approx(paid.mean())
            assert (point["low"], point["high"]) == pytest.approx(_cr1(paid, seeds))
        assert all(p["value"] == 1 for p in cells[game]["over_rounds"]["valid"])
    # The variant's paired difference: pd-alt minus pd at the same seed and repetition.
    (pair,) = charts["variants"]["pairs"]
    assert (pair["base"], pair["variant"], pair["pairs"]) == ("pd", "pd-alt", 6)
    keys = sorted(totals["pd"])
    d = np.array([totals["pd-alt"][k] - totals["pd"][k] for k in keys])
    got = pair["metrics"]["score seat 0"]
    assert got["value"] == pytest.approx(d.mean())
    assert (got["low"], got["high"]) == pytest.approx(_cr1(d, [k[0] for k in keys]))


def _open_charts(driver: Any, url: str) -> None:
    from selenium.webdriver.common.by import By

    csp_errors(driver)  # drain what earlier pages left in the console
    driver.get(url)
    summary = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "details.charts summary"))
    summary[0].click()
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "svg.chart")) == 3)


def _figure(driver: Any, name: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, f"figure.chart-figure.{name}")


def _table(figure: Any) -> list[list[str]]:
    """The figure's numbers table, as text (read from the DOM: the table is folded)."""
    rows = figure.parent.execute_script(
        "return [...arguments[0].querySelectorAll('details.numbers tbody tr')]"
        ".map((r) => [...r.cells].map((c) => c.textContent))",
        figure,
    )
    return [list(r) for r in rows]


def _marks(figure: Any) -> int:
    from selenium.webdriver.common.by import By

    return len(figure.find_elements(By.CSS_SELECTOR, "svg.chart circle.mark"))


def _check_charts(driver: Any, charts: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    cells = charts["cells"]
    by_cell = _figure(driver, "by-cell")
    assert _marks(by_cell) == len(cells) == 2
    assert len(by_cell.find_elements(By.CSS_SELECTOR, "line.interval")) == 2
    means = [c["metrics"]["score seat 0"] for c in cells]
    assert _table(by_cell) == [
        [c["label"], f"{m['value']:.3f}", f"{m['low']:.3f} – {m['high']:.3f}", "6"]
        for c, m in zip(cells, means, strict=True)
    ]
    # A model id that is markup is text in the chart and its table.
    labels = [t.text for t in by_cell.find_elements(By.CSS_SELECTOR, "text.row-label")]
    assert all(label.startswith(MODEL) for label in labels)
    assert not driver.find_elements(By.CSS_SELECTOR, "figure i")
    # Sorted highest first: the table follows the chart's order.
    Select(by_cell.find_elements(By.TAG_NAME, "select")[1]).select_by_value("down")
    by_cell = _figure(driver, "by-cell")
    shown = [float(r[1]) for r in _table(by_cell)]
    assert shown == sorted((round(m["value"], 3) for m in means), reverse=True)
    # Over rounds: a dot per round in its band, for the cell chosen.
    rounds = _figure(driver, "over-rounds")
    assert _marks(rounds) == 4
    assert rounds.find_elements(By.CSS_SELECTOR, "path.band") and rounds.find_elements(
        By.CSS_SELECTOR, "path.series"
    )
    first = cells[0]["over_rounds"]["score"]
    assert [r[:2] for r in _table(rounds)] == [
        [str(p["round"]), f"{p['value']:.3f}"] for p in first
    ]
    # Variant vs base: one pair, its difference beside the line at 0.
    variants = _figure(driver, "variants")
    assert _marks(variants) == 1 and variants.find_elements(By.CSS_SELECTOR, "line.zero")
    diff = charts["variants"]["pairs"][0]["metrics"]["score seat 0"]
    assert _table(variants)[0][1] == f"{diff['value']:.3f}"
    assert csp_errors(driver) == []


def test_the_charts_are_drawn_from_the_server(
    chromium: Any, results: Path, charts: dict[str, Any]
) -> None:
    with serving(results) as url:
        _open_charts(chromium, f"{url}#/x/out/{quote(charts['id'])}")
        _check_charts(chromium, charts)


def test_the_charts_are_in_the_export(
    chromium: Any,
    results: Path,
    charts: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    site = tmp_path / "site"
    code, _, err = cli(capsys, "view", str(results), "--export", str(site))
    assert code == 0, err
    name = f"{experiment_dir('out', charts['id'])}/charts.js"
    key, written = read_data(site / name)
    assert key == name and {"id": charts["id"], **written} == charts
    assert (site / "vendor/d3/d3.min.js").is_file()
    _open_charts(chromium, f"{(site / 'index.html').as_uri()}#/x/out/{quote(charts['id'])}")
    _check_charts(chromium, charts)
