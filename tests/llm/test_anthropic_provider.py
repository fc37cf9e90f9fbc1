"""`AnthropicProvider`'s request building and response/error mapping, over a mock HTTP transport.

There is no network here, so this does not test Anthropic's API: it feeds the official SDK canned
HTTP responses (shaped like the documented Messages API) through `httpx2.MockTransport` and checks
what our code sends and what it makes of the answers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from stratagem.llm.errors import PermanentError, TransientError
from stratagem.llm.providers.anthropic import (
    CHOICE_TOOL,
    RESPOND_TOOL,
    SENDS_TEMPERATURE,
    AnthropicProvider,
    create,
)
from stratagem.llm.registry import ModelConfig
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall

KEY = "sk-ant-test-0123456789abcdef"
MOVES = ("cooperate", "defect")
LOOK = Tool(
    "look", "Look at the board", {"type": "object", "properties": {"n": {"type": "integer"}}}
)

Handler = Callable[[httpx2.Request], httpx2.Response]


def message_body(content: list[dict[str, Any]], **usage: int) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 11, "output_tokens": 5, **usage},
    }


class Recorder:
    """A mock transport handler: records request bodies, answers with the next canned reply."""

    def __init__(self, *replies: httpx2.Response | Exception) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[httpx2.Headers] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        self.headers.append(request.headers)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def provider_for(recorder: Recorder, **kwargs: Any) -> AnthropicProvider:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(recorder))
    return AnthropicProvider("anthropic/claude-test", api_key=KEY, http_client=client, **kwargs)


def ask(provider: AnthropicProvider, request: Request) -> Response:
    async def go() -> Response:
        try:
            return await provider.complete(request, 0)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def ok(content: list[dict[str, Any]], **usage: int) -> httpx2.Response:
    return httpx2.Response(200, json=message_body(content, **usage))


def test_messages_system_and_tool_results_are_mapped() -> None:
    recorder = Recorder(ok([{"type": "text", "text": "Hello there."}]))
    call = ToolCall("toolu_1", "look", {"n": 2})
    request = Request(
        (
            Message("system", "Rules."),
            Message("user", "Round 1."),
            Message("user", "Your move?"),
            Message("assistant", "Let me look.", (call,)),
            Message("tool", "board: empty", tool_call_id="toolu_1"),
            Message("system", "Be brief."),
        ),
        tools=(LOOK,),
        temperature=0.3,
        max_tokens=50,
        seed=4,
    )
    response = ask(provider_for(recorder), request)
    body = recorder.bodies[0]
    sent = recorder.headers[0]
    assert sent.get("x-api-key") == KEY or sent.get("authorization") == f"Bearer {KEY}"
    assert body["model"] == "claude-test" and body["max_tokens"] == 50
    mark = {"cache_control": {"type": "ephemeral"}}  # the prompt cache's breakpoints
    assert body["system"] == [{"type": "text", "text": "Rules.\n\nBe brief.", **mark}]
    assert body.get("temperature") == (0.3 if SENDS_TEMPERATURE else None)
    assert "seed" not in body
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Round 1."},
                {"type": "text", "text": "Your move?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "look", "input": {"n": 2}, **mark},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "board: empty",
                    **mark,
                }
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "look", "description": "Look at the board", "input_schema": LOOK.parameters}
    ]
    assert "tool_choice" not in body
    assert response.text == "Hello there."
    assert response.usage.input_tokens == 11 and response.usage.output_tokens == 5
    assert response.model == "anthropic/claude-test" and response.latency_s >= 0


def test_choice_is_a_forced_enum_tool() -> None:
    recorder = Recorder(
        ok([{"type": "tool_use", "id": "t1", "name": CHOICE_TOOL, "input": {"choice": "defect"}}])
    )
    request = Request((Message("user", "Your move?"),), choices=MOVES)
    response = ask(provider_for(recorder), request)
    body = recorder.bodies[0]
    assert body["tool_choice"] == {"type": "tool", "name": CHOICE_TOOL}
    [tool] = body["tools"]
    assert tool["input_schema"]["properties"]["choice"]["enum"] == list(MOVES)
    assert body["max_tokens"] == 1024
    assert response.text == "defect" and response.tool_calls == ()


def test_choice_with_other_tools_lets_the_model_call_them() -> None:
    recorder = Recorder(
        ok(
            [
                {"type": "thinking", "thinking": "I should look.", "signature": "sig"},
                {"type": "tool_use", "id": "t9", "name": "look", "input": {"n": 1}},
            ],
            cache_read_input_tokens=4,
        )
    )
    request = Request((Message("user", "Your move?"),), tools=(LOOK,), choices=MOVES)
    response = ask(provider_for(recorder), request)
    assert recorder.bodies[0]["tool_choice"] == {"type": "any"}
    assert [t["name"] for t in recorder.bodies[0]["tools"]] == ["look", CHOICE_TOOL]
    assert response.tool_calls == (ToolCall("t9", "look", {"n": 1}),)
    assert response.reasoning == "I should look."
    assert response.usage.input_tokens == 15


def test_json_schema_is_a_forced_respond_tool() -> None:
    schema = {"type": "object", "properties": {"offer": {"type": "integer"}}, "required": ["offer"]}
    recorder = Recorder(
        ok([{"type": "tool_use", "id": "t2", "name": RESPOND_TOOL, "input": {"offer": 40}}])
    )
    response = ask(
        provider_for(recorder), Request((Message("user", "Offer?"),), json_schema=schema)
    )
    assert recorder.bodies[0]["tool_choice"] == {"type": "tool", "name": RESPOND_TOOL}
    assert recorder.bodies[0]["tools"][0]["input_schema"] == schema
    assert json.loads(response.text) == {"offer": 40}


def test_with_thinking_choices_become_an_instruction_and_are_validated() -> None:
    recorder = Recorder(
        ok(
            [
                {"type": "thinking", "thinking": "Defecting dominates.", "signature": "s"},
                {"type": "text", "text": "Defect."},
            ]
        )
    )
    thinking = {"type": "enabled", "budget_tokens": 1024}
    request = Request((Message("user", "Your move?"),), choices=MOVES, temperature=0.2)
    response = ask(provider_for(recorder, thinking=thinking, max_tokens=2048), request)
    body = recorder.bodies[0]
    assert body["thinking"] == thinking and "temperature" not in body
    assert "tool_choice" not in body and "tools" not in body
    assert "exactly one of: cooperate, defect" in body["system"][0]["text"]
    assert response.text == "defect" and response.reasoning == "Defecting dominates."


def test_reserved_tool_names_are_refused() -> None:
    bad = Request((Message("user", "x"),), tools=(Tool(CHOICE_TOOL, "mine"),))
    with pytest.raises(PermanentError, match="reserved"):
        provider_for(Recorder()).build_params(bad)


def error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    body = {"type": "error", "error": {"type": "some_error", "message": message}}
    return httpx2.Response(status, json=body, headers=headers)


@pytest.mark.parametrize(
    ("reply", "retry_after"),
    [
        (error(429, "rate limited", {"retry-after": "3"}), 3.0),
        (error(500, "internal"), None),
        (error(529, "overloaded"), None),
        (error(503, "unavailable", {"retry-after-ms": "250"}), 0.25),
        (
            httpx2.Response(
                200,
                content=b'{"id": "msg_1", "content": [',
                headers={"content-type": "application/json"},
            ),
            None,
        ),
        (httpx2.ReadTimeout("slow"), None),
        (httpx2.ConnectError("refused"), None),
    ],
    ids=["429", "500", "529", "503", "malformed", "timeout", "connection"],
)
def test_transient_failures(reply: httpx2.Response | Exception, retry_after: float | None) -> None:
    with pytest.raises(TransientError) as caught:
        ask(provider_for(Recorder(reply)), Request((Message("user", "hi"),)))
    assert caught.value.retry_after == retry_after


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_permanent_and_never_show_the_key(status: int) -> None:
    reply = error(status, f"invalid x-api-key {KEY}")
    with pytest.raises(PermanentError) as caught:
        ask(provider_for(Recorder(reply)), Request((Message("user", "hi"),)))
    assert f"HTTP {status}" in str(caught.value)
    assert KEY not in str(caught.value) and "0123456789abcdef" not in str(caught.value)


def test_create_reads_the_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(PermanentError, match="ANTHROPIC_API_KEY is not set"):
        create(ModelConfig(model="anthropic/claude-x"))
    monkeypatch.setenv("TEAM_KEY", KEY)
    provider = create(
        ModelConfig(model="anthropic/claude-x", api_key_env="TEAM_KEY", params={"max_tokens": 9})
    )
    assert provider.api_model == "claude-x" and provider.max_tokens == 9
    with pytest.raises(PermanentError, match="unknown params seed"):
        create(ModelConfig(model="anthropic/claude-x", api_key_env="TEAM_KEY", params={"seed": 1}))
