"""The cell-level diff of two experiments (issue 25 item 6), compare and diff in the static export
(item 7), and the "outcome" episode filter (item 2), over real stores written by scripted runs:
the same PD experiment before and after a change of replies, the second with one more seed
(unpaired episodes) and one more opponent (a cell only in B)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from starlette.testclient import TestClient
from statsmodels.stats.multitest import multipletests
from support.browser import chromium, rendered, screenshot, serving
from support.cli import cli
from support.named import only
from support.scripted_run import run_scripted

from stratagem.analysis.cells import seat_totals
from stratagem.analysis.comparisons import CLUSTER_T, PAIRED_T
from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.errors import StratagemError
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.llm.types import Request
from stratagem.web.data import Perspective, Sources
from stratagem.web.data.compare import align
from stratagem.web.data.diff import CellEpisodes, diff
from stratagem.web.data.listing import outcome_values
from stratagem.web.export import MAX_PAIRS, compare_file, diff_file, pairs_file
from stratagem.web.server import build_app

__all__ = ["chromium"]  # the session's browser, a fixture

NAME = "diff-test"
_WRAPPER = re.compile(r'window\.STRATAGEM_DATA=window\.STRATAGEM_DATA\|\|\{\};'
                      r'window\.STRATAGEM_DATA\["([^"]+)"\]=(.*);\n', re.S)  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A: PD against TitForTat, seeds 0-2, two repetitions, always cooperating. B: the same
    experiment defecting on every third call, with seed 3 too (two unpaired episodes) and an
    AlwaysDefect opponent (a cell only in B)."""
    root = tmp_path_factory.mktemp("diff")
    calls = [0]

    def sometimes(request: Request, sample: int) -> str:
        calls[0] += 1
        return request.choices[1 if calls[0] % 3 == 0 else 0]

    always = lambda request, sample: request.choices[0]  # noqa: E731
    common: dict[str, Any] = {"rounds": [4], "repetitions": 2}
    a = run_scripted(root / "a", NAME, always, seeds=[0, 1, 2], **common)
    assert a.finished == 6, a.errors
    b = run_scripted(
        root / "b", NAME, sometimes, seeds=[0, 1, 2, 3],
        opponents=["TitForTat", "AlwaysDefect"], **common,
    )  # fmt: skip
    assert b.finished == 16, b.errors
    return root / "a", root / "b"


def _episodes(folder: Path) -> tuple[str, list[EpisodeData]]:
    with ResultStore(folder / STORE_FILE, read_only=True) as store:
        (exp,) = store.experiments()
        return exp.id, load_episodes(store, exp.id, event_kinds=("invalid", "decision"))


def _cooperation(e: EpisodeData) -> float:
    assert e.record.labels is not None
    first = e.record.labels[0][0]
    return sum(r.actions[0] == first for r in e.rounds) / len(e.rounds)


