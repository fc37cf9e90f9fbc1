"""Issue 11 item 3: a permanent error (bad key, no access, unknown model, invalid request) stops the
run. Before, 20 episodes sent 20 requests with a bad key; now the first refusal stops new calls to
the model, no new episode starts, and the run says so in one line. Against the fake
OpenAI-compatible server on 127.0.0.1, which counts what it was sent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.fake_openai import FakeOpenAIServer

from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner, RunSummary
from stratagem.experiments.store import ResultStore

KEY_ENV = "STRATAGEM_REFUSAL_TEST_KEY"
KEY = "sk-refusal-test-0123456789abcdef"
EPISODES = 20


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def write_config(path: Path, base_url: str, concurrency: int) -> Path:
    data: dict[str, Any] = {
        "name": "refusals",
        "output": str(path.parent / "out"),
        "models": [
            {
                "model": "openai/fake-model",
                "base_url": base_url,
                "api_key_env": KEY_ENV,
                "max_concurrency": concurrency,
            }
        ],
        "agents": [{"name": "choice", "output": "choice"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
        "seeds": list(range(EPISODES)),
        "concurrency": concurrency,
        "retry": {"base_delay": 0, "max_delay": 0},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def run_file(path: Path) -> RunSummary:
    return asyncio.run(Runner(load_config(path), show_progress=False).run())


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (
            "401",
            "HTTP 401 unauthorised: Incorrect API key provided: [redacted] "
            f"(check the API key in {KEY_ENV})",
        ),
        ("403", "HTTP 403 forbidden: fake 403 (the key lacks access"),
        ("404", "HTTP 404 not found: fake 404 (unknown model or endpoint"),
        ("400", "HTTP 400 invalid request: fake 400"),
    ],
)
def test_the_first_permanent_error_stops_the_run(tmp_path: Path, status: str, words: str) -> None:
    with FakeOpenAIServer([status], repeat=True) as server:
        summary = run_file(write_config(tmp_path / "exp.yaml", server.base_url, concurrency=1))
        served = list(server.served)
    assert served == [status]  # one request, not one per episode, and never retried
    assert (summary.finished, summary.failed) == (0, 1)
    assert summary.stopped is not None and "\n" not in summary.stopped
    assert summary.stopped.startswith(f"model openai/fake-model: {words}")
    assert summary.stopped.endswith("; no further calls were sent to it")
    assert KEY not in summary.stopped
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        counts = store.status_counts("refusals")
        assert counts.get("failed") == 1 and counts.get("finished", 0) == 0
        (call,) = store.llm_calls()
        assert call.error and f"HTTP {status}" in call.error


def test_concurrent_episodes_send_at_most_what_was_already_in_flight(tmp_path: Path) -> None:
    """With 4 episodes at once, the requests already on their way when the first refusal came back
    are all that reach the server; the other 16 episodes never start (a re-run plays them)."""
    with FakeOpenAIServer(["401"], repeat=True) as server:
        summary = run_file(write_config(tmp_path / "exp.yaml", server.base_url, concurrency=4))
        served = len(server.served)
    assert 1 <= served <= 4
    assert summary.failed <= 4 and summary.finished == 0
    assert summary.stopped is not None and "HTTP 401 unauthorised" in summary.stopped
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        assert len(store.llm_calls()) == served

    # The key fixed (here: the server accepts it now), the same command plays every episode.
    with FakeOpenAIServer(["ok"], repeat=True) as server:
        again = run_file(write_config(tmp_path / "exp.yaml", server.base_url, concurrency=4))
    assert (again.finished, again.failed, again.stopped) == (EPISODES, 0, None)
