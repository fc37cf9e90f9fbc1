"""Every `--seed` of the command takes what `stratagem.env(...).reset(seed=...)` takes: a whole
number from 0 to `MAX_SEED`; anything else is one line, exit 2, before anything is played or
written. (Experiment files keep accepting the SQLite range in `seeds:`: stored ids depend on it.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import cli

from stratagem.experiments.limits import MAX_SEED

COMMANDS = {
    "play": ["play", "ultimatum", "--seat", "0=human", "--seat", "1=scripted:accept"],
    "tournament": ["tournament", "-s", "TitForTat", "-s", "AlwaysDefect", "--turns", "2"],
    "moran": ["moran", "-s", "TitForTat", "-s", "AlwaysDefect", "--turns", "2"],
    "magic balance": [
        "magic",
        "balance",
        "-g",
        "chameleon",
        "--model",
        "scripted/random",
        "--dry-run",
    ],
}


@pytest.mark.parametrize("seed", [-1, MAX_SEED + 1, -(2**63)])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_seed_out_of_range_is_one_line_and_writes_nothing(
    command: str,
    seed: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, *COMMANDS[command], "--seed", str(seed))
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line == (f"error: --seed must be a whole number from 0 to {MAX_SEED:,}, got {seed}")
    assert list(tmp_path.iterdir()) == []


def test_the_largest_seed_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, *COMMANDS["tournament"], "--seed", str(MAX_SEED))
    assert code == 0, err
