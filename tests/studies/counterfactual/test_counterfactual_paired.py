"""seed-003's paired counterfactual analysis against independent computations on the same runs:
scipy's paired t-test, statsmodels' cluster-robust OLS and its Holm correction; the report and
the tidy table print those numbers."""

from __future__ import annotations

import html
import json
import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests

import stratagem
from stratagem.analysis.comparisons import CLUSTER_T, PAIRED_T
from stratagem.analysis.paired import paired_difference
from stratagem.experiments.episode_io import import_episodes
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.studies import build_report
from stratagem.studies.counterfactual import paired_analysis as pa
from stratagem.studies.counterfactual import tables as ct

LABELS = {"pd": ("cooperation", "defection"), "sh": ("stag", "hare")}
COOPERATE = {"pd": 0.3, "sh": 0.8}
"""Player 0 cooperates more often in the variant: a real difference, with noise from run to run."""
ROUNDS = 8


def _logs(path: Path, runs: list[tuple[int, int]], prompts: tuple[str, ...],
          opponents: tuple[str, ...]) -> Path:  # fmt: skip
    """seed-003 logs (docs/episode-format.md) of the pd family: pd and sh, every prompt against
    every opponent, once per (seed, repetition), moves drawn at random."""
    rng = random.Random(11)
    lines = []
    for prompt in prompts:
        for opponent in opponents:
            for game in ("pd", "sh"):
                for seed, rep in runs:
                    coop, defect = LABELS[game]
                    moves = [
                        [coop if rng.random() < COOPERATE[game] else defect,
                         coop if rng.random() < 0.5 else defect]
                        for _ in range(ROUNDS)
                    ]  # fmt: skip
                    lines.append({
                        "game": f"pd/{game}", "seed": seed,
                        "players": [{"name": prompt, "kind": "llm", "model": "m"}, opponent],
                        "spec": {"seed": seed, "repetition": rep},
                        "rounds": [{"actions": m, "tokens": [100, None]} for m in moves],
                    })  # fmt: skip
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    return path


def _store(tmp_path: Path, runs: list[tuple[int, int]], prompts: tuple[str, ...],
           opponents: tuple[str, ...]) -> list[ct.StudyGame]:  # fmt: skip
    with ResultStore(tmp_path / STORE_FILE) as store:
        import_episodes(store, _logs(tmp_path / "logs.jsonl", runs, prompts, opponents),
                        experiment_id="logs", source="import:seed-003")  # fmt: skip
        games, skipped = ct.load_study_games(store, "logs")
    assert skipped == 0
    return games


def _by_run(games: list[ct.StudyGame], cell: pa.PairedCell, game: str, metric: str) -> dict[
    str, float
]:  # fmt: skip
    return {
        g.run: float(v)
        for g in games
        if (g.model, g.prompt, g.opponent, g.game) == (cell.model, cell.prompt, cell.opponent, game)
        and (v := g.metrics[metric]) is not None
    }


ONE_SEED = [(0, rep) for rep in range(6)]


@pytest.fixture(scope="module")
def one_seed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[ct.StudyGame]]:
    root = tmp_path_factory.mktemp("paired")
    return root, _store(root, ONE_SEED, ("zs", "cot"), ("tft-br", "srep"))


def test_each_difference_is_scipys_paired_t_and_holm_is_statsmodels(
    one_seed: tuple[Path, list[ct.StudyGame]],
) -> None:
    games = one_seed[1]
    analysis = pa.paired_analysis(games, ["pd", "sh"])
    assert len(analysis.cells) == 4 and analysis.metrics == ("points", "cooperation", "m")
    for metric in analysis.metrics:
        raw: list[float] = []
        for cell in analysis.cells:
            c = cell.differences[metric]
            a, b = _by_run(games, cell, "pd", metric), _by_run(games, cell, "sh", metric)
            assert list(a) == list(b) and len(a) == 6  # every run paired
            x, y = np.array(list(a.values())), np.array(list(b.values()))
            want = stats.ttest_rel(y, x)
            assert c.estimate == pytest.approx(float(np.mean(y - x)), abs=1e-12)
            assert (c.n, c.clusters, c.df, c.method) == (6, 6, 5, PAIRED_T)
            assert c.cluster_by is None and c.paired_by == "seed and repetition"
            if math.isnan(want.pvalue):  # every run the same difference
                assert c.p is None
                continue
            low, high = want.confidence_interval(0.95)
            assert (c.ci_low, c.ci_high) == (pytest.approx(low), pytest.approx(high))
            assert c.p == pytest.approx(want.pvalue)
            raw.append(want.pvalue)
        adjusted = [
            p for cell in analysis.cells if (p := cell.differences[metric].p_adjusted) is not None
        ]
        assert adjusted == pytest.approx(list(multipletests(raw, method="holm")[1]))
        assert analysis.statements[metric] == (
            f"p-values Holm-adjusted (family-wise error rate) across {len(raw)} comparisons."
        )
    # Player 0 cooperates more in sh: its cooperation rate rises, and the test sees it.
    cooperation = [c.differences["cooperation"] for c in analysis.cells]
    assert all(d.estimate > 0 for d in cooperation) and any(pa.claimed(d) for d in cooperation)