def test_the_diff_equals_a_direct_paired_computation(runs: tuple[Path, Path]) -> None:
    (exp_a, eps_a), (exp_b, eps_b) = _episodes(runs[0]), _episodes(runs[1])
    got = Sources(list(runs)).diff(("a", exp_a), ("b", exp_b))
    assert got["a"] == {"source": "a", "experiment": exp_a}
    (cell,) = got["cells"]
    assert cell["opponent"] == "TitForTat" and cell["model"] == f"scripted/{NAME}"
    # Paired by episode (the same id: one experiment in two directories), in A's store order.
    by_id = {e.record.id: e for e in eps_b if e.spec.get("opponent") == "TitForTat"}
    pairs = [(e, by_id[e.record.id]) for e in eps_a]
    assert cell["pairs"] == 6 and cell["unpaired_a"] == 0 and cell["unpaired_b"] == 2
    direct = {
        "score seat 0": lambda e: seat_totals(e)[0],
        "score seat 1": lambda e: seat_totals(e)[1],
        "cooperation": _cooperation,
        "invalid rate": lambda e: 0.0,
        "cost usd": lambda e: 0.0,
    }
    rows = {m["metric"]: m for m in cell["metrics"]}
    assert list(rows) == list(direct)
    # 3 seeds of 2 repetitions each: the pairs are clustered by seed (statsmodels' CR1 OLS).
    seeds = np.array([x.record.seed for x, _ in pairs])
    raw = []
    for name, value in direct.items():
        xs = np.array([value(x) for x, _ in pairs], dtype=float)
        ys = np.array([value(y) for _, y in pairs], dtype=float)
        row = rows[name]
        assert (row["a"], row["b"], row["n"]) == (xs.mean(), ys.mean(), 6), name
        assert row["diff"] == pytest.approx((ys - xs).mean(), abs=1e-12), name
        assert (row["method"], row["clusters"], row["cluster_by"]) == (CLUSTER_T, 3, "seed")
        if np.all(ys - xs == (ys - xs)[0]):  # no spread: the interval is the value, no p
            assert (row["ci_low"], row["ci_high"], row["p"]) == (row["diff"],) * 2 + (None,)
            continue
        fit = sm.OLS(ys - xs, np.ones(6)).fit(
            cov_type="cluster", cov_kwds={"groups": seeds}, use_t=True
        )
        low, high = fit.conf_int(0.05)[0]
        assert row["ci_low"] == pytest.approx(low) and row["ci_high"] == pytest.approx(high), name
        assert row["p"] == pytest.approx(fit.pvalues[0]), name
        raw.append(fit.pvalues[0])
    # Holm across every difference shown (statsmodels' multipletests), said under the table.
    adjusted = [m["p_adjusted"] for m in cell["metrics"] if m["p"] is not None]
    assert len(raw) >= 2 and adjusted == pytest.approx(list(multipletests(raw, method="holm")[1]))
    assert got["correction"] == (
        f"p-values Holm-adjusted (family-wise error rate) across {len(raw)} comparisons."
    )
    # The defections are really there: a difference with a real interval, not a constant.
    score = rows["score seat 0"]
    assert score["diff"] != 0 and score["ci_low"] is not None and score["ci_low"] < score["ci_high"]
    assert rows["cooperation"]["diff"] < 0
    assert got["only_a"] == []
    (alone,) = got["only_b"]
    assert alone["opponent"] == "AlwaysDefect" and alone["episodes"] == 8


def _cell(positions: list[tuple[int, int]], scores: list[float]) -> dict[Any, CellEpisodes]:
    cell = CellEpisodes({"model": "m", "agent": "zs", "game": "pd", "opponent": "TitForTat",
                         "lineup": ["TitForTat"], "rounds": 4})  # fmt: skip
    for (seed, rep), value in zip(positions, scores, strict=True):
        cell.episodes.append(((str(seed), str(rep)), {"score": value}))
    return {("m", "zs", "pd", "TitForTat", 4): cell}


def test_pairs_of_one_seed_get_scipys_paired_t_and_one_position_clusters() -> None:
    """One seed, five repetitions: each pair its own cluster, the paired t. Two episodes at
    each position (specs the cell key does not tell apart): clustered by position."""
    a, b = [3.0, 5.0, 4.0, 6.0, 2.0], [4.0, 7.0, 4.5, 9.0, 2.0]
    got = diff(_cell([(0, r) for r in range(5)], a), _cell([(0, r) for r in range(5)], b))
    (row,) = got["cells"][0]["metrics"]
    want = stats.ttest_rel(b, a)
    assert (row["method"], row["cluster_by"], row["clusters"]) == (PAIRED_T, None, 5)
    assert (row["ci_low"], row["ci_high"]) == tuple(pytest.approx(x) for x in
                                                   want.confidence_interval(0.95))  # fmt: skip
    assert row["p"] == pytest.approx(want.pvalue) and row["p_adjusted"] is None
    assert got["correction"] == ""  # a single test: nothing adjusted
    twice = [(0, r) for r in range(3) for _ in range(2)]
    a, b = [*a, 1.0], [*b, 1.5]
    got = diff(_cell(twice, a), _cell(twice, b))
    (row,) = got["cells"][0]["metrics"]
    d = np.array(b) - np.array(a)
    fit = sm.OLS(d, np.ones(6)).fit(
        cov_type="cluster", cov_kwds={"groups": np.array([0, 0, 1, 1, 2, 2])}, use_t=True
    )
    assert (row["cluster_by"], row["clusters"], row["n"]) == ("seed and repetition", 3, 6)
    assert row["p"] == pytest.approx(fit.pvalues[0])


