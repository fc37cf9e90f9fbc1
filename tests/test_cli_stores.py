"""The store as every command names it (issue 11, items 10-12): one default for all, a damaged file
reported in one line, `stratagem doctor`, and an import as strict as the engine."""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from pathlib import Path

import pytest
import yaml
from support.cli import cli

PAGE = 4096


def experiment(tmp_path: Path, name: str = "small", seeds: int = 6) -> Path:
    """A small scripted run's file: its results go to results/<name> (relative to the cwd)."""
    path = tmp_path / f"{name}.yaml"
    data = {
        "name": name,
        "output": f"results/{name}",
        "models": [{"model": "scripted/cooperate"}],
        "agents": [{"name": "plain"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat", "AlwaysDefect"],
        "rounds": [3],
        "seeds": list(range(seeds)),
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.fixture
def ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Path:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "run", str(experiment(tmp_path)), "--no-progress")
    assert code == 0, err
    return tmp_path / "results" / "small"


def test_every_command_finds_the_store_run_wrote_by_default(
    ran: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "export", "x.jsonl")
    assert code == 0, err
    assert len(Path("x.jsonl").read_text().splitlines()) == 12
    code, out, _ = cli(capsys, "status")
    assert code == 0 and "12 finished" in out
    assert cli(capsys, "status", str(ran / "stratagem.db"))[0] == 0  # the file works as well
    assert cli(capsys, "show")[0] == 0
    assert cli(capsys, "report", "--out", "r.html")[0] == 0 and Path("r.html").is_file()
    code, out, _ = cli(capsys, "doctor")
    assert code == 0 and "sound" in out
    # Import and tournament write where the readers look: `results` itself.
    assert cli(capsys, "import", "x.jsonl", "--store", "copy")[0] == 0
    assert cli(capsys, "export", "y.jsonl", "--store", "copy")[0] == 0
    assert len(Path("y.jsonl").read_text().splitlines()) == 12


def test_several_results_directories_are_named_not_guessed(
    ran: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "run", str(experiment(tmp_path, "other", 1)), "--no-progress")[0] == 0
    code, _, err = cli(capsys, "export", "x.jsonl")
    assert code == 2
    assert err.strip() == (
        "error: 'results' holds 2 result stores (results/other, results/small): name one"
    )
    code, out, _ = cli(capsys, "status")  # status summarises them all
    assert code == 0 and "other" in out and "small" in out


def damage(store: Path, table: str | None = None) -> None:
    """Overwrite one 4 KiB page (a bad sector, a torn copy): the root page of `table`, or one in
    the middle of the file (rows of rounds and model calls)."""
    _checkpoint(store)
    conn = sqlite3.connect(store)
    (size,) = conn.execute("PRAGMA page_size").fetchone()
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name=?", (table,)).fetchone()
    conn.close()
    data = bytearray(store.read_bytes())
    assert size == PAGE and len(data) // PAGE >= 20, "expected a store of 4 KiB pages, 20 or more"
    at = (root[0] - 1) * PAGE if root else (len(data) // PAGE // 2) * PAGE
    data[at : at + PAGE] = b"\xa5" * PAGE
    store.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["report", "--out", "r.html"],
        ["export", "x.jsonl"],
        ["import", "x.jsonl", "--store", "results/small"],
        ["run", "small.yaml", "--no-progress"],
    ],
)
def test_a_damaged_store_is_one_line_naming_the_file(
    ran: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    Path("x.jsonl").write_text(json.dumps(_line()) + "\n", encoding="utf-8")
    damage(ran / "stratagem.db", "episodes")
    code, out, err = cli(capsys, *argv)
    assert code == 2, (out, err)
    (line,) = err.strip().splitlines()
    assert line.startswith("error: ") and "stratagem.db: the file is damaged" in line
    assert "stratagem doctor results/small" in line and "Traceback" not in err


def test_a_parquet_export_that_fails_leaves_no_directory_behind(
    ran: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model calls' table is damaged: the export fails in one line after writing the first
    tables, and neither the directory named (nor the folder made for it) nor a half-written one
    is left (issue 33 item 11)."""
    damage(ran / "stratagem.db", "llm_calls")
    before = sorted(p.name for p in Path.cwd().iterdir())
    code, _, err = cli(capsys, "export", "exports/pq", "--format", "parquet")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "stratagem.db: the file is damaged" in line
    assert sorted(p.name for p in Path.cwd().iterdir()) == before


def test_doctor_checks_and_recovers_what_still_reads_back(
    ran: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage(ran / "stratagem.db")
    assert cli(capsys, "export", "all.jsonl")[0] == 2
    code, out, _ = cli(capsys, "doctor", str(ran))
    assert code == 1
    assert "stratagem.db: damaged (" in out
    assert "cache.db: sound; safe to delete" in out
    assert "--export saved.jsonl" in out
    code, out, _ = cli(capsys, "doctor", str(ran), "--export", "saved.jsonl")
    assert code == 1
    saved = Path("saved.jsonl").read_text().splitlines()
    assert 0 < len(saved) < 12
    assert f"exported {len(saved)} of 12 finished episodes to saved.jsonl; " in out
    assert "no longer read back" in out
    assert cli(capsys, "import", "saved.jsonl", "--store", "fresh")[0] == 0
    code, out, _ = cli(capsys, "status", "fresh")
    assert code == 0 and f"{len(saved)} finished" in out


def _checkpoint(store: Path) -> None:
    """Fold the write-ahead log into the file, so the damaged page is the one SQLite reads."""
    conn = sqlite3.connect(store)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()


def _line(**changes: object) -> dict[str, object]:
    line: dict[str, object] = {
        "game": "dilemma",
        "players": ["a", "b"],
        "rounds": [{"actions": ["cooperate", "defect"]}],
    }
    return {**line, **changes}


def test_import_refuses_an_unknown_game_with_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "logs.jsonl"
    path.write_text(json.dumps(_line()) + "\n" + json.dumps(_line(game="nosuchgame")) + "\n")
    code, _, err = cli(capsys, "import", str(path), "--store", str(tmp_path / "s"))
    assert code == 2
    assert f"{path}:2: game: unknown game 'nosuchgame'" in err
    assert len(err.strip().splitlines()) == 1
    code, out, _ = cli(capsys, "import", str(path), "--store", str(tmp_path / "s"), "--no-strict")
    assert code == 0 and "imported 1 episodes" in out
    assert f"not imported: {path}:2: game: unknown game 'nosuchgame'" in out


def test_gzipped_jsonl_imports_directly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "logs.jsonl.gz"
    path.write_bytes(gzip.compress((json.dumps(_line()) + "\n").encode()))
    code, out, _ = cli(capsys, "import", str(path), "--store", str(tmp_path / "s"))
    assert code == 0 and "imported 1 episodes" in out
    back = tmp_path / "back.jsonl.gz"
    assert cli(capsys, "export", str(back), "--store", str(tmp_path / "s"))[0] == 0
    assert json.loads(gzip.decompress(back.read_bytes()))["rounds"]


def test_import_and_tournament_are_refused_while_another_process_writes_the_directory(
    ran: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One writer per results directory, whatever it does: a run holds it, so an import or a
    stored tournament there is refused in one line (exit 2), and the store is unchanged."""
    import os

    from stratagem.experiments.lock import WriterLock

    assert cli(capsys, "export", "x.jsonl")[0] == 0
    before = (ran / "stratagem.db").stat().st_size
    with WriterLock(ran):
        for argv in (
            ("import", "x.jsonl", "--store", str(ran)),
            ("tournament", "--strategy", "TitForTat", "--strategy", "AlwaysDefect",
             "--turns", "3", "--store", str(ran)),
        ):  # fmt: skip
            code, out, err = cli(capsys, *argv)
            assert code == 2, out + err
            assert f"another stratagem process (PID {os.getpid()})" in err
            assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert (ran / "stratagem.db").stat().st_size == before
    # Once it is free, both write.
    assert cli(capsys, "import", "x.jsonl", "--store", str(ran))[0] == 0


def test_a_tournament_stored_in_results_does_not_hide_the_runs_under_it(
    ran: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33 (N5): `tournament` writes results/stratagem.db, a run results/<name>; a bare
    `status` shows both, and a bare `export` names both instead of reading the tournament's."""
    import stratagem
    from stratagem.errors import StratagemError

    tournament = ("tournament", "--game", "dilemma", "-s", "TitForTat", "-s", "AlwaysDefect")
    code, _, err = cli(capsys, *tournament, "--turns", "3", "--repetitions", "1")
    assert code == 0, err
    code, out, _ = cli(capsys, "status")
    assert code == 0 and "tournament on dilemma" in out and "12 finished" in out
    both = "'results' holds 2 result stores (results/stratagem.db, results/small): name one"
    code, _, err = cli(capsys, "export", "x.jsonl")
    assert code == 2 and err.strip() == f"error: {both}"
    with pytest.raises(StratagemError, match=re.escape(both)):
        stratagem.open("results")
    assert cli(capsys, "export", "t.jsonl", "--store", "results/stratagem.db")[0] == 0
    assert cli(capsys, "export", "x.jsonl", "--store", "results/small")[0] == 0
    assert len(Path("x.jsonl").read_text().splitlines()) == 12


def test_import_of_a_file_with_nothing_valid_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33 (N4): --no-strict lists the bad lines, then exits 2 when none was imported;
    an empty file too. One good line is still a success."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_line(game="nope")) + "\nnot json\n", encoding="utf-8")
    store = str(tmp_path / "s")
    code, out, err = cli(capsys, "import", str(bad), "--no-strict", "--store", store)
    assert code == 2 and out.count("not imported: ") == 2
    assert err.strip() == (
        f"error: {bad}: no episode imported (every line was refused, as listed above)"
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    code, _, err = cli(capsys, "import", str(empty), "--store", store)
    assert code == 2 and err.strip() == f"error: {empty}: no episode imported (it holds none)"
    bad.write_text(json.dumps(_line()) + "\nnot json\n", encoding="utf-8")
    code, out, _ = cli(capsys, "import", str(bad), "--no-strict", "--store", store)
    assert code == 0 and "imported 1 episodes" in out


def test_an_import_with_nothing_valid_leaves_no_new_store_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failed import into a store it would create (nothing valid, an empty file, a strict
    refusal) leaves neither the directories nor `stratagem.db` behind; a store that existed
    before is kept as it was."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_line(game="nope")) + "\nnot json\n", encoding="utf-8")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    new = tmp_path / "new" / "deeper"
    for args in ([str(bad), "--no-strict"], [str(bad)], [str(empty)]):
        code, _, err = cli(capsys, "import", *args, "--store", str(new))
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "new").exists()
    bare = tmp_path / "bare"  # a directory that exists, named with its store file
    bare.mkdir()
    code, _, _ = cli(capsys, "import", str(bad), "--no-strict", "--store", str(bare / "x.db"))
    assert code == 2 and list(bare.iterdir()) == []
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(_line()) + "\n", encoding="utf-8")
    kept = tmp_path / "kept"
    assert cli(capsys, "import", str(good), "--store", str(kept))[0] == 0
    before = sorted(p.name for p in kept.iterdir())
    for args in ([str(bad), "--no-strict"], [str(bad)], [str(empty)]):
        assert cli(capsys, "import", *args, "--store", str(kept))[0] == 2
    assert sorted(p.name for p in kept.iterdir()) == before
    code, out, _ = cli(capsys, "status", str(kept))
    assert code == 0 and "1 finished" in out


def test_a_run_whose_start_fails_leaves_no_empty_experiment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33 (N9): a start that fails (here: the pool's endpoints_file, which a cluster job
    writes, is still missing when the run starts) left an experiment with nothing in it, listed
    by `status` as `t (t): ; 0 model calls`."""
    monkeypatch.chdir(tmp_path)
    file = experiment(tmp_path, "early", 1)
    data = yaml.safe_load(file.read_text(encoding="utf-8"))
    data["models"] = [{"model": "openai/m", "endpoints_file": "endpoints.txt"}]
    file.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, _, err = cli(capsys, "run", str(file), "--no-progress", "--yes")
    assert code == 2 and "endpoints.txt" in err
    code, out, _ = cli(capsys, "status", "results/early")
    assert code == 0 and out.strip() == "results/early/stratagem.db: no experiments"


def test_status_of_an_experiment_with_no_episodes_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stratagem.experiments.store import ResultStore

    with ResultStore(tmp_path / "stratagem.db") as db:
        db.create_experiment("t", "t", {})
    code, out, _ = cli(capsys, "status", str(tmp_path))
    assert code == 0
    assert out.startswith("t (t): no episodes; 0 model calls (0 cached, 0 failed)")


def test_doctor_export_of_a_store_that_reads_nothing_says_what_to_do(
    ran: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33 (11): the store's own error pointed back to `doctor`, the command just run."""
    damage(ran / "stratagem.db", "experiments")
    code, out, _ = cli(capsys, "doctor", str(ran), "--export", "saved.jsonl")
    assert code == 1
    (line,) = [x for x in out.splitlines() if x.startswith("nothing can be read back")]
    assert line == (
        f"nothing can be read back from {ran / 'stratagem.db'}: move it aside (e.g. to "
        "stratagem.db.damaged) and run the experiment's file again to play its episodes in a "
        f"new store there; the calls already answered come from {ran / 'cache.db'} at no cost"
    )
