"""Issue 26 item 3: the plan over a pool of servers, and the run's wall time.

`stratagem run --dry-run` shows each server's share of the episodes (the pool's own rendezvous
choice for each episode id) and estimates the wall time from the concurrency and a latency per
call, measured in this directory or stated (`latency_s`). Fake OpenAI-compatible servers on
127.0.0.1 (tests/support/fake_openai.py), the command in-process and the real SQLite store.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.fake_openai import FakeOpenAIServer

from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore

KEY_ENV = "STRATAGEM_PLAN_POOL_TEST_KEY"
ROUNDS = 3


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-plan-pool-test-0123456789")


def experiment(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "plan-pool",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/random:7"}],
        "agents": [{"name": "choice", "output": "choice"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [ROUNDS],
        "seeds": list(range(12)),
        "retry": {"base_delay": 0, "max_delay": 0},
    }
    return data | overrides


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def shares(out: str) -> dict[str, tuple[int, int]]:
    """(episodes, calls) by server, read from the plan's lines."""
    found = re.findall(r"^    (http\S+)\s+(\d+) episodes?, about (\d+) calls?", out, re.M)
    return {url: (int(n), int(calls)) for url, n, calls in found}


def test_the_dry_run_spreads_the_episodes_as_the_pool_routes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each server's share in the plan is where the run then sends those episodes' calls."""
    with ExitStack() as stack:
        servers = [stack.enter_context(FakeOpenAIServer(["ok"], repeat=True)) for _ in range(3)]
        pool = [{"base_url": s.base_url, "max_concurrency": 8} for s in servers]
        model = {"model": "openai/fake", "api_key_env": KEY_ENV, "max_concurrency": 16,
                 "params": {"health_wait_s": 1}, "endpoints": pool}  # fmt: skip
        path = write(tmp_path, experiment(tmp_path, models=[model], concurrency=4))
        code, out, err = cli(capsys, "run", str(path), "--dry-run")
        assert (code, err) == (0, "")
        planned = shares(out)
        assert "  openai/fake over 3 endpoints, max_concurrency 16 for the pool:" in out
        assert out.count("max_concurrency 8") == 3
        assert sorted(planned) == sorted(s.base_url.rstrip("/") for s in servers)
        assert sum(n for n, _ in planned.values()) == 12
        assert all(calls == n * ROUNDS for n, calls in planned.values())
        assert len(set(planned.values())) > 1  # not an even split that any rule would give

        code, out, _ = cli(capsys, "run", str(path), "--no-progress")
        assert code == 0, out
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        calls = store.llm_calls()
    where = {c.episode_id: c.response["endpoint"] for c in calls}
    assert len(where) == 12 and all(c.response["endpoint"] == where[c.episode_id] for c in calls)
    routed = Counter(where.values())
    served = Counter(c.response["endpoint"] for c in calls)
    assert {url: (routed[url], served[url]) for url in planned} == planned


def test_an_endpoints_file_not_written_yet_is_said_in_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan may be read before the cluster job writes the file; a file that is there is
    read now, and a bad one is one line at exit 2, as at the run's start."""
    monkeypatch.chdir(tmp_path)
    model = {"model": "openai/fake", "endpoints_file": "hosts.txt", "api_key_env": KEY_ENV}
    path = write(tmp_path, experiment(tmp_path, models=[model]))
    code, out, _ = cli(capsys, "run", str(path), "--dry-run")
    assert code == 0
    assert "  openai/fake: endpoints_file hosts.txt is not written yet" in out
    (tmp_path / "hosts.txt").write_text("http://127.0.0.1:9/v1\nnot-a-url\n", encoding="utf-8")
    code, out, err = cli(capsys, "run", str(path), "--dry-run")
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.strip() == (
        f"error: {path}: endpoints_file hosts.txt, line 2: 'not-a-url' is not an http(s) URL, "
        "e.g. http://gpu-3:8000/v1"
    )


def plan(tmp_path: Path, **overrides: Any) -> Any:
    return Runner(config_from_dict(experiment(tmp_path, **overrides), "exp.yaml")).plan()


def stated(seconds: float, **entry: Any) -> list[dict[str, Any]]:
    return [{"model": "scripted/random:7", "latency_s": seconds, "max_concurrency": 64} | entry]


