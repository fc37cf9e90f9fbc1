"""`tournament` and `moran` say their work before they start and refuse more than the bound
(`MAX_MATCH_ROUNDS`, `MAX_POPULATION`) in one line, exit 2 (issue 23 item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import cli

from stratagem.experiments.limits import MAX_MATCH_ROUNDS, MAX_POPULATION


def test_a_tournament_says_its_work_on_its_first_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = cli(capsys, "tournament", "-s", "TitForTat", "-s", "Random(0.3)",
                         "--turns", "10", "--repetitions", "2",
                         "--store", str(tmp_path / "r"))  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0] == (
        "plan: 3 pairings x 2 repetitions = 6 matches of 10 turns: 60 rounds to play and store"
    )


def test_a_tournament_beyond_the_bound_is_one_line_and_stores_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The issue's command (a day of play and 2 TB of store). Its store lies under a regular file,
    so that a command that failed to refuse it would stop at the store instead of playing."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out, err = cli(capsys, "tournament", "-s", "TitForTat", "-s", "Random(0.3)",
                         "--turns", "1000000", "--repetitions", "10000",
                         "--store", str(blocker / "r"))  # fmt: skip
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line == (
        "error: the tournament (3 pairings x 10,000 repetitions): 30,000 matches x 1,000,000 "
        f"turns = 30,000,000,000 rounds, more than the {MAX_MATCH_ROUNDS:,} one may play; use "
        "fewer turns, repetitions or strategies"
    )


def test_moran_says_its_work_and_bounds_its_size(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(capsys, "moran", "-s", "TitForTat", "-s", "AlwaysDefect", "--size", "3",
                         "--turns", "10", "--seed", "3")  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0] == (
        "plan: a population of 6, at most 1,000 generations; deterministic strategies without "
        "noise, so each of the 4 ordered pairs of strategies plays once, 10 turns: 40 rounds"
    )
    code, out, err = cli(capsys, "moran", "-s", "TitForTat", "-s", "AlwaysDefect", "--size", "3",
                         "--turns", "10", "--noise", "0.1", "--seed", "3")  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0] == (
        "plan: a population of 6, at most 1,000 generations of 15 matches of 10 turns: at most "
        "150,000 rounds"
    )
    # 4 default strategies x 251: one generation of half a million matches before; now refused
    code, out, err = cli(capsys, "moran", "--size", "251", "--generations", "1", "--turns", "1")
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line == (
        "error: --size 251 x 4 strategies: a population of 1,004 individuals, more than the "
        f"{MAX_POPULATION:,} a Moran process may hold"
    )
    # 400 individuals: within, but with noise every generation plays its 79,800 matches
    code, _, err = cli(capsys, "moran", "--size", "100", "--noise", "0.1")
    assert code == 2 and "3,990,000,000 rounds" in err and len(err.strip().splitlines()) == 1
