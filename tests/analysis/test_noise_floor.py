"""The noise floor (issue 35 item 2) on a scripted run with `replicates: 1`: each cell against its
copy is scipy's paired t on the same pairs (computed from the results' DataFrames), the floor is
t(0.975, C) · √(mean Δ²), cells and frames keep the copies apart, the report shows the section,
and the plan says what the copies are for."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import yaml
from scipy import stats
from support.cli import cli
from support.report_html import tables
from support.small_experiment import experiment

import stratagem
from stratagem.analysis.cells import cell_table
from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.noise_floor import (
    NoiseFloor,
    ReplicateDifference,
    floor_of,
    noise_floor,
    replicate_differences,
)
from stratagem.analysis.report import build_report
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_registry import _REGISTRY, StudySections, register_sections
from stratagem.analysis.report_views import Section
from stratagem.analysis.tallies import EpisodeTally, episode_tallies
from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.replicates import replicate_of
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore

OPPONENTS = ["TitForTat", "AlwaysDefect"]
SEEDS = list(range(8))


def play(output: Path, **overrides: Any) -> None:
    data = experiment(output, opponents=OPPONENTS, rounds=[6], seeds=SEEDS)
    data |= overrides
    data |= {"name": "nf", "output": str(output), "retry": {"base_delay": 0}}
    summary = asyncio.run(Runner(config_from_dict(data, "nf"), show_progress=False).run())
    assert summary.finished == summary.episodes > 0 and not summary.errors


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("noise-floor")
    play(folder, replicates=1)
    return folder


def per_episode(folder: Path) -> pd.DataFrame:
    """Seat 0's score and cooperation rate per episode, with its cell and pair, from the
    DataFrames alone."""
    with stratagem.open(folder) as results:
        episodes = results.episodes
        seat0 = results.seats[results.seats["seat"] == 0][["episode_id", "payoff"]]
        rounds = results.rounds[results.rounds["seat"] == 0]
    specs = episodes["spec"].map(json.loads)
    frame = episodes[["episode_id", "seed", "replicate"]].assign(
        opponent=specs.map(lambda s: s["opponent"]), repetition=specs.map(lambda s: s["repetition"])
    )
    moves = rounds.assign(coop=(rounds["action"] == "cooperate") & rounds["valid"])
    moves = moves.groupby("episode_id").agg(coop=("coop", "sum"), valid=("valid", "sum"))
    frame = frame.merge(seat0, on="episode_id").merge(moves, on="episode_id")
    return frame.assign(cooperation=frame["coop"] / frame["valid"], score=frame["payoff"])


def test_each_cell_against_its_copy_is_the_paired_t(played: Path) -> None:
    frame = per_episode(played)
    assert frame["replicate"].value_counts().to_dict() == {0: 16, 1: 16}
    tested = 0
    with ResultStore(played / STORE_FILE) as store:
        data = ReportData.load(store, store.experiment("nf"))
        for metric in ("cooperation", "score"):
            floor = noise_floor(data, metric)
            assert floor is not None and floor.cells == 2
            deltas = []
            for d in floor.differences:
                assert d.cell[1] == "plain" and d.replicate == 1
                cell = frame[frame["opponent"] == d.cell[3]]
                own = cell[cell["replicate"] == 0].set_index(["seed", "repetition"])[metric]
                copy = cell[cell["replicate"] == 1].set_index(["seed", "repetition"])[metric]
                copy = copy.loc[own.index]
                expected = stats.ttest_rel(copy, own)
                low, high = expected.confidence_interval(0.95)
                c = d.comparison
                assert c.n == len(SEEDS) and c.clusters == len(SEEDS)
                assert c.estimate == pytest.approx(float((copy - own).mean()))
                if c.p is None:  # every difference the same: no p-value
                    assert np.isnan(expected.pvalue)
                else:
                    assert c.p == pytest.approx(expected.pvalue)
                    assert (c.ci_low, c.ci_high) == pytest.approx((low, high))
                    tested += 1
                deltas.append(float((copy - own).mean()))
            rms = math.sqrt(sum(x * x for x in deltas) / len(deltas))
            assert floor.rms == pytest.approx(rms)
            assert floor.floor == pytest.approx(stats.t.ppf(0.975, 2) * rms)
            assert floor.mean_abs == pytest.approx(np.mean(np.abs(deltas)))
            assert floor.text() == f"noise floor (2 replicate cells): ±{floor.floor:.2f}"
            # The fast path the viewer uses (tallies read by SQL) gives the same floor.
            fast = noise_floor(episode_tallies(store, "nf"), metric)
            assert fast is not None and fast.floor == pytest.approx(floor.floor)
    # Scripted sampling differs between a cell and its copy: the floor measures something.
    assert tested >= 3


def test_where_chooses_the_cells_and_none_without_copies(played: Path, tmp_path: Path) -> None:
    with ResultStore(played / STORE_FILE) as store:
        data = ReportData.load(store, store.experiment("nf"))
        one = noise_floor(data, "score", where=lambda key: key[3] == "TitForTat")
        assert one is not None and one.cells == 1
        assert [d.cell[3] for d in one.differences] == ["TitForTat"]
        only = one.differences[0].comparison.estimate
        assert one.floor == pytest.approx(stats.t.ppf(0.975, 1) * abs(only))
        assert noise_floor(data, "score", where=lambda key: False) is None
        # A study's own metric by episode id: here the score again, from the DataFrames.
        frame = per_episode(played)
        points = dict(zip(frame["episode_id"], frame["score"].astype(float), strict=True))
        own = noise_floor(data, "points", values=points)
        score = noise_floor(data, "score")
        assert own is not None and score is not None and own.floor == pytest.approx(score.floor)
        assert own.note().startswith(f"Noise floor of the points: ±{own.floor:.2f}, the ")
        with pytest.raises(StratagemError, match="metric"):
            noise_floor(data, "points")
    play(tmp_path, seeds=[0])
    with ResultStore(tmp_path / STORE_FILE) as store:
        assert noise_floor(ReportData.load(store, store.experiment("nf")), "score") is None


def test_cells_and_frames_keep_the_copies_apart(played: Path) -> None:
    frame = per_episode(played)
    with ResultStore(played / STORE_FILE) as store:
        cells = cell_table(store, "nf")
        fast = {t.key for t in episode_tallies(store, "nf")}  # the viewer's and `status`' cells
    assert fast == {c.key for c in cells}
    assert sorted((c.agent, c.opponent, c.replicate) for c in cells) == [
        ("plain", "AlwaysDefect", 0), ("plain", "TitForTat", 0),
        ("plain [replicate 1]", "AlwaysDefect", 1), ("plain [replicate 1]", "TitForTat", 1),
    ]  # fmt: skip
    for c in cells:
        mine = frame[(frame["opponent"] == c.opponent) & (frame["replicate"] == c.replicate)]
        assert c.episodes == len(SEEDS)
        assert c.score == pytest.approx(mine["score"].mean())
        assert c.cooperation == pytest.approx(mine["coop"].sum() / mine["valid"].sum())


def test_several_repetitions_of_a_seed_are_a_cluster() -> None:
    """With 2 repetitions per seed the interval is the CR1 cluster-robust one, clusters the
    seeds: statsmodels' OLS of the differences on a constant, clustered by seed."""
    rng = np.random.default_rng(3)
    tallies = []
    for k in (0, 1):
        for seed in range(6):
            for rep in range(2):
                total = float(rng.integers(0, 30))
                key = ("m", "plain" if k == 0 else "plain [replicate 1]", "pd", "tft", 6)
                name = f"{k}-{seed}-{rep}"
                tally = EpisodeTally(name, seed, rep, key, ("a", "b"), (total, 0.0), 3, 6, 0)
                tallies.append(tally._replace(replicate=k))
    (d,) = replicate_differences(tallies, "score")
    own = {(t.seed, t.repetition): t.totals[0] for t in tallies if t.replicate == 0}
    diffs = [t.totals[0] - own[(t.seed, t.repetition)] for t in tallies if t.replicate == 1]
    groups = [t.seed for t in tallies if t.replicate == 1]
    fit = sm.OLS(np.array(diffs), np.ones((len(diffs), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": np.array(groups)}, use_t=True
    )
    assert d.comparison.estimate == pytest.approx(fit.params[0])
    assert (d.comparison.ci_low, d.comparison.ci_high) == pytest.approx(tuple(fit.conf_int()[0]))
    assert d.comparison.clusters == 6 and d.comparison.cluster_by == "seed"
    floor = floor_of([d], "score")
    assert floor is not None and floor.floor == pytest.approx(
        stats.t.ppf(0.975, 1) * abs(fit.params[0])
    )


def test_the_report_shows_the_floor_and_each_cell(played: Path, tmp_path: Path) -> None:
    found = tables(build_report(played).read_text(encoding="utf-8"))
    with ResultStore(played / STORE_FILE) as store:
        data = ReportData.load(store, store.experiment("nf"))
        floors = {m: noise_floor(data, m) for m in ("cooperation", "score")}
    summary = found["Noise floor per metric"]
    assert summary[0][:3] == ["Metric", "Noise floor", "Cells"]
    for title, metric in (("Cooperation", "cooperation"), ("Score", "score")):
        row = next(r for r in summary if r[0] == title)
        f = floors[metric]
        assert f is not None and row[1:4] == [f"±{f.floor:.3f}", "2", "2"]
    each = found["Each cell against its replicate"]
    assert each[0] == ["Model", "Agent", "Game", "Opponent", "Rounds", "Replicate",
                       "Cooperation Δ", "Score Δ", "Invalid rate Δ", "Pairs"]  # fmt: skip
    score = floors["score"]
    assert score is not None
    for d in score.differences:
        row = next(r for r in each[1:] if r[3] == d.cell[3])
        c = d.comparison
        assert row[7] == f"{c.estimate:+.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}]"
        assert row[9] == str(len(SEEDS))
    play(tmp_path, seeds=[0])
    assert "Noise floor" not in build_report(tmp_path).read_text(encoding="utf-8")


def test_the_plan_says_what_the_copies_are_for(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = experiment(tmp_path, opponents=OPPONENTS, seeds=[0, 1, 2], replicates=1)
    data["analysis"] = {"compare": [{"axis": "opponent", "a": "TitForTat", "b": "AlwaysDefect"}]}
    file = tmp_path / "exp.yaml"
    file.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, out, err = cli(capsys, "run", str(file), "--dry-run")
    assert code == 0, err
    assert "plan: 12 episodes to play" in out  # 2 cells x 3 seeds, and their copies
    assert (
        "  noise floor: every cell also plays a null copy (replicates: 1), so each comparison "
        "will be shown beside the difference between two identical cells"
    ) in out.splitlines()
    # The copies are not compared: one cell pair of 3 pairs, as without them.
    assert "opponent TitForTat vs AlwaysDefect (cooperation): 1 cell pair alike in" in out
    assert "1 cell pair of 3 pairs" in out
    del data["replicates"]
    file.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, out, _ = cli(capsys, "run", str(file), "--dry-run")
    assert code == 0 and "noise floor" not in out and "plan: 6 episodes to play" in out


def test_a_study_sees_the_cells_own_episodes_and_can_still_find_the_floor(played: Path) -> None:
    """The report's study sections get the cells' own episodes (a copy never enters a study's
    table), and `noise_floor` of the data they get still finds the copies."""
    seen: list[tuple[list[int], float | None]] = []

    def build(data: ReportData, mine: Sequence[EpisodeData]) -> list[Section]:
        floor = noise_floor(data, "score")
        seen.append(([replicate_of(e.spec) for e in data.episodes], floor and floor.floor))
        return []

    register_sections(StudySections("probe", lambda e: True, build))
    try:
        build_report(played)
    finally:
        _REGISTRY.pop("probe")
    with ResultStore(played / STORE_FILE) as store:
        whole = noise_floor(ReportData.load(store, store.experiment("nf")), "score")
    ((replicates, floor),) = seen
    assert replicates == [0] * 16 and whole is not None and floor == whole.floor


def test_too_many_replicate_intervals_excluding_zero_are_flagged() -> None:
    """Flagged when P(X >= k) < 0.05 for X ~ Binomial(n, 0.05): 2 of 4 is (1 - 0.95⁴ -
    4 · 0.05 · 0.95³ = 0.014), 1 of 4 is not (1 - 0.95⁴ = 0.185)."""
    from stratagem.analysis.comparisons import cluster_t
    from stratagem.analysis.report_noise import _too_many

    def floor(excluding: int) -> NoiseFloor:
        shifted = [cluster_t([5.0, 6.0, 7.0], paired_by="seed")] * excluding
        centred = [cluster_t([-1.0, 0.0, 1.0], paired_by="seed")] * (4 - excluding)
        key = ("m", "a", "g", "o", 1)
        found = floor_of([ReplicateDifference(key, 1, c) for c in shifted + centred], "score")
        assert found is not None and found.excluding_zero == excluding
        return found

    assert 1 - 0.95**4 - 4 * 0.05 * 0.95**3 < 0.05 < 1 - 0.95**4
    assert [_too_many(floor(k)) for k in range(4)] == [False, False, True, True]
