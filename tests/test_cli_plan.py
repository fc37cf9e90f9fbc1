"""The plan's comparisons (issue 35 item 1): `stratagem run --dry-run` and `stratagem plan` say,
for each comparison the experiment is for, the smallest difference its episodes can detect, and
`plan --episodes-for DELTA` what a difference needs; from pilot episodes when some are stored,
else from the stated default. Every number is checked against statsmodels' power solver, and the
pilot's spread against the stored episodes read back by `analysis.cells`."""

from __future__ import annotations

import math
import re
import statistics
from pathlib import Path
from typing import Any

import pytest
import yaml
from statsmodels.stats.power import TTestPower
from support.cli import cli

from stratagem.analysis.cells import move_tally
from stratagem.analysis.episodes import load_episodes
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_game

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RATE_SD = 1 / math.sqrt(2)
"""The default sd of a rate's paired differences: (1 - 0) / √2."""


def _mde(n: int, sd: float) -> float:
    return float(TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8)) * sd


def _needed(delta: float, sd: float) -> int:
    return math.ceil(TTestPower().solve_power(effect_size=delta / sd, alpha=0.05, power=0.8))


def test_plan_of_the_counterfactual_study_compares_each_variant_with_its_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no results directory: no pilot episodes
    code, out, err = cli(capsys, "plan", str(EXAMPLES / "counterfactual.yaml"))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("comparisons: B - A by a paired t at α = 0.05 (two-sided) with "
                               "power 80%")  # fmt: skip
    titles = [line.split(":")[0].strip() for line in lines if line.startswith("  game ")]
    assert titles == [
        "game pd vs pd-alt (cooperation)", "game pd vs sh (cooperation)",
        "game pd vs sh-alt (cooperation)", "game eq1 vs eq1-alt (score)",
        "game eq1 vs ba3 (score)", "game eq1 vs ba3-alt (score)",
    ]  # fmt: skip  # rock-paper-scissors has no cooperation: its variants differ in score
    # 8 models x 6 agents x 7 opponents; zs/cot/spp play 5 repetitions, the sc-* agents 2.
    assert ("  game pd vs pd-alt (cooperation): 336 cell pairs alike in model, agent, opponent "
            "and rounds, paired by seed and repetition") in lines  # fmt: skip
    five = f"    168 cell pairs of 5 pairs: MDE {_mde(5, RATE_SD):.2f} > 1, the largest possible "
    assert f"{five}difference (sd 0.71 by default: values in [0, 1] at their widest spread)" in (
        lines
    )
    assert sum(line.startswith(f"    168 cell pairs of 2 pairs: MDE {_mde(2, RATE_SD):.2f}")
               for line in lines) == 3  # fmt: skip
    assert not (tmp_path / "results").exists()


def test_plan_episodes_for_a_difference(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "plan", str(EXAMPLES / "counterfactual.yaml"),
                       "--episodes-for", "0.1")  # fmt: skip
    assert code == 0
    needs = f"; a difference of 0.1 needs {_needed(0.1, RATE_SD)} pairs per cell"
    summaries = [line for line in out.splitlines() if line.startswith("    168 cell pairs")]
    rates = [line for line in summaries if "values in [0, 1]" in line]  # the PD family's
    assert len(summaries) == 12 and len(rates) == 6 and all(line.endswith(needs) for line in rates)
    code, out, _ = cli(capsys, "plan", str(EXAMPLES / "counterfactual.yaml"),
                       "--episodes-for", "0.2", "--power", "0.9", "--alpha", "0.01")  # fmt: skip
    wanted = TTestPower().solve_power(effect_size=0.2 / RATE_SD, alpha=0.01, power=0.9)
    assert code == 0 and f"needs {math.ceil(wanted)} pairs per cell" in out
    assert "α = 0.01 (two-sided) with power 90%" in out


