"""The viewer's study charts (issue 36 item 6): MAgIC's Bradley-Terry ratings over `magic_results`
(scripted Chameleon games) are the Analysis part's leaderboard, a mark per row whose click opens
the row's episodes; ToM's belief accuracy over a store of TradeCraft games (`support.tom_games`)
is the mean of the study's KL points per turn. In Chromium, from the live server and from a
static export, each chart's marks and numbers table are the data layer's, a model id that is
markup stays text, and nothing breaks the pages' CSP."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from support.browser import chromium, serving
from support.cli import cli
from support.named import only
from support.tom_games import new_store, play
from test_analysis_browser import episodes_heading
from test_browser import csp_errors, wait
from test_export import read_data

from stratagem.analysis.report_data import ReportData
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.studies.tom.belief_accuracy import kl_points
from stratagem.studies.tom.extract import tom_data
from stratagem.web.data import Sources
from stratagem.web.export import experiment_dir

__all__ = ["chromium"]  # the session's browser, a fixture

TOM_MODEL = "t<i>x</i>"


@pytest.fixture(scope="module")
def magic(magic_results: Path) -> dict[str, Any]:
    """The charts' and the analysis' answers over `magic_results`, and each row's listed ids."""
    sources = Sources([magic_results])
    (x,) = sources.experiments()
    charts = sources.charts(only(sources), x["id"])
    listed = lambda group: sources.episodes(only(sources), x["id"], filters={"group": group})  # noqa: E731
    ids = {r["group"]: [e["id"] for e in listed(r["group"])["items"]]
           for r in charts["ratings"]["rows"]}  # fmt: skip
    return {
        "id": x["id"],
        "source": only(sources),
        "charts": charts,
        "analysis": sources.analysis(only(sources), x["id"]),
        "ids": ids,
    }


@pytest.fixture(scope="module")
def tom_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TradeCraft games of two groups whose focal agent reports V1, and a V0 baseline group."""
    home = tmp_path_factory.mktemp("tom-charts")
    store = new_store(home / STORE_FILE)
    for k, group in enumerate(("V1", "V1", "V2", "V2", "V0")):
        play(store, f"g{k}", model=TOM_MODEL, group=group, seed=k, max_turn=5)
    store.close()
    return home


@pytest.fixture(scope="module")
def tom(tom_results: Path) -> dict[str, Any]:
    sources = Sources([tom_results])
    (x,) = sources.experiments()
    return {
        "id": x["id"],
        "source": only(sources),
        "charts": sources.charts(only(sources), x["id"]),
    }


def test_the_ratings_are_the_leaderboard_s(magic: dict[str, Any]) -> None:
    rows = magic["charts"]["ratings"]["rows"]
    (board,) = (b for b in magic["analysis"]["leaderboards"] if b["id"] == "magic/bradley-terry")
    assert [r["group"] for r in rows] == [r["group"] for r in board["rows"]]
    assert [r["entity"] for r in rows] == [r["label"] for r in board["rows"]]
    assert len(rows) == 2
    for r, shown in zip(rows, board["rows"], strict=True):
        assert shown["cells"][0] == f"{r['value']:.0f} ({r['low']:.0f}–{r['high']:.0f})"
        assert r["episodes"] == shown["episodes"] == len(magic["ids"][r["group"]]) > 0
    assert rows[0]["value"] >= rows[1]["value"]  # best first
    assert magic["charts"]["belief"] is None


def test_the_belief_accuracy_is_the_mean_of_the_study_s_kl_points(
    tom_results: Path, tom: dict[str, Any]
) -> None:
    with ResultStore(tom_results / STORE_FILE, read_only=True) as store:
        (exp,) = store.experiments()
        data = ReportData.load(store, exp)
        points = kl_points(tom_data(data.episodes, store.beliefs).games)
    by_turn: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for p in points:
        by_turn[(p.model, p.group)][p.turn].append(p.kl)
    belief = tom["charts"]["belief"]
    assert [(s["model"], s["group"]) for s in belief["series"]] == sorted(by_turn)
    assert sorted(by_turn) == [(TOM_MODEL, "V1"), (TOM_MODEL, "V2")]
    for s in belief["series"]:
        turns = by_turn[(s["model"], s["group"])]
        counts = [(t, len(v)) for t, v in sorted(turns.items())]
        assert [(p["turn"], p["n"]) for p in s["points"]] == counts
        for p in s["points"]:
            assert p["value"] == pytest.approx(sum(turns[p["turn"]]) / len(turns[p["turn"]]))
        every = [v for vs in turns.values() for v in vs]
        assert (s["mean"], s["turns"], s["games"]) == (pytest.approx(sum(every) / len(every)),
                                                       len(every), 2)  # fmt: skip
    assert tom["charts"]["ratings"] is None


def _open_charts(driver: Any, url: str, name: str) -> Any:
    from selenium.webdriver.common.by import By

    csp_errors(driver)  # drain what earlier pages left in the console
    driver.get(url)
    summary = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "details.charts summary"))
    summary[0].click()
    found = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f"figure.chart-figure.{name}"))
    return found[0]


def _table(figure: Any, which: int = 0) -> list[list[str]]:
    """The figure's `which`th numbers table, as text (read from the DOM: it is folded)."""
    rows = figure.parent.execute_script(
        "return [...arguments[0].querySelectorAll('details.numbers table')[arguments[1]]"
        ".querySelectorAll('tbody tr')].map((r) => [...r.cells].map((c) => c.textContent))",
        figure,
        which,
    )
    return [list(r) for r in rows]


