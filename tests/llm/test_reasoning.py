"""Issue 11 item 7: thinking budgets and reasoning models, per provider.

Checked against what the fake servers on 127.0.0.1 record: Anthropic's thinking budget (seed-003
§6: 60% of max_tokens) and OpenAI's reasoning effort reach the request body; reasoning text from
OpenAI-compatible servers is kept apart from the answer; thinking tokens are counted in tokens and
cost; a setting a provider does not honour is a one-line error, never silently dropped.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from openai.types.chat import ChatCompletion
from support.fake_anthropic import INPUT_TOKENS, OUTPUT_TOKENS, FakeAnthropicServer
from support.fake_openai import COMPLETION_TOKENS, PROMPT_TOKENS, FakeOpenAIServer, completion_body

from stratagem.errors import StratagemError
from stratagem.llm.errors import PermanentError
from stratagem.llm.pipeline import ModelClient, build_client
from stratagem.llm.pricing import Price
from stratagem.llm.providers.openai import OpenAIProvider, split_thinking
from stratagem.llm.reasoning import ThinkingBudget, check_settings, thinking_budget
from stratagem.llm.registry import ModelConfig
from stratagem.llm.types import Message, Request, Response

KEY_ENV = "STRATAGEM_REASONING_TEST_KEY"
KEY = "sk-reasoning-test-0123456789abcdef"
MOVES = ("cooperate", "defect")
THOUGHT = "If they cooperate, defecting pays 6. But [move] defect would end trust."


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def config(model: str, base_url: str | None = None, **params: Any) -> ModelConfig:
    return ModelConfig(
        model=model,
        base_url=base_url,
        api_key_env=KEY_ENV,
        params=params,
        prices=Price(3.0, 15.0),
    )


def generate(client: ModelClient, request: Request) -> Response:
    async def go() -> Response:
        try:
            return (await client.generate(request))[0]
        finally:
            await client.aclose()

    return asyncio.run(go())


def move_request(max_tokens: int | None = 4096, **kw: Any) -> Request:
    return Request((Message("user", "Your move?"),), max_tokens=max_tokens, **kw)


# --- Anthropic: extended thinking --------------------------------------------------------------


def test_a_thinking_budget_of_60_percent_reaches_anthropic_and_is_counted() -> None:
    with FakeAnthropicServer(reply="cooperate", thinking=THOUGHT, thinking_tokens=40) as server:
        client = build_client(config("anthropic/claude-test", server.base_url, **{
            "thinking_budget": "60%"}))  # fmt: skip
        response = generate(client, move_request(choices=MOVES, temperature=1.0))
        (body,) = server.requests
    # seed-003 §6: budget_tokens = max_tokens // 5 * 3 = 2457 for 4096.
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2457}
    assert body["max_tokens"] == 4096 and "tool_choice" not in body
    assert response.text == "cooperate" and response.reasoning == THOUGHT
    assert response.usage.output_tokens == OUTPUT_TOKENS + 40  # thinking is billed as output
    assert response.usage.total == INPUT_TOKENS + OUTPUT_TOKENS + 40
    assert response.cost_usd == pytest.approx((INPUT_TOKENS * 3 + (OUTPUT_TOKENS + 40) * 15) / 1e6)


def test_a_fixed_thinking_budget_and_none() -> None:
    with FakeAnthropicServer() as server:
        thinking = build_client(config("anthropic/claude-test", server.base_url, **{
            "thinking_budget": 2048}))  # fmt: skip
        generate(thinking, move_request(max_tokens=3000))
        plain = build_client(config("anthropic/claude-test", server.base_url))
        response = generate(plain, move_request(choices=MOVES))
        fixed, none = server.requests
    assert fixed["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "thinking" not in none and none["tool_choice"]["type"] == "tool"
    assert response.reasoning is None and response.usage.output_tokens == OUTPUT_TOKENS


def test_a_budget_the_api_would_refuse_is_refused_before_sending() -> None:
    with FakeAnthropicServer() as server:
        client = build_client(config("anthropic/claude-test", server.base_url, **{
            "thinking_budget": "60%"}))  # fmt: skip
        with pytest.raises(PermanentError, match="at least 1024 and below max_tokens"):
            generate(client, move_request(max_tokens=1024))  # 60% is 614 tokens
        assert server.requests == []


@pytest.mark.parametrize("value", [512, 0, True, "100%", "0%", "lots", 2.5, None, [1024]])
def test_malformed_thinking_budgets_are_one_line_errors(value: Any) -> None:
    with pytest.raises(PermanentError, match="thinking_budget must be") as caught:
        build_client(config("anthropic/claude-test", "http://127.0.0.1:9", thinking_budget=value))
    assert "\n" not in str(caught.value)


def test_thinking_budget_values() -> None:
    assert thinking_budget("m", "60%") == ThinkingBudget(percent=60.0)
    assert thinking_budget("m", 2457) == ThinkingBudget(tokens=2457)
    assert ThinkingBudget(percent=60.0).resolve("m", 4096) == 4096 // 5 * 3
    assert ThinkingBudget(percent=60.0).resolve("m", 10240) == 10240 // 5 * 3


def test_thinking_and_thinking_budget_together_are_refused() -> None:
    with pytest.raises(PermanentError, match="not both"):
        build_client(
            config(
                "anthropic/claude-test",
                "http://127.0.0.1:9",
                thinking_budget=2048,
                thinking={"type": "enabled", "budget_tokens": 2048},
            )
        )


# --- Settings a provider does not honour -------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "params", "words"),
    [
        ("openai/gpt-4o", {"thinking_budget": 2048}, "params.thinking_budget is not supported by "
         "the openai provider (only by anthropic, bedrock)"),
        ("anthropic/claude-test", {"reasoning_effort": "high"}, "params.reasoning_effort is not "
         "supported by the anthropic provider (only by openai)"),
        ("local/gemma-3-270m", {"thinking_budget": "60%"}, "not supported by the local provider"),
        ("scripted/echo", {"reasoning_effort": "low"}, "not supported by the scripted provider"),
        ("openai/o3", {"reasoning_effort": "extreme"}, "reasoning_effort must be one of none, "
         "minimal, low, medium, high"),
    ],
)  # fmt: skip
def test_an_unsupported_setting_is_an_error_not_ignored(
    model: str, params: dict[str, Any], words: str
) -> None:
    with pytest.raises(StratagemError) as caught:
        build_client(config(model, "http://127.0.0.1:9", **params))
    message = str(caught.value)
    assert words in message and message.startswith(model) and "\n" not in message
    with pytest.raises(PermanentError):
        check_settings(model, params)


# --- OpenAI and OpenAI-compatible servers ------------------------------------------------------


def test_reasoning_effort_is_sent_and_reasoning_tokens_are_counted() -> None:
    with FakeOpenAIServer([], reasoning=THOUGHT, reasoning_tokens=120) as server:
        client = build_client(config("openai/o4-mini", server.base_url, reasoning_effort="high"))
        response = generate(client, move_request(choices=MOVES))
        (body,) = server.requests
    assert body["reasoning_effort"] == "high"
    assert body["max_tokens"] == 4096  # a base_url server keeps the usual field
    assert response.text == "cooperate" and response.reasoning == THOUGHT
    assert response.usage.output_tokens == COMPLETION_TOKENS + 120
    assert response.usage.reasoning_tokens == 120
    assert response.cost_usd == pytest.approx(
        (PROMPT_TOKENS * 3 + (COMPLETION_TOKENS + 120) * 15) / 1e6
    )


def test_openai_reasoning_models_get_max_completion_tokens() -> None:
    provider = OpenAIProvider("openai/o3", api_key=KEY, reasoning_effort="low")
    params = provider.build_params(move_request(), 0)
    assert params["reasoning_effort"] == "low" and params["max_completion_tokens"] == 4096
    assert "max_tokens" not in params
    plain = OpenAIProvider("openai/gpt-4o", api_key=KEY).build_params(move_request(), 0)
    assert "reasoning_effort" not in plain and plain["max_tokens"] == 4096


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "inline"])
def test_reasoning_text_is_kept_apart_from_the_answer(field: str) -> None:
    reply = "[move] (trust) cooperate"
    with FakeOpenAIServer([], reply=reply, reasoning=THOUGHT, reasoning_field=field) as server:
        client = build_client(config("openai/deepseek-r1", server.base_url))
        response = generate(client, move_request())
    assert response.text == reply  # the [move] tag inside the thinking never reaches the parser
    assert response.reasoning == THOUGHT


@pytest.mark.parametrize(
    ("content", "thinking", "answer"),
    [
        ("<think>\nhmm\n</think>\n\nfinal", "hmm", "final"),
        ("hmm, the template opened it\n</think>final", "hmm, the template opened it", "final"),
        ("<think>cut off by max_tokens", "cut off by max_tokens", ""),
        ("no thinking here", None, "no thinking here"),
        ("I <think> so </think>", None, "I <think> so </think>"),
        ("<think></think>answer", None, "answer"),
    ],
)
def test_split_thinking(content: str, thinking: str | None, answer: str) -> None:
    assert split_thinking(content) == (thinking, answer)


def test_usage_without_details_has_no_reasoning_tokens() -> None:
    provider = OpenAIProvider("openai/m", api_key=KEY)
    completion = ChatCompletion.model_validate(completion_body("m", "cooperate"))
    response = provider.parse_completion(completion, move_request(), 0.1)
    assert response.usage.reasoning_tokens == 0 and response.reasoning is None
