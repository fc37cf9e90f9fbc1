"""The release build (issue 34): `python -m build` makes an sdist and, from it, a wheel that hold
every file of the package, the linked examples/ and docs/ included; the wheel, installed into a
fresh virtual environment, lists the games and plays a scripted experiment.

The fresh environment gets stratagem from the wheel only. Its dependencies are this interpreter's
(a path line in a `.pth` file: installing them from the registry would take minutes, llama.cpp
compiling): such a line adds the folder without processing the `.pth` files in it, so the
checkout's editable install (`__editable__.stratagem-*.pth` -> src/) stays out of it."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("build") is None,
    reason="`build` is not installed (pip install -e '.[dev]')",
)

ROOT = Path(__file__).resolve().parents[1]
CACHES = ("__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache")


def package_files(package: Path) -> set[str]:
    """Every file under src/stratagem, links to examples/ and docs/ followed, as the wheel names
    it (`stratagem/...`): modules and data alike, caches left out."""
    found = set()
    for folder, subfolders, files in os.walk(package, followlinks=True):
        subfolders[:] = [d for d in subfolders if d not in CACHES and not d.endswith(".egg-info")]
        for name in files:
            if not name.endswith((".pyc", ".pyo")):
                found.add((Path(folder) / name).relative_to(package.parent).as_posix())
    return found


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str]]:
    """`python -m build` of a copy of the checkout (links kept as links, as in a clone; nothing
    written into the shared tree): the sdist first, then the wheel built from the unpacked sdist,
    in isolated build environments (setuptools from the registry). With the folder of the
    packages, and the files of the copy it was built from (what the wheel must hold)."""
    base = tmp_path_factory.mktemp("build")
    source = base / "source"
    skip = shutil.ignore_patterns(*CACHES, "*.egg-info", "*.pyc")
    for name in ("src", "examples", "docs"):
        shutil.copytree(ROOT / name, source / name, symlinks=True, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(base / "dist"), str(source)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return base / "dist", package_files(source / "src" / "stratagem")


def wheel_of(dist: Path) -> Path:
    (found,) = dist.glob("stratagem-*-py3-none-any.whl")
    return found


def test_the_wheel_holds_every_file_of_the_package(built: tuple[Path, set[str]]) -> None:
    dist, expected = built
    with zipfile.ZipFile(wheel_of(dist)) as archive:
        held = {
            name for name in archive.namelist() if not name.split("/")[0].endswith(".dist-info")
        }
    assert {"stratagem/py.typed", "stratagem/examples/quickstart.yaml", "stratagem/docs/index.md",
            "stratagem/games/tradecraft/data/LICENSE-TradeCraft"} <= expected  # fmt: skip
    missing = sorted(expected - held)
    assert not missing, f"missing from the wheel (pyproject's package-data): {missing}"
    assert not held - expected, sorted(held - expected)


def test_the_sdist_holds_the_package_as_real_files(built: tuple[Path, set[str]]) -> None:
    """No links in the sdist: its examples/ and docs/ are copies, so a wheel built from it (as
    pip does from an sdist) holds them too."""
    dist, expected = built
    (sdist,) = dist.glob("stratagem-*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = archive.getmembers()
    top = members[0].name.split("/")[0]
    assert not [m.name for m in members if m.issym() or m.islnk()]
    held = {
        m.name.removeprefix(f"{top}/src/")
        for m in members
        if m.isfile() and m.name.startswith(f"{top}/src/stratagem/")
    }
    assert not expected - held, sorted(expected - held)
    assert {f"{top}/pyproject.toml", f"{top}/README.md"} <= {m.name for m in members}


def test_the_wheel_installs_and_runs_in_a_fresh_environment(
    built: tuple[Path, set[str]], tmp_path: Path
) -> None:
    dist = built[0]
    deps = Path(sysconfig.get_paths()["purelib"])
    platdeps = Path(sysconfig.get_paths()["platlib"])
    # What the fresh environment borrows must not hold stratagem itself (an editable install
    # is a .pth there, which a path line does not process).
    for folder in {deps, platdeps}:
        assert not (folder / "stratagem").exists(), folder
    fresh = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], check=True)
    python = fresh / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    lines = dict.fromkeys([str(deps), str(platdeps)])
    (Path(site) / "_stratagem_test_deps.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
         "--quiet", str(wheel_of(dist))],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-2000:]

    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["COLUMNS"] = "200"
    env["PATH"] = f"{fresh / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv), capture_output=True, text=True, cwd=work, env=env, timeout=300, check=False
        )

    where = run(
        str(python), "-c",
        "import json, sys, stratagem, stratagem.cli as m;"
        "print(json.dumps([stratagem.__file__, m.__file__, sys.path]))",
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    module, cli, path = json.loads(where.stdout)
    assert Path(module) == Path(site) / "stratagem" / "__init__.py"
    assert Path(cli).is_relative_to(site)
    assert str(ROOT / "src") not in path and str(ROOT) not in path

    command = str(fresh / "bin" / "stratagem")
    games = run(command, "games")
    assert games.returncode == 0, games.stderr
    for name in ("dilemma", "ultimatum", "chameleon"):
        assert name in games.stdout, name

    (work / "exp.yaml").write_text(
        "name: wheel\noutput: out\nmodels: [{model: 'scripted/random:7'}]\n"
        "agents: [{name: plain}]\ngames: [dilemma]\nopponents: [TitForTat]\n"
        "rounds: [3]\nseeds: [0, 1]\n",
        encoding="utf-8",
    )
    played = run(command, "run", "exp.yaml")
    assert played.returncode == 0, played.stdout + played.stderr
    assert "2 played, 0 failed" in played.stdout, played.stdout
    assert (work / "out" / "stratagem.db").is_file()
    # The prompts the model was sent come from the neutral framing's templates (package data).
    listed = run(command, "show", "out")
    assert listed.returncode == 0, listed.stderr
    episode = re.search(r"\b([0-9a-f]{16})\b", listed.stdout)
    assert episode is not None, listed.stdout
    shown = run(command, "show", "out", episode.group(1), "--full")
    assert shown.returncode == 0, shown.stderr
    assert "Reply with only your action, 'cooperate' or 'defect'" in shown.stdout, shown.stdout

    report = run(command, "report", "out", "--out", "report.html")
    assert report.returncode == 0, report.stderr
    assert "<html" in (work / "report.html").read_text(encoding="utf-8")[:500].lower()
