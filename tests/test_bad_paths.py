"""Paths that cannot be written are bad input: one line, exit 2, never a traceback (issue 23,
items 9 and 11). Driven through the installed command, as a user runs it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.cli import cli

COMMAND = shutil.which("stratagem") or str(Path(sys.executable).parent / "stratagem")


def _args(command: str, out: str, tmp_path: Path) -> tuple[list[str], str]:
    """The command line writing results to `out`, and what it reads on stdin."""
    if command == "run":
        file = tmp_path / "e.yaml"
        data = {
            "name": "e",
            "output": out,
            "models": [{"model": "scripted/first"}],
            "games": ["dilemma"],
            "lineups": [["plain", "TitForTat"]],
            "rounds": [2],
        }
        file.write_text(yaml.safe_dump(data), encoding="utf-8")
        return ["run", str(file), "--yes", "--no-progress"], ""
    if command == "import":
        (tmp_path / "e.jsonl").write_text("", encoding="utf-8")
        return ["import", str(tmp_path / "e.jsonl"), "--store", out], ""
    if command == "tournament":
        return ["tournament", "-s", "TitForTat", "-s", "AlwaysDefect", "--turns", "3",
                "--store", out], ""  # fmt: skip
    if command == "play":
        return ["play", "dilemma", "--seat", "0=human", "--seat", "1=TitForTat", "--rounds", "1",
                "--seed", "1", "--out", out], "1\n"  # fmt: skip
    return ["magic", "balance", "--game", "chameleon", "--model", "scripted/first",
            "--games-per-setting", "1", "--yes", "--no-progress", "--output", out], ""  # fmt: skip


@pytest.mark.parametrize("where", ["under a file", "in /proc"])
@pytest.mark.parametrize("command", ["run", "import", "tournament", "play", "magic balance"])
def test_an_output_directory_that_cannot_exist_is_one_line_exit_2(
    tmp_path: Path, command: str, where: str
) -> None:
    if where == "in /proc" and not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    out = str(blocker / "results") if where == "under a file" else "/proc/stratagem-results"
    args, typed = _args(command, out, tmp_path)
    done = subprocess.run([COMMAND, *args], input=typed, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {out}: cannot write a results directory there (")


@pytest.fixture
def sound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A small sound store."""
    store = tmp_path / "results"
    code, _, err = cli(capsys, "tournament", "-s", "TitForTat", "-s", "AlwaysDefect",
                       "--turns", "3", "--repetitions", "1", "--store", str(store))  # fmt: skip
    assert code == 0, err
    return store


def test_doctor_refuses_an_export_path_that_is_a_directory_or_cannot_be_written(
    sound: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    refused = {
        str(tmp_path): f"error: --export {tmp_path}: is a directory; name the JSONL file to write",
        str(blocker / "saved.jsonl"): f"error: --export {blocker / 'saved.jsonl'}: {blocker} is "
        "a file, not a directory",
    }
    if Path("/proc/self").is_dir():
        refused["/proc/saved.jsonl"] = "error: /proc/saved.jsonl: cannot write ("
    if Path("/dev/full").exists():
        refused["/dev/full"] = "error: /dev/full: cannot write (No space left on device)"
    for target, message in refused.items():
        code, out, err = cli(capsys, "doctor", str(sound), "--export", target)
        assert code == 2, (target, out)
        assert "nothing can be read back" not in out
        (line,) = err.strip().splitlines()
        assert line.startswith(message), target
    code, out, _ = cli(capsys, "doctor", str(sound), "--export", str(tmp_path / "saved.jsonl"))
    assert code == 0 and "exported 3 of 3 finished episodes" in out


def test_export_under_a_file_says_so(
    sound: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    target = blocker / "x.jsonl"
    code, _, err = cli(capsys, "export", str(target), "--store", str(sound))
    assert code == 2
    assert err.strip() == f"error: {target}: cannot write ({blocker} is a file)"
