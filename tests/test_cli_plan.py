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


def _pilot_sds(store_file: Path) -> dict[str, float]:
    """Per opponent, the sd of pd-alt - pd cooperation over the stored pairs, read back from the
    store by `analysis.cells`, independently of the plan's reading."""
    values: dict[tuple[str, str, int, int], float] = {}
    with ResultStore(store_file) as store:
        for e in load_episodes(store, "pilot"):
            cooperative, valid, _ = move_tally(e, 0)
            spec = e.spec
            key = (str(spec["opponent"]), e.record.game, spec["seed"], spec["repetition"])
            values[key] = cooperative / valid
    out = {}
    for opponent in ("tft-br", "srep"):
        diffs = [values[(opponent, "pd-alt", s, r)] - values[(opponent, "pd", s, r)]
                 for s in range(3) for r in range(2)]  # fmt: skip
        out[opponent] = statistics.stdev(diffs)
    return out


def test_pilot_episodes_give_the_spread(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    file = _write(tmp_path)
    code, before, _ = cli(capsys, "plan", str(file), "--each")
    assert code == 0 and "tft-br / 6: 6 pairs: MDE 1.01 > 1" in before  # the default sd
    code, _, err = cli(capsys, "run", str(file), "--yes", "--no-progress")
    assert code == 0, err
    sds = _pilot_sds(tmp_path / "out" / STORE_FILE)
    code, out, _ = cli(capsys, "plan", str(file), "--each", "--episodes-for", "0.1")
    assert code == 0
    for opponent, sd in sds.items():
        line = next(x for x in out.splitlines() if f"/ {opponent} / 6:" in x)
        assert line.strip() == (
            f"scripted/random:3 / plain / {opponent} / 6: 6 pairs: MDE {_mde(6, sd):.2f} "
            f"(sd {sd:.2f} from pilot: 6 pairs); a difference of 0.1 needs "
            f"{_needed(0.1, sd)} pairs per cell"
        )
    code, out, _ = cli(capsys, "run", str(file), "--dry-run")
    assert code == 0 and "plan: 0 episodes to play (24 already finished)" in out
    assert "from pilot: 12 pairs" in out


def test_a_pilot_of_some_cells_informs_the_others(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A cell pair without pilot pairs takes the pooled sd of those with: √(Σ(k-1)s² / Σ(k-1))."""
    small = _write(tmp_path, opponents=["tft-br"])
    assert cli(capsys, "run", str(small), "--yes", "--no-progress")[0] == 0
    sd = _pilot_sds_one(tmp_path / "out" / STORE_FILE)
    code, out, _ = cli(capsys, "plan", str(_write(tmp_path)), "--each")
    assert code == 0
    srep = next(x for x in out.splitlines() if "/ srep / 6:" in x).strip()
    assert srep == (
        f"scripted/random:3 / plain / srep / 6: 6 pairs: MDE {_mde(6, sd):.2f} (sd {sd:.2f} "
        "from pilot pooled over 1 cell pairs (6 pairs))"
    )


def _pilot_sds_one(store_file: Path) -> float:
    with ResultStore(store_file) as store:
        episodes = load_episodes(store, "pilot")
    by = {(e.record.game, e.spec["seed"], e.spec["repetition"]): e for e in episodes}
    diffs = []
    for s in range(3):
        for r in range(2):
            b, a = move_tally(by[("pd-alt", s, r)]), move_tally(by[("pd", s, r)])
            diffs.append(b[0] / b[1] - a[0] / a[1])
    return statistics.stdev(diffs)


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
    assert (f"    2 cell pairs of 6 pairs: MDE {_mde(6, high / math.sqrt(2)):.2f} > {high:g}, the "
            "largest possible difference (sd "
            f"{high / math.sqrt(2):.2f} by default: values in [0, {high:g}] at their widest "
            "spread)") in lines  # fmt: skip
    assert f"    2 cell pairs of 6 pairs: MDE {_mde(6, 0.2):.2f} (sd 0.20 stated in the file)" in (
        lines
    )


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