def test_the_api_answers_the_diff_and_one_line_errors(runs: tuple[Path, Path]) -> None:
    exp_a, exp_b = _episodes(runs[0])[0], _episodes(runs[1])[0]
    app = build_app(list(runs))
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            ok = client.get("/api/diff", params={"a": f"a/{exp_a}", "b": f"b/{exp_b}"})
            assert ok.status_code == 200
            want = Sources(list(runs)).diff(("a", exp_a), ("b", exp_b))
            assert ok.json() == json.loads(json.dumps(want))
            cases = {
                "/api/diff": (400, "'a' must be <source>/<experiment>, not ''"),
                f"/api/diff?a=a/{exp_a}&b=b": (400, "'b' must be <source>/<experiment>, not 'b'"),
                f"/api/diff?a=a/nope&b=b/{exp_b}": (404, "source a: unknown experiment 'nope'"),
                f"/api/diff?a=a/{exp_a}&b=7/x": (
                    404,
                    "unknown source '7': expected one of 'a', 'b'",
                ),
            }
            for url, (status, message) in cases.items():
                response = client.get(url)
                assert (response.status_code, response.json()) == (status, {"error": message})
    finally:
        app.state.data.close()


# -- the outcome filter ----------------------------------------------------------------------------


def _outcome(payoffs: tuple[float, ...]) -> str:
    """Written here from its definition, independently of the SQL that filters by it."""
    top = max(payoffs)
    winners = [k for k, p in enumerate(payoffs) if p == top]
    if len(winners) == len(payoffs):
        return "draw"
    return f"seat {winners[0]} won" if len(winners) == 1 else "tie"


def _by_outcome(sources: Sources, experiment: str, values: list[str]) -> dict[str, set[str]]:
    return {
        v: {
            i["id"]
            for i in sources.episodes(only(sources), experiment, filters={"outcome": v})["items"]
        }
        for v in values
    }


def test_the_outcome_filter_follows_the_stored_payoffs(runs: tuple[Path, Path]) -> None:
    experiment, episodes = _episodes(runs[1])
    got = _by_outcome(Sources([runs[1]]), experiment, outcome_values(2))
    want: dict[str, set[str]] = {v: set() for v in outcome_values(2)}
    for e in episodes:
        assert e.record.payoffs is not None
        want[_outcome(e.record.payoffs)].add(e.record.id)
    assert got == want
    assert want["draw"] and want["seat 1 won"]  # both kinds are there to be told apart


def test_the_outcome_filter_reads_the_spy_s_win_flag(chameleon: tuple[Path, str]) -> None:
    sources = Sources([chameleon[0]])
    ((exp,),) = [[x["id"] for x in sources.experiments()]]
    with ResultStore(chameleon[0] / STORE_FILE, read_only=True) as store:
        (record,) = store.episodes(exp)
        (outcome,) = [e.data for e in store.events(record.id) if e.kind == "outcome"]
    assert record.payoffs is not None
    got = _by_outcome(sources, exp, outcome_values(3))
    won = "spy won" if outcome["win_flag"] != 0 else "spy lost"
    matched = {v for v, ids in got.items() if ids}
    assert matched == {won, _outcome(record.payoffs)}


