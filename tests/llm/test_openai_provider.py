"""`OpenAIProvider` against real servers on 127.0.0.1.

- llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`) serving the embedded
  Gemma GGUF: real requests, real structured output, real token counts.
- A fake server answering 429, 500, slow, malformed and valid responses in a fixed pattern: each
  fault must become a `TransientError`, and the full pipeline must retry exactly once per fault.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from support.fake_openai import FAULTS, FakeOpenAIServer, completion_body
from support.llama_server import free_port
from support.llama_server import llama_server as start_llama_server

from stratagem.llm.errors import PermanentError, TransientError
from stratagem.llm.pipeline import ModelClient
from stratagem.llm.pricing import Prices
from stratagem.llm.providers.openai import OpenAIProvider, create
from stratagem.llm.registry import ModelConfig, create_provider
from stratagem.llm.retry import RetryPolicy
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall

SYSTEM = Message("system", "You are playing a repeated prisoner's dilemma.")
MOVES = ("cooperate", "defect")
KEY = "sk-test-abcdefghijklmnop"


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's server on a free port; always stopped, even when a test fails."""
    with start_llama_server(tmp_path_factory.mktemp("llama-server") / "server.log") as url:
        yield url


def ask(provider: OpenAIProvider, request: Request, sample: int = 0) -> Response:
    async def go() -> Response:
        try:
            return await provider.complete(request, sample)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def local_server_provider(base_url: str, **params: object) -> OpenAIProvider:
    config = ModelConfig(
        model="openai/gemma-3-270m",
        base_url=base_url,
        params={"structured": "json_object", **params},
    )
    provider = create(config)
    assert isinstance(provider, OpenAIProvider)
    return provider


# --- the real server ---------------------------------------------------------------------------


def test_constrained_choice_through_a_json_schema(llama_server: str) -> None:
    request = Request(
        (SYSTEM, Message("user", "Round 1. Your move?")),
        choices=MOVES,
        seed=1,
        max_tokens=20,
        temperature=0.7,
    )
    for sample in range(2):
        response = ask(local_server_provider(llama_server), request, sample)
        assert response.text in MOVES
        assert response.usage.input_tokens > 5 and response.usage.output_tokens > 0
        assert response.latency_s > 0 and response.model == "openai/gemma-3-270m"


def test_request_json_schema_is_honoured(llama_server: str) -> None:
    schema = {
        "type": "object",
        "properties": {"move": {"enum": ["C", "D"]}},
        "required": ["move"],
    }
    request = Request(
        (SYSTEM, Message("user", "Your move as JSON?")), json_schema=schema, seed=2, max_tokens=20
    )
    value = json.loads(ask(local_server_provider(llama_server), request).text)
    assert value["move"] in ("C", "D")


def test_plain_chat_counts_usage_and_replays_with_a_seed(llama_server: str) -> None:
    """The same seeded request twice. The texts are not compared: the server's second request
    reuses its KV cache, and llama.cpp's logits change in the last digits (enough to flip a
    token, even greedily) when a prompt is evaluated in other batches
    (tests/llm/test_local_decoding.py)."""
    request = Request((SYSTEM, Message("user", "Say hello.")), seed=5, max_tokens=8,
                      temperature=0.0)  # fmt: skip
    first = ask(local_server_provider(llama_server), request)
    again = ask(local_server_provider(llama_server), request)
    assert isinstance(first.text, str) and isinstance(again.text, str)
    assert first.usage.input_tokens > 5 and 0 < first.usage.output_tokens <= 8
    assert first.tool_calls == () and first.reasoning is None


