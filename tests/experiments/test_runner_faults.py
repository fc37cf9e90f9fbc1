"""The runner behind a misbehaving OpenAI-compatible server: every fault of a fixed pattern is
retried, every episode completes, and retries and invalid outputs are exactly what the pattern
implies. Concurrency 1, so the pattern maps onto the calls in a known order."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.fake_openai import FakeOpenAIServer

from stratagem.analysis.cells import cell_table
from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand
from stratagem.experiments.runner import STORE_FILE, Runner, RunSummary
from stratagem.experiments.store import ResultStore

KEY_ENV = "STRATAGEM_FAULTS_TEST_KEY"
KEY = "sk-fault-test-0123456789abcdef"
REFUSAL = "I will not play this game."

# Each fault is followed by the attempt that retries it; after the pattern, "ok" forever.
PATTERN = [
    "429", "ok",                                  # call 1: 1 retry
    "500", "500", "ok",                           # call 2: 2 retries
    "slow", "ok",                                 # call 3: 1 retry (timed out)
    "malformed", "ok",                            # call 4: 1 retry
    "429", "500", "slow", "malformed", "ok",      # call 5: 4 retries
]  # fmt: skip
RETRIES_PER_CALL = [1, 2, 1, 1, 4, 0]


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def write_config(path: Path, base_url: str, **overrides: Any) -> Path:
    data: dict[str, Any] = {
        "name": "faults",
        "output": str(path.parent / "out"),
        "models": [
            {
                "model": "openai/fake-model",
                "base_url": base_url,
                "api_key_env": KEY_ENV,
                "timeout_s": 0.25,
                "max_concurrency": 1,
            }
        ],
        # A choice agent (the server answers {"choice": <first label>}: valid), then a tag agent
        # (unconstrained request: the server answers REFUSAL, never a move message).
        "agents": [
            {"name": "choice", "output": "choice"},
            {"name": "tag", "output": "tag", "max_reasks": 1, "constrain": False},
        ],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
        "concurrency": 1,
        "retry": {"base_delay": 0, "max_delay": 0},
    }
    data.update(overrides)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def run_file(path: Path) -> RunSummary:
    return asyncio.run(Runner(load_config(path), show_progress=False).run())


def test_fault_pattern_gives_exact_retries_and_invalid_counts(tmp_path: Path) -> None:
    with FakeOpenAIServer(PATTERN, slow_s=1.0, reply=REFUSAL) as server:
        file = write_config(tmp_path / "exp.yaml", server.base_url)
        summary = run_file(file)
        served = list(server.served)
    assert (summary.finished, summary.failed, summary.errors) == (2, 0, [])
    # 6 calls answered, 9 faulty attempts retried: 15 requests, the pattern then one "ok".
    assert served == [*PATTERN, "ok"]
    assert summary.calls == 6 and summary.cached_calls == 0
    assert summary.tokens == 6 * 10  # the fake's usage: 7 prompt + 3 completion tokens

    choice, tag = (s.id for s in expand(load_config(file)))
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        calls = store.llm_calls()
        assert [c.request["retries"] for c in calls] == RETRIES_PER_CALL
        assert sum(c.request["retries"] for c in calls) == 9 == len(PATTERN) - 5
        assert [(c.episode_id, c.round, c.request["purpose"]) for c in calls] == [
            (choice, 1, "decision"), (choice, 2, "decision"),
            (tag, 1, "decision"), (tag, 1, "reask"), (tag, 2, "decision"), (tag, 2, "reask"),
        ]  # fmt: skip
        assert all(c.error is None and not c.cached for c in calls)
        assert [(c.input_tokens, c.output_tokens) for c in calls] == [(7, 3)] * 6
        assert [c.text for c in calls] == ["cooperate"] * 2 + [REFUSAL] * 4

        assert [(r.actions, r.valid) for r in store.rounds(choice)] == [
            (("cooperate", "cooperate"), True)
        ] * 2
        # The tag agent never got a move message: both rounds forfeited after 1 re-ask.
        assert [(r.actions, r.payoffs, r.valid) for r in store.rounds(tag)] == [
            ((None, "cooperate"), (0.0, 0.0), False)
        ] * 2
        assert store.events(choice, "invalid") == []
        invalid = store.events(tag, "invalid")
        assert [(e.round, e.data["texts"]) for e in invalid] == [
            (1, [REFUSAL, REFUSAL]),
            (2, [REFUSAL, REFUSAL]),
        ]
        rates = {c.agent: c.invalid_rate for c in cell_table(store, "faults")}
        assert rates == {"choice": 0.0, "tag": 1.0}
    # The key reached the server but was never written anywhere.
    for file_ in (tmp_path / "out").iterdir():
        assert KEY.encode() not in file_.read_bytes()


def test_a_call_out_of_retries_fails_its_episode_and_a_rerun_completes(tmp_path: Path) -> None:
    with FakeOpenAIServer(["500", "429", "500", "ok"], reply=REFUSAL) as server:
        file = write_config(
            tmp_path / "exp.yaml",
            server.base_url,
            agents=[{"name": "choice", "output": "choice"}],
            seeds=[0, 1],
            retry={"max_attempts": 3, "base_delay": 0, "max_delay": 0},
        )
        first = run_file(file)
        # Episode 1 gave up after 3 attempts; episode 2 was still played (its calls were fine).
        assert (first.finished, first.failed, first.stopped) == (1, 1, None)
        assert len(first.errors) == 1 and "gave up after 3 attempts" in first.errors[0]
        assert server.served == ["500", "429", "500", "ok", "ok"]
        failed, finished = (s.id for s in expand(load_config(file)))
        with ResultStore(tmp_path / "out" / STORE_FILE) as store:
            assert store.episode(failed).status == "failed"  # type: ignore[union-attr]
            assert store.episode(finished).status == "finished"  # type: ignore[union-attr]
            (call,) = store.llm_calls(failed)
            assert call.error and "HTTP 500" in call.error and call.request["retries"] == 2
            assert call.text is None and not call.cached

        second = run_file(file)
        assert (second.skipped, second.finished, second.failed) == (1, 1, 0)
        assert server.served == ["500", "429", "500", "ok", "ok", "ok", "ok"]
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        assert store.status_counts("faults")["finished"] == 2
        assert [r.valid for r in store.rounds(failed)] == [True, True]
        # The failed call stays on record (detached from the restarted episode).
        assert sum(c.error is not None for c in store.llm_calls()) == 1