def test_a_bad_outcome_is_one_line(runs: tuple[Path, Path]) -> None:
    experiment = _episodes(runs[1])[0]
    with pytest.raises(StratagemError) as caught:
        Sources([runs[1]]).episodes("b", experiment, filters={"outcome": "seat one won"})
    assert str(caught.value) == (
        "filter outcome='seat one won': expected 'seat K won', draw, tie, spy won, spy lost"
    )
    app = build_app([runs[1]])
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            base = f"/api/experiments/b/{experiment.encode().hex()}/episodes"
            answer = client.get(base, params={"outcome": "seat 1 won"}).json()
            items = Sources([runs[1]]).episodes("b", experiment, filters={"outcome": "seat 1 won"})
            assert answer == json.loads(json.dumps(items)) and answer["total"] > 0
            bad = client.get(base, params={"outcome": "seat one won"})
            assert bad.status_code == 400 and "\n" not in bad.json()["error"]
    finally:
        app.state.data.close()


# -- compare and diff in the static export -------------------------------------------------------


def _read(path: Path) -> Any:
    found = _WRAPPER.fullmatch(path.read_text(encoding="utf-8"))
    assert found is not None, path
    assert found.group(1) == path.as_posix().split("/site/", 1)[1]
    return json.loads(found.group(2))


def _export(capsys: pytest.CaptureFixture[str], out: Path, *argv: str) -> None:
    code, _, err = cli(capsys, "view", *argv, "--export", str(out))
    assert code == 0, err


