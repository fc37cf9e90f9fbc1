"""Issue 23 item 4 through the command: a run on a model whose provider reads most of each prompt
from its prompt cache (the fake OpenAI server on 127.0.0.1, reporting `cached_tokens`) stores the
cached part of every call apart, bills it at the cached rate, and says the cache's share of input
and what it saved in the run's last line, in `status` and in the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.fake_openai import COMPLETION_TOKENS, FakeOpenAIServer

from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore

KEY_ENV = "STRATAGEM_PROMPT_CACHE_RUN_KEY"
PROMPT, CACHED = 2000, 1620
ROUNDS = 3
# gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per million tokens.
PAID = ((PROMPT - CACHED) * 0.15 + CACHED * 0.075 + COMPLETION_TOKENS * 0.60) / 1e6
SAVED = CACHED * 0.075 / 1e6


def write(tmp_path: Path, url: str) -> Path:
    data: dict[str, Any] = {
        "name": "cached",
        "output": str(tmp_path / "out"),
        "models": [
            {"id": "mini", "model": "openai/gpt-4o-mini", "base_url": url, "api_key_env": KEY_ENV}
        ],
        "agents": [{"name": "plain"}],
        "games": ["pd"],
        "opponents": ["TitForTat"],
        "rounds": [ROUNDS],
        "seeds": [0, 1],
    }
    path = tmp_path / "cached.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_cached_input_is_stored_billed_and_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-prompt-cache-run-0123456789")
    with FakeOpenAIServer(["ok"], prompt_tokens=PROMPT, cached_tokens=CACHED) as server:
        code, out, err = cli(capsys, "run", str(write(tmp_path, server.base_url)), "--no-progress")
        calls = len(server.requests)
    assert code == 0, err
    assert calls == 2 * ROUNDS
    share = f"{CACHED / PROMPT:.0%}"  # 81%
    line = f"prompt cache: {share} of input read from it, saved ${calls * SAVED:.4f}"
    [summary] = [s for s in out.splitlines() if s.startswith("experiment cached:")]
    assert f"${calls * PAID:.4f} ({line})," in summary  # the cost billed, then what the cache did

    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        stored = store.llm_calls()
        totals = store.call_totals()
    assert [(c.input_tokens, c.cached_input_tokens, c.cache_write_tokens) for c in stored] == [
        (PROMPT, CACHED, 0)
    ] * calls
    assert all(c.cost_usd == pytest.approx(PAID) for c in stored)
    assert all(c.saved_usd == pytest.approx(SAVED) for c in stored)
    assert totals["cost_usd"] == pytest.approx(calls * PAID)
    assert totals["saved_usd"] == pytest.approx(calls * SAVED)

    code, out, _ = cli(capsys, "status", str(tmp_path / "out"))
    assert code == 0 and f"${calls * PAID:.4f} ({line})" in out

    report = tmp_path / "report.html"
    code, _, err = cli(capsys, "report", str(tmp_path / "out"), "--out", str(report))
    assert code == 0, err
    html = report.read_text(encoding="utf-8")
    assert f"{share} of input read from it, saved ${calls * SAVED:.4f}" in html  # the headline
    # The methods' model-calls table says it too.
    assert f"prompt cache read {share} of the {calls * PROMPT:,} input tokens paid for" in html