def _check_ratings(driver: Any, magic: dict[str, Any], magic_model: str) -> None:
    from selenium.webdriver.common.by import By

    rows = magic["charts"]["ratings"]["rows"]
    base = driver.current_url.split("#")[0]
    figure = _open_charts(driver, f"{base}#/x/{magic['source']}/{quote(magic['id'])}",
                          "ratings")  # fmt: skip
    marks = figure.find_elements(By.CSS_SELECTOR, "svg.chart a.row-link circle.mark")
    assert len(marks) == len(rows) == 2
    assert _table(figure) == [
        [r["entity"], f"{r['value']:.1f}", f"{r['low']:.1f} – {r['high']:.1f}", str(r["games"]),
         f"{r['wins']} / {r['ties']} / {r['losses']}", str(r["episodes"])]
        for r in rows
    ]  # fmt: skip
    labels = [t.text for t in figure.find_elements(By.CSS_SELECTOR, "text.row-label")]
    assert labels == [r["entity"] for r in rows] and labels[0].startswith(magic_model)
    assert figure.find_elements(By.CSS_SELECTOR, "b") == []
    assert csp_errors(driver) == []
    # A mark opens its row's episodes, as the leaderboard's row does.
    row = rows[-1]
    marks[-1].click()
    wait(driver, lambda d: f"group={quote(row['group'], safe='')}" in d.current_url)
    wait(driver, lambda d: episodes_heading(d) == f"Episodes ({row['episodes']})")
    assert row["group"] in driver.find_element(By.CSS_SELECTOR, ".group-note").text
    shown = driver.find_elements(By.CSS_SELECTOR, "main table a[href^='#/e/']")
    assert [a.text for a in shown] == magic["ids"][row["group"]]


def _check_belief(driver: Any, tom: dict[str, Any], base: str) -> None:
    from selenium.webdriver.common.by import By

    series = tom["charts"]["belief"]["series"]
    figure = _open_charts(driver, f"{base}#/x/{tom['source']}/{quote(tom['id'])}", "belief")
    lines = figure.find_elements(By.CSS_SELECTOR, "svg.chart g.line-series")
    assert len(lines) == len(series) == 2
    for line, s in zip(lines, series, strict=True):
        assert len(line.find_elements(By.CSS_SELECTOR, "circle.mark")) == len(s["points"])
        legend = line.find_element(By.CSS_SELECTOR, "text.legend").text
        assert legend == f"{TOM_MODEL} · {s['group']}"
    assert _table(figure, 0) == [
        [s["model"], s["group"], f"{s['mean']:.3f}", str(s["turns"]), str(s["games"])]
        for s in series
    ]
    assert _table(figure, 1) == [
        [s["model"], s["group"], str(p["turn"]), f"{p['value']:.3f}", str(p["n"])]
        for s in series for p in s["points"]
    ]  # fmt: skip
    assert figure.find_elements(By.CSS_SELECTOR, "i") == []
    assert csp_errors(driver) == []


def test_the_study_charts_are_drawn_from_the_server(
    chromium: Any, magic_results: Path, magic: dict[str, Any], magic_model: str,
    tom_results: Path, tom: dict[str, Any],
) -> None:  # fmt: skip
    with serving(magic_results) as url:
        chromium.get(url)
        _check_ratings(chromium, magic, magic_model)
    with serving(tom_results) as url:
        _check_belief(chromium, tom, url)


def _export(
    results: Path, site: Path, capsys: pytest.CaptureFixture[str], x: dict[str, Any]
) -> None:
    code, _, err = cli(capsys, "view", str(results), "--export", str(site))
    assert code == 0, err
    name = f"{experiment_dir(x['source'], x['id'])}/charts.js"
    key, written = read_data(site / name)
    assert key == name and written == x["charts"]


def test_the_study_charts_are_in_the_export(
    chromium: Any, magic_results: Path, magic: dict[str, Any], magic_model: str,
    tom_results: Path, tom: dict[str, Any], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    _export(magic_results, tmp_path / "magic", capsys, magic)
    chromium.get((tmp_path / "magic" / "index.html").as_uri())
    _check_ratings(chromium, magic, magic_model)
    _export(tom_results, tmp_path / "tom", capsys, tom)
    _check_belief(chromium, tom, (tmp_path / "tom" / "index.html").as_uri())


def test_a_seat_s_export_has_no_study_chart(
    tom_results: Path, tom: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ToM's KL is the opponent's private V0 against the focal's V1: it sums up what every seat
    saw, so a seat's export leaves it out, as it leaves out the analysis."""
    site = tmp_path / "seat0"
    code, _, err = cli(capsys, "view", str(tom_results), "--export", str(site),
                       "--perspective", "seat:0")  # fmt: skip
    assert code == 0, err
    written = read_data(site / experiment_dir(tom["source"], tom["id"]) / "charts.js")[1]
    assert tom["charts"]["belief"] is not None
    assert (written["belief"], written["ratings"]) == (None, None)
    assert written["cells"] == tom["charts"]["cells"]
