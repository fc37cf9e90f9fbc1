"""Issue 11 item 7 through a whole run: seed-003's reasoning models (Claude with extended thinking
at 60% of max_tokens, DeepSeek-R1 on an OpenAI-compatible host) against the fake servers on
127.0.0.1. The thinking budget reaches the request, the thinking text is stored with each call but
never parsed as the move (it holds a `[move]` tag of its own, which would make the reply invalid
under seed-003's one-tag rule), and thinking tokens count in the call, the round's tokens (what
seed-003's efficiency divides by, §5.4) and the run's totals and cost."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.fake_anthropic import INPUT_TOKENS, OUTPUT_TOKENS, FakeAnthropicServer
from support.fake_openai import COMPLETION_TOKENS, PROMPT_TOKENS, FakeOpenAIServer

from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.cache import ResponseCache
from stratagem.llm.pipeline import ModelClient, build_client
from stratagem.llm.registry import ModelConfig
from stratagem.llm.types import Message, Request, Response

KEY_ENV = "STRATAGEM_THINKING_TEST_KEY"
THOUGHT = "They opened with cooperation. [move] defection would pay 6 now, but not later."
REPLY = "[move] (trust pays here) cooperation"
THINKING_TOKENS, REASONING_TOKENS = 40, 90
ROUNDS = 2


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-thinking-test-0123456789abcdef")


def write_config(path: Path, anthropic_url: str, openai_url: str) -> Path:
    data: dict[str, Any] = {
        "name": "thinking",
        "output": str(path.parent / "out"),
        "models": [
            {
                "id": "claude-thinking",
                "model": "anthropic/claude-3-7-sonnet-20250219",
                "base_url": anthropic_url,
                "api_key_env": KEY_ENV,
                "price": {"input": 3.0, "output": 15.0},
                "params": {"thinking_budget": "60%"},
            },
            {
                "id": "deepseek-r1",
                "model": "openai/deepseek-ai/DeepSeek-R1",
                "base_url": openai_url,
                "api_key_env": KEY_ENV,
                "price": {"input": 3.0, "output": 7.0},
            },
        ],
        "agents": [
            {
                "name": "zs",
                "framing": "counterfactual",
                "prompting": "zs",
                "output": "tag",
                "history": "chat",
                "max_reasks": 0,
                "temperature": 1.0,
                "max_tokens": 4096,
                "constrain": False,
            }
        ],
        "games": ["pd"],
        "opponents": ["tft-br"],
        "rounds": [ROUNDS],
        "concurrency": 1,
        "retry": {"base_delay": 0, "max_delay": 0},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_thinking_models_in_a_run(tmp_path: Path) -> None:
    claude = FakeAnthropicServer(reply=REPLY, thinking=THOUGHT, thinking_tokens=THINKING_TOKENS)
    r1 = FakeOpenAIServer(
        [], reply=REPLY, reasoning=THOUGHT, reasoning_field="inline",
        reasoning_tokens=REASONING_TOKENS,
    )  # fmt: skip
    with claude, r1:
        file = write_config(tmp_path / "exp.yaml", claude.base_url, r1.base_url)
        summary = asyncio.run(Runner(load_config(file), show_progress=False).run())
        claude_bodies, r1_bodies = list(claude.requests), list(r1.requests)
    assert (summary.finished, summary.failed, summary.errors) == (2, 0, [])

    # The budget reached Anthropic: seed-003 §6, max_tokens // 5 * 3 = 2457 of 4096.
    assert len(claude_bodies) == ROUNDS
    assert all(b["thinking"] == {"type": "enabled", "budget_tokens": 2457} for b in claude_bodies)
    assert all("thinking" not in b and "reasoning_effort" not in b for b in r1_bodies)
    # Thinking is never fed back: the second round's history holds only the visible reply.
    assert THOUGHT not in str(claude_bodies[-1]["messages"]) + str(r1_bodies[-1]["messages"])

    claude_tokens = INPUT_TOKENS + OUTPUT_TOKENS + THINKING_TOKENS
    r1_tokens = PROMPT_TOKENS + COMPLETION_TOKENS + REASONING_TOKENS
    thinking_spec, r1_spec = expand(load_config(file))
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        for spec, tokens in ((thinking_spec, claude_tokens), (r1_spec, r1_tokens)):
            calls = store.llm_calls(spec.id)
            assert len(calls) == ROUNDS
            for call in calls:
                assert call.text == REPLY and call.response["text"] == REPLY
                assert call.response["reasoning"] == THOUGHT  # stored with the call
                assert call.input_tokens + call.output_tokens == tokens  # type: ignore[operator]
            rounds = store.rounds(spec.id)
            # The move came from the answer, not from the [move] inside the thinking.
            assert [(r.valid, r.actions[0]) for r in rounds] == [(True, "cooperation")] * ROUNDS
            assert [r.tokens[0] for r in rounds] == [tokens] * ROUNDS  # type: ignore[index]
        (r1_call, *_) = store.llm_calls(r1_spec.id)
        assert r1_call.response["usage"]["reasoning_tokens"] == REASONING_TOKENS
    assert summary.tokens == ROUNDS * (claude_tokens + r1_tokens)
    claude_cost = (INPUT_TOKENS * 3 + (OUTPUT_TOKENS + THINKING_TOKENS) * 15) / 1e6
    r1_cost = (PROMPT_TOKENS * 3 + (COMPLETION_TOKENS + REASONING_TOKENS) * 7) / 1e6
    assert summary.cost_usd == pytest.approx(ROUNDS * (claude_cost + r1_cost))


async def ask(client: ModelClient, request: Request) -> Response:
    try:
        return (await client.generate(request))[0]
    finally:
        await client.aclose()


def test_thinking_and_plain_variants_never_share_cached_answers() -> None:
    """One model string, two settings: each variant is asked itself, not replayed from the other."""
    cache = ResponseCache()
    request = Request((Message("user", "Your move?"),), max_tokens=4096)
    with FakeAnthropicServer(reply=REPLY, thinking=THOUGHT) as server:
        answers = []
        for params in ({}, {"thinking_budget": "60%"}, {"thinking_budget": 3000}, {}):
            config = ModelConfig(
                model="anthropic/claude-test", base_url=server.base_url, api_key_env=KEY_ENV,
                params=params,
            )  # fmt: skip
            answers.append(asyncio.run(ask(build_client(config, cache=cache), request)))
        bodies = list(server.requests)
    assert [b.get("thinking", {}).get("budget_tokens") for b in bodies] == [None, 2457, 3000]
    assert [a.cached for a in answers] == [False, False, False, True]  # only the plain repeat
    assert [a.reasoning for a in answers] == [None, THOUGHT, THOUGHT, None]