def test_the_export_holds_the_pairs_their_alignments_and_the_diffs(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    _export(capsys, out, *map(str, runs))
    sources = Sources(list(runs))
    exp_a, exp_b = _episodes(runs[0])[0], _episodes(runs[1])[0]
    a, b = ("a", exp_a), ("b", exp_b)
    assert _read(out / "data/diffs.js") == [
        {"a": {"source": "a", "experiment": exp_a}, "b": {"source": "b", "experiment": exp_b},
         "shared": 1}
    ]  # fmt: skip
    assert _read(out / diff_file(a, b)) == json.loads(json.dumps(sources.diff(a, b)))
    pairs = []
    for e in _episodes(runs[0])[1]:  # each episode's pairs file: what the server offers
        offered = _read(out / pairs_file("a", e.record.id))
        assert offered == {"pairs": sources.pairs("a", e.record.id), "left_out": 0,
                           "bound": MAX_PAIRS}  # fmt: skip
        pairs += offered["pairs"]
    assert len(pairs) == 6  # every pair's episodes exported
    for pair in pairs:
        one = (pair["a"]["source"], pair["a"]["episode"])
        two = (pair["b"]["source"], pair["b"]["episode"])
        for seen in map(Perspective, (None, 0, 1)):
            aligned = align(sources.episode(*one, seen), sources.episode(*two, seen))
            assert _read(out / compare_file(one, two, seen)) == json.loads(json.dumps(aligned))


def test_an_exports_pairs_are_only_those_of_its_episodes(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    _export(capsys, out, *map(str, runs), "--max-per-cell", "1", "--perspective", "seat:1")
    found = [_read(f) for f in sorted((out / "data/p" / b"a".hex()).iterdir())]
    (pair,) = [p for offered in found for p in offered["pairs"]]
    assert sum(offered["left_out"] for offered in found) == 0  # the others are not exported
    one, two = (
        (pair["a"]["source"], pair["a"]["episode"]),
        (pair["b"]["source"], pair["b"]["episode"]),
    )
    assert one[1] == two[1]  # the first episode of the cell on both sides
    assert sorted(
        p.name for p in (out / compare_file(one, two, Perspective(1))).parent.iterdir()
    ) == ["seat-1.js"]


def test_the_diff_and_compare_pages_open_from_file_urls(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    _export(capsys, out, *map(str, runs))
    exp_a, exp_b = _episodes(runs[0])[0], _episodes(runs[1])[0]
    index = (out / "index.html").as_uri()
    dom = rendered(f"{index}#/diff")
    assert 'class="diff-pair"' in dom and f"(b/{exp_b})" in dom
    dom = rendered(f"{index}#/diff/a/{exp_a}/b/{exp_b}")
    assert "Diff of two experiments" in dom and "score seat 0" in dom
    assert "Holm p" in dom and "p-values Holm-adjusted (family-wise error rate) across" in dom
    assert "(unpaired: A 0, B 2)" in dom and "Cells only in B" in dom and "AlwaysDefect" in dom
    pair = Sources(list(runs)).pairs("a", _episodes(runs[0])[1][0].record.id)[0]
    episode = pair["a"]["episode"]
    dom = rendered(f"{index}#/compare/a/{episode}/b/{pair['b']['episode']}?perspective=seat:1")
    assert "Compare two episodes" in dom and (
        "First difference at round" in dom or "the same" in dom
    )
    assert "Error" not in dom
    # The outcome filter runs in the exported page too, over the export's index.
    won = Sources([runs[1]]).episodes("b", exp_b, filters={"outcome": "seat 1 won"})["total"]
    assert won > 0 and f"Episodes ({won})" in rendered(
        f"{index}#/x/b/{exp_b}?outcome=seat%201%20won"
    )


def test_the_experiments_page_leads_to_the_diff_table(
    chromium: Any, runs: tuple[Path, Path]
) -> None:
    """Experiments -> "diff two experiments..." -> A and B picked -> the table, in Chromium."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    driver = chromium
    with serving(*runs) as url:
        driver.get(url)
        wait = WebDriverWait(driver, 20)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "a.diff-link"))[0].click()
        form = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "form.diff-form"))[0]
        exp_a, exp_b = _episodes(runs[0])[0], _episodes(runs[1])[0]
        Select(form.find_element(By.NAME, "a")).select_by_value(f"a/{exp_a}")
        Select(form.find_element(By.NAME, "b")).select_by_value(f"b/{exp_b}")
        form.find_element(By.TAG_NAME, "button").click()
        wait.until(lambda d: "B − A" in d.find_element(By.ID, "main").text)
        rows = driver.find_elements(By.CSS_SELECTOR, "main .grid tbody tr")
        want = Sources(list(runs)).diff(("a", exp_a), ("b", exp_b))
        assert len(rows) == sum(len(c["metrics"]) for c in want["cells"])
        first = want["cells"][0]["metrics"][0]
        cells = [td.text for td in rows[0].find_elements(By.TAG_NAME, "td")]
        fmt = lambda v: str(int(v)) if float(v).is_integer() else f"{v:.3f}"  # noqa: E731
        p = lambda v: "—" if v is None else f"{float(f'{v:.2g}'):g}"  # noqa: E731
        assert cells[1:9] == [
            first["metric"], fmt(first["a"]), fmt(first["b"]), fmt(first["diff"]),
            f"[{fmt(first['ci_low'])}, {fmt(first['ci_high'])}]", p(first["p"]),
            p(first["p_adjusted"]), "6 in 3 clusters by seed",
        ]  # fmt: skip
        assert want["correction"] and want["correction"] in driver.find_element(By.ID, "main").text
        assert "Cells only in B" in driver.find_element(By.ID, "main").text
        screenshot(driver, "diff")
        csp = [e for e in driver.get_log("browser") if "Content Security Policy" in e["message"]]
        assert csp == []


def test_the_outcome_filter_is_offered_on_the_experiment_page(
    chromium: Any, runs: tuple[Path, Path]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    experiment = _episodes(runs[1])[0]
    won = Sources([runs[1]]).episodes("b", experiment, filters={"outcome": "seat 1 won"})["total"]
    driver = chromium
    with serving(runs[1]) as url:
        driver.get(f"{url}#/x/b/{experiment}")
        wait = WebDriverWait(driver, 20)
        form = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "form.filters"))[0]
        Select(form.find_element(By.NAME, "outcome")).select_by_value("seat 1 won")
        form.find_element(By.TAG_NAME, "button").click()
        wait.until(lambda d: f"Episodes ({won})" in d.find_element(By.ID, "main").text)
        assert "outcome=seat+1+won" in driver.current_url and 0 < won < 16
