"""`stratagem magic balance` as a user runs it: the self-play run, the table, the kept list ready to
paste, balance.json, a rerun that plays nothing, one-line errors and honest exit codes
(seed-004 §4 "Setting selection")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import cli
from support.magic_balance import balance_model

from stratagem.experiments.runner import STORE_FILE


def balance(
    capsys: pytest.CaptureFixture[str], model: str, out_dir: Path, *extra: str
) -> tuple[int, str, str]:
    return cli(
        capsys, "magic", "balance", "--model", model, "--output", str(out_dir),
        "--games-per-setting", "2", "--no-progress", *extra,
    )  # fmt: skip


def test_balance_plays_every_setting_and_keeps_the_most_even(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with balance_model() as model:
        code, out, err = balance(capsys, model, tmp_path, "--game", "chameleon", "--keep", "3",
                                 "--seed", "5", "--yes")  # fmt: skip
        assert code == 0, err
        assert "40 episodes, 0 already finished, 40 played, 0 failed" in out
        # chameleon/4 is exactly even; every other setting is 0.5 away, so the lowest indices
        assert "games: [chameleon/0, chameleon/1, chameleon/4]" in out
        assert "kept 3 of 20 settings" in out
        table = out[out.index("spy win rate per setting") :]
        assert table.index("chameleon/4") < table.index("chameleon/0") < table.index("chameleon/5")
        assert "Sports: Volleyball (chameleon Player 1)" in out
        document = json.loads((tmp_path / "balance.json").read_text("utf-8"))
        assert document["kept"] == ["chameleon/0", "chameleon/1", "chameleon/4"]
        assert (document["model"], document["game"], document["seed"]) == (model, "chameleon", 5)
        assert document["games_per_setting"] == 2 and len(document["settings"]) == 20
        rates = {s["setting"]: s["win_rate"] for s in document["settings"]}
        assert (rates["chameleon/4"], rates["chameleon/5"], rates["chameleon/3"]) == (0.5, 0, 1)
        assert (tmp_path / STORE_FILE).is_file()

        # a rerun resumes: nothing is played again, and the answer is the same
        (tmp_path / "balance.json").unlink()
        code, again, err = balance(capsys, model, tmp_path, "--game", "chameleon", "--keep", "3",
                                   "--seed", "5", "--yes")  # fmt: skip
        assert code == 0, err
        assert "40 already finished, 0 played" in again and "0 model calls" in again
        assert "games: [chameleon/0, chameleon/1, chameleon/4]" in again
        assert json.loads((tmp_path / "balance.json").read_text("utf-8")) == document


def test_undercover_rates_count_three_credits_a_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with balance_model() as model:
        code, out, err = balance(capsys, model, tmp_path, "--game", "undercover", "--yes")
    assert code == 0, err
    # --keep 20 of 20 keeps them all, and says so
    assert "note: --keep 20 keeps all 20 candidates" in out
    document = json.loads((tmp_path / "balance.json").read_text("utf-8"))
    rates = {s["setting"]: s["win_rate"] for s in document["settings"]}
    # undercover/0 (Player 1, accused: caught) and undercover/2 (Player 3: wrong plurality)
    assert (rates["undercover/0"], rates["undercover/2"]) == (0, 1)
    assert document["credits_per_game"] == 3 and document["spy_role"] == "undercover"


def test_failed_episodes_exit_1_with_the_reason_and_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with balance_model("balance-outage", failing=("The topic is: Animals<EOS>",)) as model:
        code, out, err = balance(capsys, model, tmp_path, "--game", "chameleon", "--yes")
    assert code == 1
    # shipped Chameleon has 4 Animals settings (2, 6, 8, 10): 8 of the 40 games fail
    assert "failed: 8 of 40 episodes (8 x scripted outage [/x])" in err
    assert "balance.json not written" in err
    assert not (tmp_path / "balance.json").exists()
    assert "games: [" not in out
    assert "spy win rate per setting" in out  # what did finish is still shown,
    assert " yes " not in out  # but nothing is marked kept
    # once the model answers, a rerun plays only the failed episodes and writes the file
    with balance_model("balance-outage") as model:
        code, out, err = balance(capsys, model, tmp_path, "--game", "chameleon", "--yes")
    assert code == 0, err
    assert "32 already finished, 8 played, 0 failed" in out
    assert (tmp_path / "balance.json").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "chamelon"], "error: unknown game 'chamelon': did you mean chameleon?"),
        (["--game", "npd3"], "error: game 'npd3' has no spy side to balance"),
        (["--game", "chameleon", "--candidates", "most"], "error: unknown candidate pool 'most'"),
        (["--game", "chameleon", "--keep", "0"], "error: keep must be a whole number from 1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = balance(capsys, "scripted/balance", tmp_path, *args)
    assert code == 2
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err
    assert not tmp_path.joinpath(STORE_FILE).exists()


def test_a_large_run_needs_yes_without_a_terminal_and_dry_run_plays_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with balance_model() as model:
        code, out, err = cli(
            capsys, "magic", "balance", "--game", "chameleon", "--model", model,
            "--output", str(tmp_path), "--games-per-setting", "101",
        )  # fmt: skip
        assert code == 2 and "pass --yes to start it" in err
        assert out.startswith("plan: 2,020 episodes to play")
        code, out, err = balance(capsys, model, tmp_path, "--game", "chameleon",
                                 "--dry-run")  # fmt: skip
    assert code == 0 and out.startswith("plan: 40 episodes to play (0 already finished)")
    assert not tmp_path.joinpath(STORE_FILE).exists()
