"""The command line as a user runs it: tables on stdout, one-line errors and exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import cli as run

from stratagem.experiments.store import ResultStore


def test_listings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "games")
    assert code == 0
    for name in ("dilemma", "delight", "confusion", "pd-alt", "ba3-alt", "npd3", "ultimatum"):
        assert name in out
    code, out, _ = run(capsys, "strategies")
    assert code == 0
    assert "GrimTrigger2" in out and "SingleRoundEquilibrium" in out


def test_tournament_prints_table_and_stores_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "r.db"
    args = ["tournament", "-s", "TitForTat", "-s", "AlwaysDefect", "-s", "Random(0.3)"]
    args += ["--turns", "10", "--repetitions", "2", "--store", str(db)]
    code, out, _ = run(capsys, *args)
    assert code == 0
    assert "TitForTat" in out and "cooperation" in out
    assert "stored 12 matches" in out
    with ResultStore(db) as store:
        assert len(store.episodes()) == 12
        assert all(len(store.rounds(e.id)) == 10 for e in store.episodes())
    code, out, _ = run(capsys, *args)
    assert code == 0 and "already stored" in out


def test_export_import_round_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db, other, file = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "e.jsonl"
    run(capsys, "tournament", "-s", "TitForTat", "-s", "Alternator", "--turns", "5",
        "--repetitions", "1", "--store", str(db))  # fmt: skip
    assert run(capsys, "export", str(file), "--store", str(db))[0] == 0
    lines = file.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["rounds"]
    code, out, _ = run(capsys, "import", str(file), "--store", str(other))
    assert code == 0 and "imported 3" in out
    code, out, _ = run(capsys, "import", str(file), "--store", str(other))
    assert "imported 0" in out and "skipped 3" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tournament", "-s", "TitForTatt"], "unknown strategy 'TitForTatt': did you mean"),
        (["tournament", "--game", "dilema"], "unknown game 'dilema': did you mean dilemma"),
        (["tournament", "--turns", "0"], "turns must be a whole number from 1 to 1,000,000, got 0"),
        (["tournament", "--game", "ultimatum"], "not a matrix game"),
        (["tournament", "-s", "Random(1.5)"], "Random"),
        (["import", "nowhere.jsonl"], "does not exist"),
        (["moran", "--size", "0"], "--size"),
    ],
)
def test_user_errors_are_one_line_with_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    code, _, err = run(
        capsys, *argv, *(["--store", str(tmp_path / "x.db")] if argv[0] == "import" else [])
    )
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_bad_import_file_and_no_traceback_from_the_installed_command(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"game": {"name": "pd"}, "players": [{"name": "a"}, {"name": "b"}]}\n{oops\n')
    exe = Path(sys.executable).parent / "stratagem"
    proc = subprocess.run(
        [str(exe), "import", str(bad), "--store", str(tmp_path / "s.db")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "bad.jsonl:2" in proc.stderr


def test_moran_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "moran", "-s", "TitForTat", "-s", "AlwaysDefect", "--game", "sh",
                       "--size", "3", "--turns", "10", "--seed", "3")  # fmt: skip
    assert code == 0
    assert "fixated" in out or "no fixation" in out