@pytest.mark.parametrize(
    ("settings", "seconds", "bound"),
    [
        # 12 episodes x 3 calls x 2 s = 72 call-seconds over 4 episodes in flight x 1 seat
        ({"concurrency": 4}, 18, "4 calls at once (episodes in flight"),
        # the model's own cap: 72 / 2
        ({"concurrency": 4, "models": stated(2, max_concurrency=2)}, 36, "'s 2 calls at once"),
        # every episode at once: the longest episode, 3 calls one after another
        ({"concurrency": 64}, 6, "the longest episode"),
        # both seats of a self-play act at once: twice the calls, twice the calls in flight
        ({"concurrency": 4, "opponents": [], "lineups": [["choice", "choice"]]}, 18, "8 calls"),
        # 36 calls at 6 a minute
        ({"concurrency": 64, "models": stated(2, limits={"requests_per_minute": 6})}, 360,
         "rate limits"),
    ],
)  # fmt: skip
def test_the_wall_time_of_a_plan(
    tmp_path: Path, settings: dict[str, Any], seconds: float, bound: str
) -> None:
    result = plan(tmp_path, **({"models": stated(2)} | settings))
    assert result.wall is not None and result.wall.seconds == pytest.approx(seconds)
    assert bound in result.wall.bound
    assert "calls x 2 s (stated: latency_s)" in "\n".join(result.details())


def test_without_a_latency_there_is_no_wall_time_and_a_partial_one_says_what_lacks(
    tmp_path: Path,
) -> None:
    assert plan(tmp_path).wall is None and plan(tmp_path).details() == []
    two = [*stated(2, id="a"), {"id": "b", "model": "scripted/random:8"}]
    result = plan(tmp_path, models=two)
    assert result.wall is None
    assert result.details() == ["  wall time: unknown: no latency for b (give `latency_s:`)"]


def test_a_measured_latency_replaces_the_stated_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The median of this directory's paid calls of the model; the stated one before any, and
    changing `latency_s` is not a change of what the episodes are (the re-run is not refused)."""
    with FakeOpenAIServer(["ok"], repeat=True) as server:
        model = {"model": "openai/fake", "base_url": server.base_url, "api_key_env": KEY_ENV,
                 "latency_s": 30}  # fmt: skip
        path = write(tmp_path, experiment(tmp_path, models=[model], seeds=[0, 1]))
        code, out, _ = cli(capsys, "run", str(path), "--dry-run")
        assert "about 6 calls x 30 s (stated: latency_s), 4 at once" in out
        assert "  wall time: about 90 s, set by the longest episode" in out  # 3 calls x 30 s
        code, _, _ = cli(capsys, "run", str(path), "--no-progress")
        assert code == 0
        with ResultStore(tmp_path / "out" / STORE_FILE) as store:
            latencies = [c.latency_s for c in store.llm_calls() if c.latency_s is not None]
        assert len(latencies) == 2 * ROUNDS
        more = experiment(tmp_path, models=[model | {"latency_s": 20}], seeds=[0, 1, 2])
        code, out, err = cli(capsys, "run", str(write(tmp_path, more)), "--dry-run")
        assert (code, err) == (0, "")
        median = statistics.median(latencies)
        assert f"calls x {median:.3g} s (measured: median of 6 paid calls)" in out
        assert "stated" not in out
        code, out, err = cli(capsys, "run", str(tmp_path / "exp.yaml"), "--no-progress")
        assert code == 0 and "1 played" in out, err


@pytest.mark.parametrize(
    ("value", "why"),
    [(0, "greater than 0"), (-1, "greater than 0"), (3601, "less than or equal to 3600"),
     ("fast", "a valid number"), (math.inf, "must be a finite number")],
)  # fmt: skip
def test_a_bad_latency_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: Any, why: str
) -> None:
    path = write(tmp_path, experiment(tmp_path, models=stated(value)))
    code, out, err = cli(capsys, "run", str(path), "--dry-run")
    assert (code, out) == (2, "") and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: {path}: models.0.latency_s: ") and why in line


def test_the_cluster_page_shows_the_plan_the_command_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/cluster.md's walkthrough is the real dry run of examples/magic-cluster.yaml with
    the page's 8-line endpoints file: it changes when the plan does."""
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "cluster.md").read_text(encoding="utf-8")
    shown = page.split("<!-- dry-run: examples/magic-cluster.yaml -->\n```text\n")[1]
    shown = shown.split("```")[0]
    urls = re.findall(r"^    (http\S+)", shown, re.M)
    assert len(urls) == 8
    (tmp_path / "examples").mkdir()
    example = (root / "examples" / "magic-cluster.yaml").read_text(encoding="utf-8")
    (tmp_path / "examples" / "magic-cluster.yaml").write_text(example, encoding="utf-8")
    (tmp_path / "endpoints.txt").write_text("\n".join(urls) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for env in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):  # as the example's comment exports them
        monkeypatch.setenv(env, "sk-cluster-page-test-0123456789")
    code, out, err = cli(capsys, "run", "examples/magic-cluster.yaml", "--dry-run")
    assert (code, err) == (0, "") and out == shown
