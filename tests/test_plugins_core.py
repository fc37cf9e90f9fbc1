"""Plugin discovery and provenance (issue 34), through the real command in fresh processes: an
installed distribution's entry point is imported only when one of its names is used; plugins off
means none; a namespace stratagem uses is refused; and an episode remembers the plugin version
that made it, so a resumed run or an import under another version is refused unless forced.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

PLUGIN = """from stratagem import register
from stratagem.games.ultimatum import UltimatumGame

register.game("split", UltimatumGame, source="tests/test_plugins_core.py")
"""


def stratagem(*args: str, cwd: Path, site: Path | None = None, **env: str) -> tuple[int, str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("STRATAGEM_", "PYTHON"))}
    if site is not None:
        environ["PYTHONPATH"] = str(site)
    environ.update(env)
    command = [sys.executable, "-c", "from stratagem.cli import main; main()", *args]
    done = subprocess.run(command, cwd=cwd, env=environ, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def installed(tmp_path: Path) -> Path:
    """A distribution `splitting` 1.2 whose entry point `splitting` names `splitting._stratagem`,
    laid out in a folder as pip installs one; importing the plugin writes a marker file."""
    site = tmp_path / "site"
    package = site / "splitting"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    marker = tmp_path / "imported"
    (package / "_stratagem.py").write_text(
        f"open({str(marker)!r}, 'a').write('x')\n" + PLUGIN, encoding="utf-8"
    )
    info = site / "splitting-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: splitting\nVersion: 1.2\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[stratagem]\nsplitting = splitting._stratagem\n", encoding="utf-8"
    )
    return site


def test_an_entry_point_is_imported_only_when_one_of_its_names_is_used(tmp_path: Path) -> None:
    site = installed(tmp_path)
    marker = tmp_path / "imported"
    tournament = ("tournament", "--game", "dilemma", "-s", "TitForTat", "-s", "AlwaysDefect")
    status, out, err = stratagem(*tournament, "--turns", "2", cwd=tmp_path, site=site)
    assert status == 0, err
    assert not marker.exists()  # a command that does not use its names does not import it
    status, out, err = stratagem("games", cwd=tmp_path, site=site)
    assert status == 0 and "splitting:split" in out, err  # listings import every plugin
    assert marker.read_text() == "x"
    status, out, err = stratagem("plugins", cwd=tmp_path, site=site)
    assert status == 0 and "splitting" in out and "1.2" in out and "splitting:split" in out
    # Named again as a module on the command line, it is the same plugin, not a clash.
    status, out, err = stratagem("games", "--plugin", "splitting", cwd=tmp_path, site=site)
    assert status == 0 and "splitting:split" in out, err
    # Off, nothing is found: its names are unknown, in one line.
    status, out, err = stratagem("play", "splitting:split", "--seat", "0=human", cwd=tmp_path,
                                 site=site, STRATAGEM_NO_PLUGINS="1")  # fmt: skip
    assert status == 2 and "unknown game 'splitting:split'" in err
    assert len(err.strip().splitlines()) == 1


def test_a_namespace_stratagem_uses_is_refused(tmp_path: Path) -> None:
    (tmp_path / "openspiel.py").write_text(PLUGIN, encoding="utf-8")
    status, _, err = stratagem("games", "--plugin", "./openspiel.py", cwd=tmp_path)
    assert status == 2 and "namespace 'openspiel' is stratagem's own" in err
    assert len(err.strip().splitlines()) == 1


def experiment(tmp_path: Path) -> Path:
    (tmp_path / "cards.py").write_text(PLUGIN, encoding="utf-8")
    data = {
        "name": "split",
        "output": "results/split",
        "plugins": ["./cards.py"],
        "models": [{"model": "scripted/random:1"}],
        "games": ["cards:split"],
        "lineups": [["scripted:40", "scripted:accept"]],
        "seeds": [1, 2],
    }
    path = tmp_path / "split.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_another_version_of_a_plugin_is_drift_on_resume_and_on_import(tmp_path: Path) -> None:
    experiment(tmp_path)
    status, out, err = stratagem("run", "split.yaml", "--no-progress", cwd=tmp_path)
    assert status == 0, out + err
    status, _, err = stratagem("export", "split.jsonl", "--store", "results/split", cwd=tmp_path)
    assert status == 0, err
    line = json.loads((tmp_path / "split.jsonl").read_text().splitlines()[0])
    (record,) = line["spec"]["plugins"]
    assert record["plugin"] == "cards" and len(record["sha256"]) == 16

    # The plugin file changes: its episodes were made by other code.
    with (tmp_path / "cards.py").open("a", encoding="utf-8") as file:
        file.write("# a new version\n")
    status, out, err = stratagem("run", "split.yaml", "--no-progress", cwd=tmp_path)
    assert status == 2 and len(err.strip().splitlines()) == 1, out + err
    assert f"was made with plugin 'cards' file sha256 {record['sha256']}, not file sha256" in err
    assert err.rstrip().endswith("--force to go on with the installed one")
    status, out, err = stratagem("run", "split.yaml", "--no-progress", "--force", cwd=tmp_path)
    assert status == 0 and "warning: " in out + err, out + err

    args = ("import", "split.jsonl", "--store", "copy", "--plugin", "./cards.py")
    status, out, err = stratagem(*args, cwd=tmp_path)
    assert status == 2 and "spec.plugins: the episode was made with plugin 'cards'" in out + err
    assert not (tmp_path / "copy").exists()
    status, out, err = stratagem(*args, "--force", cwd=tmp_path)
    assert status == 0 and "imported 2 episodes" in out, out + err

    # Gone, the results still read, and say what is missing.
    (tmp_path / "cards.py").unlink()
    status, out, err = stratagem("show", "results/split", cwd=tmp_path)
    assert status == 0, err
    assert "cards.py" in err and "Traceback" not in err
