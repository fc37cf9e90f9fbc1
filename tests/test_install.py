"""What a newcomer meets first (issue 33): a wheel built from the checkout holds the examples and
the docs pages its help names, `stratagem examples DIR` writes the examples out of it, and
`stratagem doctor` checks the install before the stores."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support.cli import cli

from stratagem.cli import install_checks

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.yaml"))


def _source_copy(target: Path) -> Path:
    """What a wheel is built from, copied (links kept as links, so the package's links to
    examples/ and docs/ resolve in the copy as in the checkout): no build/ in the shared tree."""
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "img")
    for name in ("src", "examples", "docs"):
        shutil.copytree(ROOT / name, target / name, symlinks=True, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    return target


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout, as `pip wheel .` builds it (setuptools from the registry,
    in pip's isolated build environment), unpacked."""
    base = tmp_path_factory.mktemp("wheel")
    source = _source_copy(base / "source")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(base / "dist"),
         str(source)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    (found,) = (base / "dist").glob("stratagem-*.whl")
    unpacked = base / "unpacked"
    with zipfile.ZipFile(found) as archive:
        archive.extractall(unpacked)
    return unpacked


def test_the_wheel_holds_every_example_and_every_docs_page_the_help_names(wheel: Path) -> None:
    package = wheel / "stratagem"
    held = {p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file()}
    assert {f"examples/{name}" for name in EXAMPLES} <= held
    named = set()
    for module in (ROOT / "src" / "stratagem").rglob("*.py"):
        named |= set(re.findall(r"docs/[\w/-]+\.md", module.read_text(encoding="utf-8")))
    assert "docs/episode-format.md" in named and "docs/index.md" in held
    assert named <= held, named - held


def test_examples_writes_the_wheels_examples_and_never_overwrites(
    wheel: Path, tmp_path: Path
) -> None:
    """The wheel's own code and files (on PYTHONPATH before the checkout's editable install)."""
    env = {**os.environ, "PYTHONPATH": str(wheel)}

    def stratagem(*argv: str) -> subprocess.CompletedProcess[str]:
        code = "import sys; from stratagem.cli import main; main(sys.argv[1:])"
        return subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env,
            cwd=tmp_path, timeout=120, check=False,
        )  # fmt: skip

    where = subprocess.run(
        [sys.executable, "-c", "import stratagem; print(stratagem.__file__)"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    assert where.stdout.startswith(str(wheel))
    done = stratagem("examples", "mine")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == EXAMPLES
    for name in EXAMPLES:
        assert (tmp_path / "mine" / name).read_bytes() == (ROOT / "examples" / name).read_bytes()
    assert "stratagem run mine/quickstart.yaml" in done.stdout

    (tmp_path / "mine" / "quickstart.yaml").write_text("name: edited\n", encoding="utf-8")
    again = stratagem("examples", "mine")
    assert again.returncode == 2
    (line,) = again.stderr.strip().splitlines()
    assert line.startswith("error: mine/") and "already exist" in line and "nothing written" in line
    assert (tmp_path / "mine" / "quickstart.yaml").read_text() == "name: edited\n"


def test_examples_refuses_a_file_as_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("taken").write_text("x", encoding="utf-8")
    code, _, err = cli(capsys, "examples", "taken")
    assert code == 2
    assert err.strip() == "error: 'taken' is a file; name a folder to write the examples into"


def test_help_names_the_installed_docs_and_the_examples_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(capsys, "--help")
    assert code == 0
    flat = " ".join(out.split())
    docs = re.search(r"Documentation: (\S+index\.md)", flat)
    assert docs is not None and Path(docs.group(1)).is_file()
    assert "stratagem examples DIR" in flat and "stratagem doctor" in flat


SECRET = "sk-doctor-test-0123456789abcdef"


def test_doctor_checks_the_install_one_line_each_and_never_prints_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bare `doctor` where nothing has run yet: the install's lines, then no store (not an
    error). The embedded model is really loaded and asked, in a child process."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("TOGETHER_API_KEY", SECRET)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, out, err = cli(capsys, "doctor")
    assert code == 0, out + err
    lines = dict(line.split(": ", 1) for line in out.strip().splitlines())
    assert lines["python"].startswith(".".join(map(str, sys.version_info[:3])))
    assert lines["stratagem"].endswith("with its examples and docs")
    assert lines["dependencies"].startswith("all ")
    for extra in ("openspiel", "textarena", "pettingzoo", "ray", "bedrock"):
        assert lines[f"extra {extra}"].startswith(("installed", "not installed"))
    assert lines["embedded model"].startswith("local/gemma-3-270m loads and answers (")
    assert "browser" in lines and "browser tests" in lines
    assert lines["key OPENAI_API_KEY"].startswith("set ")
    assert lines["key ANTHROPIC_API_KEY"].startswith("not set ")
    assert lines["other keys set"].startswith("TOGETHER_API_KEY ")
    assert "AWS credentials" in lines
    assert lines["results"].startswith("no result store yet")
    assert SECRET not in out + err


def test_doctor_says_what_is_missing_and_a_model_that_fails_is_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    real = install_checks.installed_version
    monkeypatch.setattr(
        install_checks,
        "installed_version",
        lambda name: None if name in ("ray", "numpy") else real(name),
    )
    monkeypatch.setattr(install_checks, "PROBE_MODEL", "local/no-such-model")
    code, out, _ = cli(capsys, "doctor")
    assert code == 1
    lines = dict(line.split(": ", 1) for line in out.strip().splitlines())
    assert lines["extra ray"].startswith("not installed (run --executor ray): ")
    assert "pip install -e '.[ray]'" in lines["extra ray"]
    assert "missing: numpy (reinstall" in lines["dependencies"]
    model = lines["embedded model"]
    assert model.startswith("local/no-such-model fails: ") and "no-such-model" in model[26:]


def test_doctor_names_a_crashed_model_library_by_its_signal() -> None:
    """A llama.cpp built for another CPU dies of SIGILL in its first matrix product (the
    Makefile's comment): doctor says so instead of dying with it."""
    crashed = subprocess.CompletedProcess(args=[], returncode=-4, stdout="", stderr="")
    text = install_checks._failure(crashed)
    assert text.startswith("crashed (SIGILL): llama-cpp-python was compiled for instructions")
