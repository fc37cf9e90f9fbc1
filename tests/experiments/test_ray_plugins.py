"""`--executor ray` plays a plugin's game: the High Card guide's package (docs/guides/new-game.md),
installed into a folder of the test's as `pip install` would put it in an environment.

Each worker loads the plugins the coordinator uses, the same versions, before any episode is
sent to it: a cluster whose nodes have the package plays the grid as the local executor does; a
cluster whose nodes lack it stops the run in one line that says what to install, with nothing
sent.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.guide_files import GUIDES, install, write_files
from support.ray_cluster import LocalCluster, lone_node_cluster

from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore


@pytest.fixture
def highcard(tmp_path: Path) -> Path:
    """The guide's package installed into `tmp_path/site` (what PYTHONPATH names)."""
    write_files(GUIDES / "new-game.md", tmp_path)
    install(tmp_path / "highcard", tmp_path / "site")
    return tmp_path / "site"


def stratagem(args: list[str], cwd: Path, site: Path | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    command = [sys.executable, "-c", "from stratagem.cli import main; main()", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def played(db: Path) -> list[tuple[str, str, object]]:
    with ResultStore(db) as store:
        return sorted((e.id, e.status, e.payoffs) for e in store.episodes())


def test_the_guide_s_package_plays_on_a_cluster_whose_nodes_have_it(
    tmp_path: Path, highcard: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = stratagem(["run", "highcard/experiment.yaml", "--no-progress"], tmp_path, highcard)
    assert local.returncode == 0, local.stderr
    reference = played(tmp_path / "results" / "high-card" / STORE_FILE)
    assert len(reference) == 8 and {s for _, s, _ in reference} == {"finished"}
    (tmp_path / "results").rename(tmp_path / "local")

    monkeypatch.setenv("PYTHONPATH", str(highcard))  # the nodes' environment has the package
    with lone_node_cluster() as cluster:
        args = ["run", "highcard/experiment.yaml", "--no-progress", "--executor", "ray"]
        ray = stratagem([*args, "--address", cluster.address], tmp_path, highcard)
    assert ray.returncode == 0, ray.stdout + ray.stderr
    assert played(tmp_path / "results" / "high-card" / STORE_FILE) == reference


def test_a_cluster_whose_nodes_lack_the_plugin_stops_the_run_in_one_line(
    ray_cluster: LocalCluster, tmp_path: Path, highcard: Path
) -> None:
    # The session's cluster was started without the package: its workers cannot load it.
    args = ["run", "highcard/experiment.yaml", "--no-progress", "--executor", "ray"]
    result = stratagem([*args, "--address", ray_cluster.address], tmp_path, highcard)
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(errors) == 1, result.stdout + result.stderr
    assert errors[0].startswith("error: a Ray worker could not start: the Ray worker "), errors
    assert "lacks plugin 'highcard': not installed: pip install 'highcard==0.1.0'" in errors[0]
    with ResultStore(tmp_path / "results" / "high-card" / STORE_FILE) as store:
        assert store.call_totals()["calls"] == 0
        assert store.status_counts()["running"] == 0  # nothing was sent to a worker