def test_registry_serves_a_keyless_local_server(
    llama_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = create_provider(
        ModelConfig(model="openai/gemma", base_url=llama_server, params={"structured": "none"})
    )
    assert isinstance(provider, OpenAIProvider)
    request = Request((SYSTEM, Message("user", "Your move?")), max_tokens=4, seed=1)
    assert ask(provider, request).usage.output_tokens > 0


# --- configuration -----------------------------------------------------------------------------


def test_missing_key_and_bad_params_are_user_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(PermanentError, match="OPENAI_API_KEY is not set"):
        create(ModelConfig(model="openai/gpt-4o-mini"))
    with pytest.raises(PermanentError, match="MY_KEY is not set"):
        create(ModelConfig(model="openai/x", base_url="http://h/v1", api_key_env="MY_KEY"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(PermanentError, match="unknown params top_q"):
        create(ModelConfig(model="openai/gpt-4o-mini", params={"top_q": 1}))
    with pytest.raises(PermanentError, match="structured"):
        create(ModelConfig(model="openai/gpt-4o-mini", params={"structured": "grammar"}))


def test_request_building() -> None:
    provider = OpenAIProvider(
        "openai/gpt-4o-mini", api_key=KEY, max_tokens_field="max_completion_tokens"
    )
    call = ToolCall("c1", "look", {"n": 1})
    request = Request(
        (
            SYSTEM,
            Message("user", "hi"),
            Message("assistant", "", (call,)),
            Message("tool", "ok", tool_call_id="c1"),
        ),
        tools=(Tool("look", "Look around", {"type": "object", "properties": {}}),),
        choices=MOVES,
        temperature=0.5,
        max_tokens=9,
        seed=10,
    )
    params = provider.build_params(request, sample=3)
    assert params["model"] == "gpt-4o-mini"
    assert params["seed"] == 13 and params["max_completion_tokens"] == 9
    assert params["messages"][2]["tool_calls"][0]["function"] == {
        "name": "look",
        "arguments": '{"n": 1}',
    }
    assert params["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    assert params["tools"][0]["function"]["name"] == "look"
    schema = params["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["choice"]["enum"] == list(MOVES)
    assert "response_format" not in OpenAIProvider(
        "openai/m", api_key=KEY, structured="none"
    ).build_params(request, 0)
    assert "stop" not in params


def test_stop_strings_are_sent_and_keyed_only_when_set() -> None:
    """seed-004 §2 stops at <EOS>; requests without stop strings keep their old cache keys."""
    provider = OpenAIProvider("openai/m", api_key=KEY)
    plain = Request((SYSTEM, Message("user", "hi")))
    stopped = Request((SYSTEM, Message("user", "hi")), stop=("<EOS>",))
    assert provider.build_params(stopped, 0)["stop"] == ["<EOS>"]
    assert "stop" not in plain.to_json() and stopped.to_json()["stop"] == ("<EOS>",)


# --- fault injection ---------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
def test_each_fault_is_transient_then_the_answer_comes(transport: str) -> None:
    with FakeOpenAIServer(slow_s=1.5) as server:
        provider = OpenAIProvider(
            "openai/fake", api_key=KEY, base_url=server.base_url, timeout_s=0.5,
            transport=transport,
        )  # fmt: skip
        request = Request((SYSTEM, Message("user", "Your move?")), choices=MOVES, seed=1)

        async def go() -> tuple[list[TransientError], Response]:
            errors = []
            try:
                for _ in FAULTS[:-1]:
                    with pytest.raises(TransientError) as caught:
                        await provider.complete(request, 0)
                    errors.append(caught.value)
                return errors, await provider.complete(request, 0)
            finally:
                await provider.aclose()

        errors, response = asyncio.run(go())
        assert server.served == list(FAULTS)
    rate_limited, server_error, slow, malformed = errors
    assert "429" in str(rate_limited) and rate_limited.retry_after == 0.0
    assert "500" in str(server_error)
    assert "timed out" in str(slow)
    assert "malformed" in str(malformed)
    assert response.text == "cooperate"
    assert response.usage.input_tokens == 7 and response.usage.output_tokens == 3


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
@pytest.mark.parametrize("status", ["400", "401", "404"])
def test_client_errors_are_permanent_and_never_show_the_key(status: str, transport: str) -> None:
    with FakeOpenAIServer([status]) as server:
        provider = OpenAIProvider(
            "openai/fake", api_key=KEY, base_url=server.base_url, transport=transport
        )
        with pytest.raises(PermanentError) as caught:
            ask(provider, Request((Message("user", "hi"),)))
    assert status in str(caught.value)
    assert status != "401" or "unauthorised" in str(caught.value)
    assert KEY not in str(caught.value) and "abcdefghijklmnop" not in str(caught.value)


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
def test_connection_refused_is_transient(transport: str) -> None:
    provider = OpenAIProvider(
        "openai/none", api_key=KEY, base_url=f"http://127.0.0.1:{free_port()}/v1", timeout_s=2,
        transport=transport,
    )  # fmt: skip
    with pytest.raises(TransientError, match="connection error"):
        ask(provider, Request((Message("user", "hi"),)))


def test_pipeline_retries_exactly_once_per_fault() -> None:
    sleeps: list[float] = []

    async def no_wait(seconds: float) -> None:
        sleeps.append(seconds)

    with FakeOpenAIServer(slow_s=1.5) as server:
        provider = OpenAIProvider(
            "openai/fake", api_key=KEY, base_url=server.base_url, timeout_s=0.5
        )
        client = ModelClient(
            provider,
            cache=None,
            limiter=None,
            limits=None,
            retry=RetryPolicy(max_attempts=6, base_delay=0.0, jitter=False),
            prices=Prices(),
            budget=None,
            sleep=no_wait,
        )
        request = Request((SYSTEM, Message("user", "Your move?")), choices=MOVES, seed=1)

        async def go() -> list[Response]:
            try:
                return await client.generate(request)
            finally:
                await client.aclose()

        [response] = asyncio.run(go())
        assert server.served == list(FAULTS)
    assert response.text == "cooperate"
    assert client.stats.retries == len(FAULTS) - 1 == 4
    assert client.stats.provider_calls == len(FAULTS)
    assert len(sleeps) == 4


def test_tool_calls_reasoning_and_malformed_completions_are_parsed() -> None:
    provider = OpenAIProvider("openai/m", api_key=KEY)
    body = completion_body("m", "")
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "Defection dominates.",
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "look", "arguments": '{"n": 2}'}},
            {"id": "b", "type": "function", "function": {"name": "look", "arguments": "{oops"}},
        ],
    }
    request = Request((Message("user", "hi"),), choices=MOVES)
    response = provider.parse_completion(body, request, 0.1)
    assert response.tool_calls == (
        ToolCall("a", "look", {"n": 2}),
        ToolCall("b", "look", {"_raw": "{oops"}),
    )
    assert response.text == "" and response.reasoning == "Defection dominates."
    with pytest.raises(TransientError, match="malformed"):
        provider.parse_completion("<html>oops</html>", request, 0.1)
    with pytest.raises(TransientError, match="malformed"):
        provider.parse_completion({**body, "choices": []}, request, 0.1)
    with pytest.raises(TransientError, match="malformed"):
        provider.parse_completion({**body, "choices": [{"message": {"content": 3}}]}, request, 0.1)


def test_the_aiohttp_transport_serves_one_provider_across_event_loops() -> None:
    """A session belongs to one loop: a provider used by two `asyncio.run`s opens a second."""
    with FakeOpenAIServer(["ok", "ok"]) as server:
        provider = OpenAIProvider("openai/fake", api_key=KEY, base_url=server.base_url)
        request = Request((SYSTEM, Message("user", "Your move?")), choices=MOVES)
        first = asyncio.run(provider.complete(request, 0))
        second = ask(provider, request)
        assert server.served == ["ok", "ok"]
    assert first.text == second.text == "cooperate"
    with pytest.raises(PermanentError, match=r"params\.transport"):
        OpenAIProvider("openai/fake", api_key=KEY, transport="carrier-pigeon")