def test_dry_run_of_the_counterfactual_study_prints_the_comparisons_and_sends_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):  # never used: nothing is sent
        monkeypatch.setenv(name, "not-a-key")
    code, out, err = cli(capsys, "run", str(EXAMPLES / "counterfactual.yaml"), "--dry-run")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("plan: 9,408 episodes to play")
    assert any(line.startswith("comparisons: B - A") for line in lines)
    assert sum(line.startswith("    168 cell pairs of 5 pairs: MDE 1.19") for line in lines) == 3
    assert not (tmp_path / "results").exists()


def _write(tmp_path: Path, file: str = "exp.yaml", **settings: Any) -> Path:
    data: dict[str, Any] = {
        "name": "pilot",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/random:3"}],
        "agents": [{"name": "plain", "repetitions": 2}],
        "games": ["pd", "pd-alt"],
        "opponents": ["tft-br", "srep"],
        "rounds": [6],
        "seeds": [0, 1, 2],
        **settings,
    }
    path = tmp_path / file
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _pilot_diffs(store_file: Path) -> dict[str, list[list[float]]]:
    """Per opponent, pd-alt - pd cooperation of each stored pair, grouped by seed, read back
    from the store by `analysis.cells`, independently of the plan's reading."""
    values: dict[tuple[str, str, int, int], float] = {}
    with ResultStore(store_file) as store:
        for e in load_episodes(store, "pilot"):
            cooperative, valid, _ = move_tally(e, 0)
            spec = e.spec
            key = (str(spec["opponent"]), e.record.game, spec["seed"], spec["repetition"])
            values[key] = cooperative / valid
    return {
        opponent: [
            [values[(opponent, "pd-alt", s, r)] - values[(opponent, "pd", s, r)] for r in range(2)]
            for s in range(3)
        ]
        for opponent in {k[0] for k in values}
    }


def _anova(seeds: list[list[float]]) -> tuple[float, float]:
    """(MSB, MSW) of a balanced one-way layout: between and within the seeds."""
    means = [statistics.fmean(s) for s in seeds]
    grand = statistics.fmean(means)
    m, g = len(seeds[0]), len(seeds)
    msb = m * sum((x - grand) ** 2 for x in means) / (g - 1)
    msw = sum((x - mu) ** 2 for s, mu in zip(seeds, means, strict=True) for x in s) / (g * (m - 1))
    return msb, msw


