"""`stratagem new game|architecture|study NAME [DIR]` (issue 34): the package it writes installs
as written and passes its own tests (stratagem's conformance checks, its offline example through
the command), and its code is clean by the house's ruff rules; a NAME or DIR it cannot use is
refused in one line.

The package is installed into a folder of its own (`pip install --target`, the build backend
from the package registry as `pip install -e` would get it), never into this environment, and
its tests run in a child process that finds its entry point there through PYTHONPATH."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import cli

from stratagem.cli.scaffold import KINDS, template_files

BIN = Path(sys.executable).parent
NAMES = {"game": "sg_cards", "architecture": "sg_careful", "study": "sg_wins"}
RUFF_RULES = "E,F,W,I,B,UP,SIM,RUF"
"""The house's ruff rules (pyproject.toml), which the written code follows too."""


def _child_env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATAGEM_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", "")])
    return env


@pytest.mark.parametrize("kind", KINDS)
def test_the_package_installs_and_passes_its_own_tests(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = NAMES[kind]
    package = tmp_path / name
    code, out, err = cli(capsys, "new", kind, name, str(package))
    assert code == 0, err
    assert f"wrote the {kind} plugin '{name}'" in out and f"pip install -e {package}" in out
    written = {p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file()}
    assert len(written) == len(template_files(kind))
    assert {"pyproject.toml", "README.md", ".gitignore", f"src/{name}/_stratagem.py"} <= written
    assert f"tests/test_{name}.py" in written and f"experiments/{name}-scripted.yaml" in written
    assert f'{name} = "{name}._stratagem"' in (package / "pyproject.toml").read_text("utf-8")

    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
         str(package)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert (site / name / "_stratagem.py").is_file()

    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(package / "tests")],
        cwd=tmp_path, env=_child_env(site), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert tested.returncode == 0, tested.stdout[-4000:] + tested.stderr[-2000:]
    assert " passed" in tested.stdout and "failed" not in tested.stdout


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["ab", "abcdefghij_klmnopqrst_uvwxyz01"])
def test_the_code_is_clean_by_the_house_rules_whatever_the_name(
    kind: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ruff = shutil.which("ruff", path=str(BIN))
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    code, _, err = cli(capsys, "new", kind, name, str(tmp_path / name))
    assert code == 0, err
    # The package's own pyproject.toml sets the line length its code is written for.
    for args in (["check", "--select", RUFF_RULES], ["format", "--check"]):
        linted = subprocess.run(
            [ruff, *args, "."], cwd=tmp_path / name, capture_output=True, text=True
        )
        assert linted.returncode == 0, linted.stdout + linted.stderr


def test_dir_defaults_to_the_name_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "new", "study", "sg_here")
    assert code == 0, err
    assert (tmp_path / "sg_here" / "src" / "sg_here" / "study.py").is_file()
    text = (tmp_path / "sg_here" / "src" / "sg_here" / "study.py").read_text("utf-8")
    assert "class SgHereOptions" in text and "$" not in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["new", "board", "sg_x"], "new: got 'board', allowed: game, architecture, study"),
        (["new", "game", "Cards"], "'Cards' cannot name a package"),
        (["new", "game", "my-game"], "'my-game' cannot name a package"),
        (["new", "game", "2cards"], "'2cards' cannot name a package"),
        (["new", "game", "a__b"], "'a__b' cannot name a package"),
        (["new", "game", "class"], "'class' is a Python module or keyword"),
        (["new", "game", "random"], "'random' is a Python module or keyword"),
        (["new", "game", "scripted"], "'scripted' is a namespace of stratagem's own"),
        (["new", "game", "numpy"], "a module named 'numpy' is already installed here"),
    ],
)
def test_a_name_it_cannot_use_is_refused_in_one_line(
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not any(tmp_path.iterdir())


def test_a_dir_in_use_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine", encoding="utf-8")
    afile = tmp_path / "afile"
    afile.write_text("mine", encoding="utf-8")
    for target in (taken, afile):
        code, _, err = cli(capsys, "new", "game", "sg_cards", str(target))
        assert code == 2 and "already exists and is not an empty folder" in err, err
    assert [p.name for p in taken.iterdir()] == ["notes.txt"]
    assert afile.read_text(encoding="utf-8") == "mine"
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = cli(capsys, "new", "game", "sg_cards", str(empty))
    assert code == 0, err
    assert (empty / "src" / "sg_cards" / "game.py").is_file()
