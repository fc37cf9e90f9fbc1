"""Issue 26, *Visible*: `stratagem status` shows, per server of a model's endpoint pool, what the
stored calls say (calls, errors, p50/p95 latency, tok/s) and the state endpoints.json last gave,
from a real run against two fake OpenAI-compatible servers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.fake_openai import FakeOpenAIServer

from stratagem.experiments.endpoint_progress import ENDPOINTS_FILE
from stratagem.experiments.store import ResultStore

KEY_ENV = "STRATAGEM_STATUS_ENDPOINTS_KEY"
SEEDS, ROUNDS = 6, 2


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-status-endpoints-0123456789")


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")


def run_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], servers: list[FakeOpenAIServer]
) -> Path:
    path = tmp_path / "pool.yaml"
    data: dict[str, Any] = {
        "name": "pool",
        "output": str(tmp_path / "out"),
        "models": [
            {
                "model": "openai/fake",
                "api_key_env": KEY_ENV,
                "price": {"input": 1.0, "output": 1.0},
                "endpoints": [{"base_url": s.base_url} for s in servers],
                "params": {"health_wait_s": 1},
            }
        ],
        "agents": [{"name": "choice", "output": "choice"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [ROUNDS],
        "seeds": list(range(SEEDS)),
        "retry": {"max_attempts": 1, "base_delay": 0, "max_delay": 0},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    cli(capsys, "run", str(path), "--no-progress", "--yes")
    return tmp_path / "out"


def table_rows(out: str) -> dict[str, list[str]]:
    """The endpoint table's cells by URL (rich's box characters stripped)."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells and cells[0].startswith("http://127.0.0.1:"):
            rows[cells[0]] = cells[1:]
    return rows


@pytest.fixture
def two() -> Iterator[list[FakeOpenAIServer]]:
    with ExitStack() as stack:
        yield [stack.enter_context(FakeOpenAIServer(["ok"], repeat=True)) for _ in range(2)]


def test_status_shows_each_server_s_stored_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], two: list[FakeOpenAIServer]
) -> None:
    out_dir = run_on(tmp_path, capsys, two)
    code, out, err = cli(capsys, "status", str(out_dir))
    assert code == 0, err
    rows = table_rows(out)
    assert set(rows) == {s.base_url for s in two}
    for server in two:
        model, state, calls, errors, p50, p95, speed = rows[server.base_url]
        assert (model, state) == ("openai/fake", "healthy")  # as the run's endpoints.json says
        assert (int(calls), int(errors)) == (len(server.served), 0)
        if server.served:
            assert p50.endswith(" s") and p95.endswith(" s") and float(speed) > 0
        else:  # the pool sent it no call (the other answered faster): listed, with no figures
            assert p50 == p95 == speed == "-"
    assert sum(len(s.served) for s in two) == SEEDS * ROUNDS
    assert "(run ended)" in out
    # Without the file the state is unknown, and the stored figures stay.
    (out_dir / ENDPOINTS_FILE).unlink()
    code, out, err = cli(capsys, "status", str(out_dir))
    assert code == 0, err
    assert {cells[1] for cells in table_rows(out).values()} == {"-"}
    assert "state: as" not in out


def test_status_names_the_server_of_each_failed_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every attempt fails (500) and is not retried: each stored failure counts at the last
    server its call tried."""
    with (
        FakeOpenAIServer(["500"], repeat=True) as first,
        FakeOpenAIServer(["500"], repeat=True) as second,
    ):
        out_dir = run_on(tmp_path, capsys, [first, second])
    with ResultStore(out_dir / "stratagem.db") as store:
        failed = [c for c in store.llm_calls() if c.error is not None]
    assert failed and all("[endpoint http://127.0.0.1:" in (c.error or "") for c in failed)
    code, out, _ = cli(capsys, "status", str(out_dir))
    rows = table_rows(out)
    assert code == 0 and rows
    assert sum(int(cells[2]) for cells in rows.values()) == len(failed)
    assert all(cells[2] == cells[3] for cells in rows.values())  # every call an error
    assert all(cells[4] == cells[5] == cells[6] == "-" for cells in rows.values())


def test_status_shows_the_state_endpoints_json_gave_and_that_the_run_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], two: list[FakeOpenAIServer]
) -> None:
    out_dir = run_on(tmp_path, capsys, two)
    with ResultStore(out_dir / "stratagem.db") as store:
        experiment = store.experiments()[0].id
    down, up = two[0].base_url, two[1].base_url
    unused = "http://127.0.0.1:9/v1"  # in the pool, never sent a call
    figures = {"calls": 1, "errors": 0, "p50_s": 0.1, "p95_s": 0.1, "output_tokens": 3,
               "busy_s": 0.1}  # fmt: skip
    written = {
        "written_at": time.time() - 300,
        "experiment": experiment,
        "models": [
            {
                "name": "openai/fake",
                "model": "openai/fake",
                "endpoints": [
                    {"url": down, "state": "cooling", **figures},
                    {"url": up, "state": "[bold]healthy[/bold]", **figures},
                    {"url": unused, "state": "out", **figures},
                ],
            }
        ],
    }
    (out_dir / ENDPOINTS_FILE).write_text(json.dumps(written), encoding="utf-8")
    code, out, _ = cli(capsys, "status", str(out_dir))
    rows = table_rows(out)
    assert code == 0
    assert rows[down][1] == "cooling" and rows[up][1] == "[bold]healthy[/bold]"  # no markup
    # A server of the pool no call reached is listed with its state and no stored figures.
    assert rows[unused][1:] == ["out", "0", "0", "-", "-", "-"]
    assert "state: as endpoints.json said 5 min ago (run ended)" in out
    written["experiment"] = "another-experiment"  # another run's file: no state shown
    (out_dir / ENDPOINTS_FILE).write_text(json.dumps(written), encoding="utf-8")
    code, out, _ = cli(capsys, "status", str(out_dir))
    assert code == 0 and table_rows(out)[down][1] == "-" and "state: as" not in out