def test_pilot_episodes_give_the_spread(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """3 seeds of 2 pairs: the test runs over seeds, so the MDE is statsmodels' on the 3 seeds'
    mean differences (their sd: the variance components' σ_b² + σ_w²/2, which is the variance
    of the seed means unless σ_b² is cut at 0, where it is MSW/2)."""
    file = _write(tmp_path)
    code, before, _ = cli(capsys, "plan", str(file), "--each")
    assert code == 0 and f"tft-br / 6: 6 pairs in 3 seeds: MDE {_mde(3, RATE_SD):.2f} > 1" in before
    assert "ICC 1 assumed" in before  # no pilot: each seed counts as one pair
    code, _, err = cli(capsys, "run", str(file), "--yes", "--no-progress")
    assert code == 0, err
    pilots = _pilot_diffs(tmp_path / "out" / STORE_FILE)
    code, out, _ = cli(capsys, "plan", str(file), "--each", "--episodes-for", "0.1")
    assert code == 0
    for opponent, seeds in pilots.items():
        seed_means = [statistics.fmean(s) for s in seeds]
        msb, msw = _anova(seeds)
        sd = max(statistics.stdev(seed_means), math.sqrt(msw / 2))
        icc = max(0.0, (msb - msw) / 2) / (max(0.0, (msb - msw) / 2) + msw)
        seeds_needed = _needed(0.1, sd)
        line = next(x for x in out.splitlines() if f"/ {opponent} / 6:" in x)
        assert line.strip() == (
            f"scripted/random:3 / plain / {opponent} / 6: 6 pairs in 3 seeds: MDE "
            f"{_mde(3, sd):.2f} (seed-mean sd {sd:.2f} from pilot: 6 pairs in 3 seeds, ICC "
            f"{icc:.2f}); a difference of 0.1 needs {seeds_needed} seeds ({2 * seeds_needed} "
            "pairs) per cell"
        )
    code, out, _ = cli(capsys, "run", str(file), "--dry-run")
    assert code == 0 and "plan: 0 episodes to play (24 already finished)" in out
    assert "from pilot: 12 pairs" in out


def test_one_pair_per_seed_is_the_paired_t_over_pairs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """One repetition: each pair its own cluster, the pilot's sd of the differences as is."""
    file = _write(tmp_path, agents=[{"name": "plain"}])
    assert cli(capsys, "run", str(file), "--yes", "--no-progress")[0] == 0
    code, out, _ = cli(capsys, "plan", str(file), "--each")
    assert code == 0 and "clustered pairs" not in out
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        by = {(e.record.game, e.spec["opponent"], e.spec["seed"]): move_tally(e, 0)
              for e in load_episodes(store, "pilot")}  # fmt: skip
    diffs = [by[("pd-alt", "srep", s)][0] / by[("pd-alt", "srep", s)][1]
             - by[("pd", "srep", s)][0] / by[("pd", "srep", s)][1] for s in range(3)]  # fmt: skip
    sd = statistics.stdev(diffs)
    beyond = " > 1, the largest possible difference" if _mde(3, sd) > 1 else ""
    assert (
        f"srep / 6: 3 pairs: MDE {_mde(3, sd):.2f}{beyond} (sd {sd:.2f} from pilot: 3 pairs)" in out
    )


def test_a_pilot_of_some_cells_informs_the_others(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A cell pair without pilot pairs takes the pooled sd of those with, √(Σ(k-1)s² / Σ(k-1)),
    split between and within seeds by their intra-cluster correlation: σ_c² = σ² (1 + ρ) / 2."""
    small = _write(tmp_path, opponents=["tft-br"])
    assert cli(capsys, "run", str(small), "--yes", "--no-progress")[0] == 0
    (seeds,) = _pilot_diffs(tmp_path / "out" / STORE_FILE).values()
    sd = statistics.stdev([d for s in seeds for d in s])
    msb, msw = _anova(seeds)
    between = max(0.0, (msb - msw) / 2)
    icc = between / (between + msw)
    seed_sd = sd * math.sqrt((1 + icc) / 2)
    code, out, _ = cli(capsys, "plan", str(_write(tmp_path)), "--each")
    assert code == 0
    srep = next(x for x in out.splitlines() if "/ srep / 6:" in x).strip()
    mde = _mde(3, seed_sd)
    beyond = " > 1, the largest possible difference" if mde > 1 else ""
    assert srep == (
        f"scripted/random:3 / plain / srep / 6: 6 pairs in 3 seeds: MDE {mde:.2f}{beyond} "
        f"(seed-mean sd {seed_sd:.2f} from pilot pooled over 1 cell pairs (6 pairs), ICC "
        f"{icc:.2f} pooled from pilot)"
    )


def test_the_files_comparisons_replace_the_studys(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    compare = [
        {"axis": "opponent", "a": "tft-br", "b": "srep", "metric": "score", "per": ["game"]},
        {"axis": "game", "a": "pd", "b": "pd-alt", "sd": 0.2},
    ]
    file = _write(tmp_path, analysis={"compare": compare})
    code, out, err = cli(capsys, "plan", str(file))
    assert code == 0, err
    lines = out.splitlines()
    assert "  score = seat 0's total payoff" in lines
    # per game: the model, agent and rounds are pooled into the pairs (one cell each here).
    assert ("  opponent tft-br vs srep (score): 2 cell pairs alike in game, paired by model, "
            "agent, rounds, seed and repetition") in lines  # fmt: skip
    # Seat 0's total over 6 rounds lies in [0, 6 x its largest stage payoff] (a 0 for an invalid
    # round): the widest spread of each cell's value, the cells uncorrelated, is high / √2.
    high = 6 * max(float(get_game(g).payoffs[..., 0].max()) for g in ("pd", "pd-alt"))
    # 3 seeds of 2 pairs: the test runs over the seeds, each seed's pairs counting as one.
    assert (f"    2 cell pairs of 6 pairs in 3 seeds: MDE {_mde(3, high / math.sqrt(2)):.2f} > "
            f"{high:g}, the largest possible difference (seed-mean sd {high / math.sqrt(2):.2f} "
            f"by default: values in [0, {high:g}] at their widest spread, ICC 1 assumed)"
            ) in lines  # fmt: skip
    assert (f"    2 cell pairs of 6 pairs in 3 seeds: MDE {_mde(3, 0.2):.2f} (seed-mean sd 0.20 "
            "stated in the file, ICC 1 assumed)") in lines  # fmt: skip
    # Another ICC: σ_c² = σ² (1 + (m - 1) ρ) / m with m = 2 pairs per seed.
    code, out, _ = cli(capsys, "plan", str(file), "--icc", "0.5")
    sd = 0.2 * math.sqrt(1.5 / 2)
    assert code == 0 and (f"6 pairs in 3 seeds: MDE {_mde(3, sd):.2f} (seed-mean sd {sd:.2f} "
                          "stated in the file, ICC 0.5 assumed)") in out  # fmt: skip
    code, _, err = cli(capsys, "plan", str(file), "--icc", "1.5")
    assert code == 2 and "--icc: the intra-cluster correlation must be in [0, 1], got 1.5" in err


def test_a_comparison_the_grid_does_not_play_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    file = _write(tmp_path, analysis={"compare": [{"axis": "game", "a": "pd", "b": "sh"}]})
    for command in (["plan", str(file)], ["run", str(file)]):
        code, out, err = cli(capsys, *command)
        assert code == 2 and out == ""
        assert err.strip().endswith("analysis.compare.0.b: game 'sh' is not in this grid "
                                    "(game: pd, pd-alt)")  # fmt: skip
    bad = _write(tmp_path, "bad.yaml", analysis={"compare": [{"axis": "seat", "a": "x", "b": "y"}]})
    code, _, err = cli(capsys, "plan", str(bad))
    assert code == 2 and "analysis.compare.0.axis: got 'seat', allowed: 'model'" in err
    code, _, err = cli(capsys, "plan", str(file), "--episodes-for", "-1")
    assert code == 2 and "--episodes-for: the difference must be > 0, got -1" in err


def test_a_grid_without_comparisons_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    file = _write(tmp_path, games=["pd"])
    code, out, _ = cli(capsys, "plan", str(file))
    assert code == 0 and out.startswith("comparisons: none")
    code, out, _ = cli(capsys, "run", str(file), "--dry-run")
    assert code == 0 and re.fullmatch(r"plan: [^\n]*\n", out)  # the run plan only


def test_a_stored_experiment_with_comparisons_still_reports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`compare` is stored with the file's `analysis:` and names no study: the report's options
    leave it out."""
    compare = [{"axis": "game", "a": "pd", "b": "pd-alt"}]
    file = _write(tmp_path, analysis={"compare": compare}, seeds=[0], opponents=["tft-br"])
    assert cli(capsys, "run", str(file), "--yes", "--no-progress")[0] == 0
    code, out, err = cli(capsys, "report", str(tmp_path / "out"))
    assert code == 0, err
    assert Path(out.strip()).is_file()


def test_the_default_comparisons_measure_cooperation_only_where_a_game_has_it(
    tmp_path: Path,
) -> None:
    # Rock-paper-scissors has no cooperative action: its variants are compared in score.
    from stratagem.experiments.comparisons import default_comparisons
    from stratagem.experiments.config import config_from_dict

    config = config_from_dict(
        {"name": "d", "output": str(tmp_path), "models": [{"model": "scripted/random"}],
         "games": ["pd", "pd-alt", "eq1", "ba3"], "opponents": ["TitForTat"]}, "d",
    )  # fmt: skip
    found = {(c.a, c.b): c.metric for c in default_comparisons(config)}
    assert found == {("pd", "pd-alt"): "cooperation", ("eq1", "ba3"): "score"}
