"""Every command names plugins the same way (`--plugin`, an experiment's `plugins:`,
STRATAGEM_PLUGINS), a results directory names its experiments' plugins again, `stratagem plugins`
lists them, and a broken plugin never breaks a command that does not use it.

Plugin state is process-wide: the cases about discovery and the environment run the installed
command in a child process; the in-process ones forget every plugin before and after."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support.cli import cli
from support.small_experiment import experiment

from stratagem import plugins
from stratagem.experiments.store import ResultStore
from stratagem.games.registry import GAMES

PLUGIN = """
from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.registry import register_game


def pennies() -> NormalFormGame:
    return NormalFormGame(
        "pennies",
        [["heads", "tails"], ["heads", "tails"]],
        [[[1, -1], [-1, 1]], [[-1, 1], [1, -1]]],
        "Matching pennies, from a plugin",
    )


register_game(CatalogEntry("pennies", "Matching pennies", "a test plugin", "pennies", pennies))
"""
BROKEN = 'raise RuntimeError("boom in the plugin")\n'
EXE = Path(sys.executable).parent / "stratagem"


@pytest.fixture
def fresh() -> Iterator[None]:
    """No plugin found before the test, and none left after it (nor its games)."""
    with plugins.isolated():
        yield
    for name in [n for n in GAMES if n.startswith("coinplug:")]:
        GAMES.remove(name)


def _files(tmp_path: Path) -> tuple[Path, Path]:
    lib = tmp_path / "lib"
    lib.mkdir(exist_ok=True)
    (lib / "coinplug.py").write_text(PLUGIN, encoding="utf-8")
    (lib / "broken.py").write_text(BROKEN, encoding="utf-8")
    return lib / "coinplug.py", lib / "broken.py"


def _experiment(tmp_path: Path, **overrides: object) -> Path:
    """exp/exp.yaml: the small experiment, with `overrides`, its results in tmp_path/out."""
    folder = tmp_path / "exp"
    folder.mkdir(exist_ok=True)
    path = folder / "exp.yaml"
    path.write_text(yaml.safe_dump(experiment(tmp_path, **overrides)), encoding="utf-8")
    return path


def _command(cwd: Path, *argv: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("STRATAGEM_")}
    environ |= {k: v for k, v in env.items() if v is not None}
    return subprocess.run(
        [str(EXE), *argv], cwd=cwd, env=environ, capture_output=True, text=True, timeout=300
    )


def test_games_lists_a_plugin_file_named_relative_to_the_current_directory(
    tmp_path: Path,
) -> None:
    _files(tmp_path)
    done = _command(tmp_path, "games", "--plugin", "lib/coinplug.py")
    assert done.returncode == 0, done.stderr
    assert "coinplug:pennies" in done.stdout and "dilemma" in done.stdout
    assert done.stderr == ""


def test_run_names_the_file_s_plugins_and_the_results_name_them_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh: None
) -> None:
    plugin_file, _ = _files(tmp_path)
    exp = _experiment(tmp_path, plugins=["../lib/coinplug.py"], games=["coinplug:pennies"])
    code, _, err = cli(capsys, "run", str(exp), "--no-progress")
    assert code == 0, err
    out = tmp_path / "out"
    with ResultStore(out / "stratagem.db") as store:
        (episode,) = store.episodes()
        assert episode.status == "finished" and episode.game == "coinplug:pennies"
        (stored,) = store.experiments()
    # Stored as the absolute file, so it names the plugin from any directory.
    assert stored.config["plugins"] == [str(plugin_file.resolve())]

    plugins.rediscover()  # a new command: no plugin named yet
    code, printed, err = cli(capsys, "show", str(out), episode.id[:8])
    assert code == 0, err
    assert "coinplug:pennies" in printed and "heads" in printed
    named = plugins.find("coinplug")
    assert named is not None and named.target == str(plugin_file.resolve())
    assert "experiment 'checks'" in named.origin

    for argv in (["status", str(out)], ["view", str(out), "--export", str(tmp_path / "site")]):
        plugins.rediscover()
        code, _, err = cli(capsys, *argv)
        assert code == 0, err
        assert plugins.find("coinplug") is not None, argv

    plugins.rediscover()
    code, printed, err = cli(capsys, "report", str(out))
    assert code == 0, err
    assert Path(printed.strip()).is_file()
    named = plugins.find("coinplug")
    assert named is not None and named.loaded  # loaded before the report: its studies count


def test_a_plugin_named_on_the_command_line_is_stored_with_the_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh: None
) -> None:
    plugin_file, _ = _files(tmp_path)
    exp = _experiment(tmp_path, games=["coinplug:pennies"])
    code, _, err = cli(capsys, "run", str(exp), "--no-progress", "--plugin", str(plugin_file))
    assert code == 0, err
    with ResultStore(tmp_path / "out" / "stratagem.db") as store:
        (stored,) = store.experiments()
    assert stored.config["plugins"] == [str(plugin_file.resolve())]


def test_plugins_lists_each_plugin_and_a_broken_one_in_one_line(tmp_path: Path) -> None:
    plugin_file, broken = _files(tmp_path)
    done = _command(
        tmp_path, "plugins", "--plugin", str(plugin_file), STRATAGEM_PLUGINS=str(broken)
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"coinplug: file {plugin_file}" in done.stdout
    assert "named on the command line" in done.stdout
    assert "  games: coinplug:pennies" in lines
    assert f"broken: file {broken}" in done.stdout and "named in STRATAGEM_PLUGINS" in done.stdout
    failed = [line for line in lines if "failed to load" in line]
    assert failed == [
        f"  warning: plugin 'broken' ({broken}) failed to load: RuntimeError: boom in the plugin"
    ]
    assert "Traceback" not in done.stdout + done.stderr


def test_plugins_says_how_to_add_one_when_there_is_none(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    monkeypatch.delenv(plugins.ENV_PLUGINS, raising=False)
    monkeypatch.delenv(plugins.ENV_NO_PLUGINS, raising=False)
    monkeypatch.setattr(plugins.importlib.metadata, "entry_points", lambda group: [])
    code, printed, _ = cli(capsys, "plugins")
    assert code == 0
    assert printed.startswith("no plugins found; add one:")
    for way in ("[project.entry-points.stratagem]", "--plugin", "plugins:", "STRATAGEM_PLUGINS"):
        assert way in printed


def test_plugins_off_leaves_a_plugin_s_names_unknown(tmp_path: Path) -> None:
    plugin_file, _ = _files(tmp_path)
    off = {"STRATAGEM_NO_PLUGINS": "1"}
    done = _command(tmp_path, "plugins", "--plugin", str(plugin_file), **off)
    assert done.returncode == 0
    assert done.stdout.startswith("plugins are off (STRATAGEM_NO_PLUGINS=1)")
    done = _command(tmp_path, "games", "--plugin", str(plugin_file), **off)
    assert done.returncode == 0 and "coinplug" not in done.stdout
    assert (
        done.stderr.strip() == "warning: plugins are off (STRATAGEM_NO_PLUGINS=1): --plugin ignored"
    )
    exp = _experiment(tmp_path, plugins=["../lib/coinplug.py"], games=["coinplug:pennies"])
    done = _command(tmp_path, "run", str(exp), "--dry-run", **off)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "unknown game 'coinplug:pennies'" in done.stderr


def test_a_broken_plugin_breaks_only_what_names_it(tmp_path: Path) -> None:
    _, broken = _files(tmp_path)
    env = {"STRATAGEM_PLUGINS": str(broken)}
    done = _command(tmp_path, "games", **env)
    assert done.returncode == 0
    assert "dilemma" in done.stdout and "ultimatum" in done.stdout
    assert done.stderr.strip().splitlines() == [
        f"warning: plugin 'broken' ({broken}) failed to load: RuntimeError: boom in the plugin; "
        "its names are not listed"
    ]
    built_in = _experiment(tmp_path)
    done = _command(tmp_path, "run", str(built_in), "--no-progress", **env)
    assert done.returncode == 0, done.stderr
    assert "1 played, 0 failed" in done.stdout
    uses_it = _experiment(tmp_path, name="uses-broken", games=["broken:pennies"])
    done = _command(tmp_path, "run", str(uses_it), "--no-progress", **env)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "plugin 'broken'" in line and "RuntimeError: boom in the plugin" in line


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("./missing.py", "plugins.0: plugin './missing.py' (experiment file): no such file"),
        ("not a module", "plugins.0: plugin 'not a module' (experiment file): not a module name"),
        ("../lib/local.py", "plugins.0: plugin '../lib/local.py' (experiment file): namespace "
                            "'local' is stratagem's own"),
    ],
)  # fmt: skip
def test_a_bad_plugins_entry_is_one_line_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh: None, spec: str, message: str
) -> None:
    _files(tmp_path)
    (tmp_path / "lib" / "local.py").write_text(PLUGIN, encoding="utf-8")
    exp = _experiment(tmp_path, plugins=[spec])
    code, _, err = cli(capsys, "run", str(exp), "--dry-run")
    assert code == 2
    assert message in err and f"{exp}: " in err
    assert len(err.strip().splitlines()) == 1


def test_a_plugin_namespace_named_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh: None
) -> None:
    plugin_file, _ = _files(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "coinplug.py").write_text(PLUGIN, encoding="utf-8")
    exp = _experiment(tmp_path, plugins=["../other/coinplug.py"], games=["coinplug:pennies"])
    code, _, err = cli(capsys, "run", str(exp), "--dry-run", "--plugin", str(plugin_file))
    assert code == 2
    assert f"namespace 'coinplug' is taken by {plugin_file}" in err
    assert len(err.strip().splitlines()) == 1