def test_the_bootstrap_stays_available(one_seed: tuple[Path, list[ct.StudyGame]]) -> None:
    games = one_seed[1]
    cell = pa.paired_analysis(games, ["pd", "sh"]).cells[0]
    a, b = _by_run(games, cell, "pd", "points"), _by_run(games, cell, "sh", "points")
    want = paired_difference(list(a.values()), list(b.values()), n_boot=1000, seed=0)
    got = cell.bootstrap("points")
    assert got is not None and got.p is None and got.method == "paired percentile bootstrap"
    assert (got.estimate, got.ci_low, got.ci_high) == (want.mean_diff, want.ci_low, want.ci_high)
    assert cell.bootstrap("validity") is None  # not compared


def test_runs_of_several_seeds_are_clustered_by_seed(tmp_path: Path) -> None:
    runs = [(seed, rep) for seed in range(4) for rep in range(3)]
    games = _store(tmp_path, runs, ("zs",), ("tft-br",))
    (cell,) = pa.paired_analysis(games, ["pd", "sh"]).cells
    c = cell.differences["points"]
    a, b = _by_run(games, cell, "pd", "points"), _by_run(games, cell, "sh", "points")
    seeds = {g.run: g.seed for g in games}
    d = np.array([b[r] - a[r] for r in a])
    fit = sm.OLS(d, np.ones(len(d))).fit(
        cov_type="cluster", cov_kwds={"groups": np.array([int(seeds[r]) for r in a])}, use_t=True
    )
    assert (c.method, c.cluster_by, c.clusters, c.n, c.df) == (CLUSTER_T, "seed", 4, 12, 3)
    assert c.estimate == pytest.approx(fit.params[0])
    low, high = fit.conf_int(0.05)[0]
    assert (c.ci_low, c.ci_high, c.p) == (
        pytest.approx(low), pytest.approx(high), pytest.approx(fit.pvalues[0]))  # fmt: skip
    assert c.p_adjusted is None and pa.PairedAnalysis((cell,), {}).metrics  # one test: no Holm
    assert c.text(1).endswith(", n=12 pairs in 4 seeds")


def test_the_report_prints_each_difference_and_the_correction_under_its_table(
    one_seed: tuple[Path, list[ct.StudyGame]],
) -> None:
    root, games = one_seed
    analysis = pa.paired_analysis(games, ["pd", "sh"])
    page = html.unescape(build_report(root, "logs").read_text(encoding="utf-8"))
    for metric, title in (("points", "total points"), ("cooperation", "cooperation rate"),
                          ("m", "comprehension round m")):  # fmt: skip
        table = page[page.index(f"Paired differences: {title}") :]
        table = table[: table.index("</figure>")]
        for cell in analysis.cells:
            c = cell.differences[metric]
            text = c.text(pa.DECIMALS[metric])
            css = "num best" if pa.claimed(c) else "num"
            assert f'<td class="{css}">{text}</td>' in table, text
        assert f"Note: {analysis.statements[metric]}" in table
    # The paper's tables keep their layout: mean ± sd over runs, nothing added.
    paper = ct.opponent_table(games, "sh", "points", "t", "c")
    first = page[page.index("Total points: sh") :]
    first = first[: first.index("</figure>")]
    assert all(f">{cell.text}</td>" in first for row in paper.rows for cell in row[2:])
    assert "Holm" not in first and "[" not in first


def test_the_tidy_table_has_each_variant_games_comparison(
    one_seed: tuple[Path, list[ct.StudyGame]],
) -> None:
    root, games = one_seed
    cells = {(c.prompt, c.opponent): c for c in pa.paired_analysis(games, ["pd", "sh"]).cells}
    with stratagem.open(root, experiment="logs") as frames:
        table = frames.study("counterfactual")
    assert len(table) == len(games)
    for _, row in table.iterrows():
        for metric in pa.PAIRED_METRICS:
            got = [row[f"{metric}_{k}"] for k in ("diff", "ci_low", "ci_high", "p", "p_adjusted")]
            if row["game"] == "pd":  # the default game: nothing to compare with
                assert all(pd.isna(v) for v in [*got, row[f"{metric}_method"]])
                continue
            c = cells[(row["prompt"], row["opponent"])].differences[metric]
            want = [c.estimate, c.ci_low, c.ci_high, c.p, c.p_adjusted]
            assert [None if pd.isna(v) else v for v in got] == want
            assert row[f"{metric}_method"] == "paired t"
