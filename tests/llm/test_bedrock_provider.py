"""Issue 24 item 20: `bedrock/<model id>`, seed-003's models as the authors reached them (spec §3.3,
§3.6, §6), through the real AWS SDK client against a fake Converse endpoint on 127.0.0.1
(`tests/support/fake_bedrock.py`): the request as the study sent it, Claude's thinking and
DeepSeek-R1's reasoningContent, throttling retried, access denied stopping in one line, usage with
Bedrock's prompt-cache fields, and no credential in any stored or printed byte."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.fake_bedrock import INPUT_TOKENS, OUTPUT_TOKENS, FakeBedrockServer

from stratagem.errors import StratagemError
from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.llm.errors import CallFailed, ModelRefused, PermanentError, TransientError
from stratagem.llm.pipeline import ModelClient, build_client
from stratagem.llm.providers.bedrock import BedrockProvider
from stratagem.llm.registry import ModelConfig, check_model, create_provider
from stratagem.llm.retry import RetryPolicy
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall

ACCESS_KEY = "AKIAFAKEBEDROCK12345"
SECRET_KEY = "fake/Secret+Key0123456789abcdefghijklmnop"
SESSION_TOKEN = "FwoGZXIvYXdzEFAKEsessionTOKEN0123456789abcdef"
CREDENTIALS = (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN)
CLAUDE = "bedrock/us.anthropic.claude-3-7-sonnet-20250219-v1:0"  # seed-003 §6's ids
R1 = "bedrock/us.deepseek.r1-v1:0"
LLAMA = "bedrock/us.meta.llama3-3-70b-instruct-v1:0"
REPLY = "[move] (trust pays) cooperation"
THOUGHT = "They opened with cooperation. [move] defection would pay now, not later."
NO_RETRY_DELAY = RetryPolicy(base_delay=0, max_delay=0, jitter=False)


@pytest.fixture(autouse=True)
def aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake credentials and region from the environment (the standard AWS chain); no profile
    files and no instance metadata, so nothing from this machine is read."""
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_BEARER_TOKEN_BEDROCK", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))


def config(model: str, server: FakeBedrockServer, **params: Any) -> ModelConfig:
    return ModelConfig(model=model, params={"endpoint_url": server.endpoint_url, **params})


def ask(provider: BedrockProvider, request: Request) -> Response:
    async def go() -> Response:
        try:
            return await provider.complete(request, 0)
        finally:
            await provider.aclose()

    return asyncio.run(go())


async def generate(client: ModelClient, *requests: Request) -> list[Response]:
    try:
        return [(await client.generate(r))[0] for r in requests]
    finally:
        await client.aclose()


def bedrock(model_config: ModelConfig) -> BedrockProvider:
    provider = create_provider(model_config)
    assert isinstance(provider, BedrockProvider)
    return provider


def test_the_request_is_the_one_the_study_sent() -> None:
    """§3.3/§6: `system=[{"text": ...}]`, the chat as content blocks, temperature 1.0 and
    maxTokens 4096 (the model entry's default when the agent gives none), the model id in the
    path; no seed (Converse has none), no thinking for a model entry without one."""
    request = Request(
        (
            Message("system", "You are playing a game."),
            Message("user", "[hint] Let's play this game. Please choose your move.\n"),
            Message("assistant", "[move] cooperation"),
            Message("user", "[hint] Move made."),
            Message("user", "Let's play another round."),
        ),
        temperature=1.0,
        seed=3,
    )
    with FakeBedrockServer(reply=REPLY) as server:
        response = ask(bedrock(config(LLAMA, server)), request)
        (sent,) = server.requests
    assert sent.model_id == "us.meta.llama3-3-70b-instruct-v1:0"
    assert sent.body == {
        "system": [{"text": "You are playing a game."}],
        "messages": [
            {"role": "user", "content": [{"text": request.messages[1].content}]},
            {"role": "assistant", "content": [{"text": "[move] cooperation"}]},
            {
                "role": "user",
                "content": [{"text": "[hint] Move made."}, {"text": "Let's play another round."}],
            },
        ],
        "inferenceConfig": {"maxTokens": 4096, "temperature": 1.0},
    }
    assert sent.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/")
    assert response.text == REPLY and response.reasoning is None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (
        INPUT_TOKENS,
        OUTPUT_TOKENS,
    )


def test_tools_choices_and_max_tokens_map_to_converse() -> None:
    look = Tool("look", "Look at the board", {"type": "object", "properties": {}})
    call = ToolCall("tooluse_1", "look", {"n": 2})
    request = Request(
        (
            Message("user", "Your move?"),
            Message("assistant", "", (call,)),
            Message("tool", "board: empty", tool_call_id="tooluse_1"),
        ),
        tools=(look,),
        choices=("cooperation", "defection"),
        stop=("<EOS>",),
    )
    with FakeBedrockServer(reply=" Defection. ") as server:
        response = ask(bedrock(config(LLAMA, server, max_tokens=512)), request)
        (sent,) = server.requests
    assert sent.body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "look", "input": {"n": 2}}}],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "board: empty"}]}}
            ],
        },
    ]
    assert sent.body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "look",
                    "description": "Look at the board",
                    "inputSchema": {"json": look.parameters},
                }
            }
        ]
    }
    assert sent.body["system"] == [
        {"text": "Reply with exactly one of: cooperation, defection, and nothing else."}
    ]
    assert sent.body["inferenceConfig"] == {"maxTokens": 512, "stopSequences": ["<EOS>"]}
    assert response.text == "defection"  # the label the reply names


def test_claude_thinks_at_the_studys_budget_and_the_thinking_is_kept_apart() -> None:
    """§6: the (T) variants send thinking at 60% of max_tokens (2,457 of 4,096) through
    additionalModelRequestFields; the thinking comes back as the call's reasoning, never as its
    text, and its tokens are output tokens. A temperature other than 1 is not sent with it."""
    with FakeBedrockServer(reply=REPLY, reasoning=THOUGHT, reasoning_tokens=30) as server:
        provider = bedrock(config(CLAUDE, server, thinking_budget="60%"))
        response = ask(provider, Request((Message("user", "Move?"),), temperature=1.0))
        provider = bedrock(config(CLAUDE, server, thinking_budget="60%"))
        ask(provider, Request((Message("user", "Move?"),), temperature=0.7, max_tokens=2048))
        first, second = server.requests
    assert first.body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 2457}
    }
    assert first.body["inferenceConfig"] == {"maxTokens": 4096, "temperature": 1.0}
    assert second.body["additionalModelRequestFields"]["thinking"]["budget_tokens"] == 1228
    assert second.body["inferenceConfig"] == {"maxTokens": 2048}
    assert response.text == REPLY and response.reasoning == THOUGHT
    assert response.usage.output_tokens == OUTPUT_TOKENS + 30


@pytest.mark.parametrize("model", [LLAMA, R1, "bedrock/anthropic.claude-3-5-sonnet-20241022-v2:0"])
def test_a_thinking_budget_is_refused_for_a_model_without_thinking(
    model: str, tmp_path: Path
) -> None:
    with pytest.raises(PermanentError, match="not supported by this model") as info:
        create_provider(ModelConfig(model=model, params={"thinking_budget": "60%"}))
    assert "\n" not in str(info.value)
    path = write_run(tmp_path, "http://127.0.0.1:9")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["models"] = [{"model": model, "params": {"thinking_budget": "60%"}}]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(StratagemError, match=r"params\.thinking_budget is not supported by this"):
        load_config(path)  # when the file loads, so --dry-run says so too


def test_a_throttled_call_is_retried_and_counted_once() -> None:
    """HTTP 429 ThrottlingException, then a reply: retried by the pipeline (the SDK's own retries
    are off), paid once."""
    with FakeBedrockServer(errors=[(429, "ThrottlingException")], reply=REPLY) as server:
        client = build_client(config(LLAMA, server), retry=NO_RETRY_DELAY)
        (response,) = asyncio.run(generate(client, Request((Message("user", "Move?"),))))
        served = len(server.requests)
    assert response.text == REPLY
    assert served == 2 and client.stats.retries == 1 and client.stats.failures == 0


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (503, "ServiceUnavailableException"),
        (429, "ModelNotReadyException"),
        (408, "ModelTimeoutException"),
        (500, "InternalServerException"),
    ],
)
def test_transient_failures_are_retried(status: int, code: str) -> None:
    with FakeBedrockServer(error=(status, code)) as server:
        client = build_client(config(LLAMA, server), retry=NO_RETRY_DELAY)
        with pytest.raises(CallFailed, match=code) as info:
            asyncio.run(generate(client, Request((Message("user", "Move?"),))))
        served = len(server.requests)
    assert served == NO_RETRY_DELAY.max_attempts and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("status", "code", "hint"),
    [
        (403, "AccessDeniedException", "enable it in the Bedrock console"),
        (400, "ValidationException", ""),
        (404, "ResourceNotFoundException", "check the model id and params.region"),
    ],
)
def test_a_refusal_stops_the_model_in_one_line(status: int, code: str, hint: str) -> None:
    """Access denied, a validation error or an unknown model: not retried, one line naming the
    model, and no later call is sent."""
    move = Request((Message("user", "Move?"),))
    with FakeBedrockServer(error=(status, code)) as server:
        client = build_client(config(LLAMA, server), retry=NO_RETRY_DELAY)
        with pytest.raises(ModelRefused) as first:
            asyncio.run(generate(client, move, move))
        served = len(server.requests)
    text = str(first.value)
    assert served == 1
    assert text.startswith(f"{LLAMA}: {code} (HTTP {status}): fake {code} for ")
    assert hint in text and "\n" not in text
    assert not any(secret in text for secret in CREDENTIALS)


def test_usage_maps_the_prompt_cache_fields_and_prices_them() -> None:
    """Bedrock's inputTokens leaves out cache reads and writes: the call's input is all three,
    the reads and writes kept apart and billed at Claude's cache rates on Bedrock."""
    with FakeBedrockServer(cache_read=100, cache_write=20) as server:
        client = build_client(config(CLAUDE, server), retry=NO_RETRY_DELAY)
        (response,) = asyncio.run(generate(client, Request((Message("user", "Move?"),))))
    usage = response.usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens) == (
        INPUT_TOKENS + 120,
        100,
        20,
    )
    assert usage.total == INPUT_TOKENS + 120 + OUTPUT_TOKENS
    expected = (INPUT_TOKENS * 3.0 + 100 * 0.3 + 20 * 3.75 + OUTPUT_TOKENS * 15.0) / 1e6
    assert response.cost_usd == pytest.approx(expected)


def test_calls_run_off_the_event_loop() -> None:
    """The SDK client blocks; while a call waits for its reply the loop keeps running."""
    gate = threading.Event()

    async def go(provider: BedrockProvider, server: FakeBedrockServer) -> tuple[bool, Response]:
        call = asyncio.create_task(provider.complete(Request((Message("user", "Move?"),)), 0))
        for _ in range(2000):  # the loop turns while the request is in flight
            if server.requests:
                break
            await asyncio.sleep(0.005)
        seen = bool(server.requests) and not call.done()
        gate.set()
        try:
            return seen, await call
        finally:
            await provider.aclose()

    with FakeBedrockServer(reply=REPLY, gate=gate) as server:
        seen, response = asyncio.run(go(bedrock(config(LLAMA, server)), server))
    assert seen and response.text == REPLY


def test_a_reply_slower_than_the_timeout_is_a_transient_error() -> None:
    """The model entry's timeout_s is the SDK's read timeout; a call past it is worth a retry."""
    gate = threading.Event()  # the reply waits until the test is done with it
    with FakeBedrockServer(gate=gate) as server:
        slow = ModelConfig(model=LLAMA, timeout_s=0.5, params={"endpoint_url": server.endpoint_url})
        try:
            with pytest.raises(TransientError, match="request timed out"):
                ask(bedrock(slow), Request((Message("user", "Move?"),)))
        finally:
            gate.set()


def test_credentials_come_from_the_chain_and_are_masked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """From a profile as from the environment: the values it signs with are what the pipeline
    masks (a profile's keys are in no environment variable for the error scrubber to find)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    profile = tmp_path / "credentials"
    profile.write_text(
        "[study]\naws_access_key_id = AKIAPROFILEKEY000001\n"
        "aws_secret_access_key = profileSecretValue0123456789\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(profile))
    monkeypatch.setenv("AWS_PROFILE", "study")
    with FakeBedrockServer(echo_credentials=True) as server:
        client = build_client(config(LLAMA, server))
        (response,) = asyncio.run(generate(client, Request((Message("user", "Move?"),))))
    assert set(client.provider.secrets()) == {  # type: ignore[attr-defined]
        "AKIAPROFILEKEY000001",
        "profileSecretValue0123456789",
    }
    assert "AKIAPROFILEKEY000001" not in response.text and "[redacted]" in response.text


def test_missing_credentials_region_or_a_key_variable_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeBedrockServer() as server:
        with pytest.raises(PermanentError, match="api_key_env does not apply to Bedrock"):
            create_provider(
                ModelConfig(model=LLAMA, api_key_env="AWS_SECRET_ACCESS_KEY", base_url="http://x")
            )
        with pytest.raises(PermanentError, match="unknown params top_k"):
            create_provider(config(LLAMA, server, top_k=5))
        monkeypatch.delenv("AWS_DEFAULT_REGION")
        with pytest.raises(PermanentError, match=r"no AWS region: give params\.region"):
            create_provider(config(LLAMA, server))
        assert create_provider(config(LLAMA, server, region="us-west-2")).model == LLAMA
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            monkeypatch.delenv(name)
        with pytest.raises(PermanentError, match="no AWS credentials found") as info:
            create_provider(config(LLAMA, server, region="us-west-2"))
    assert "\n" not in str(info.value)


def test_without_the_sdk_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """boto3 is an optional extra: a file naming a Bedrock model says how to install it."""
    monkeypatch.delitem(sys.modules, "stratagem.llm.providers.bedrock", raising=False)
    monkeypatch.setitem(sys.modules, "boto3", None)  # as if not installed
    with pytest.raises(StratagemError, match=r"install it with pip install 'stratagem\[bedrock\]'"):
        check_model(LLAMA)


def write_run(tmp_path: Path, endpoint: str) -> Path:
    """A tiny seed-003 experiment: the zero-shot agent against the study's TFT for 2 rounds of
    PD, on Claude 3.7 with thinking and on DeepSeek-R1, both through Bedrock."""
    data: dict[str, Any] = {
        "name": "bedrock",
        "output": str(tmp_path / "out"),
        "models": [
            {
                "id": "claude-thinking",
                "model": CLAUDE,
                "params": {"endpoint_url": endpoint, "thinking_budget": "60%"},
            },
            {"id": "deepseek-r1", "model": R1, "params": {"endpoint_url": endpoint}},
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
        "rounds": [2],
        "concurrency": 1,
        "retry": {"base_delay": 0, "max_delay": 0},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_stratagem_run_through_bedrock_stores_no_credential(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """End to end: `stratagem run` plays both models through the SDK; the reasoning is stored with
    each call and never sent back, tokens are §3.6's input + output; and although the server
    echoes the signed headers in every reply, no credential reaches the store, the cache or the
    printed output."""
    server = FakeBedrockServer(
        reply=REPLY, reasoning=THOUGHT, reasoning_tokens=30, echo_credentials=True
    )
    with server:
        path = write_run(tmp_path, server.endpoint_url)
        code, out, err = cli(capsys, "run", str(path), "--no-progress")
        received = list(server.requests)
    assert code == 0, err
    assert len(received) == 4  # 2 models x 2 rounds, no retry
    claude = [r for r in received if "claude" in r.model_id]
    assert all(
        r.body["additionalModelRequestFields"]["thinking"]["budget_tokens"] == 2457 for r in claude
    )
    assert all("additionalModelRequestFields" not in r.body for r in received if r not in claude)
    # Never fed back: the second round's history holds the visible reply only, masked.
    for request in received:
        assert THOUGHT not in str(request.body["messages"])
        assert not any(secret in str(request.body) for secret in CREDENTIALS)
    tokens = INPUT_TOKENS + OUTPUT_TOKENS + 30
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        for spec in expand(load_config(path)):
            calls = store.llm_calls(spec.id)
            assert len(calls) == 2
            for call in calls:
                assert call.response["reasoning"] == THOUGHT
                assert call.text is not None and call.text.startswith(REPLY)
                assert "[redacted]" in call.text
                assert call.input_tokens + call.output_tokens == tokens  # type: ignore[operator]
    printed = out + err
    stored = b"".join(p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file())
    for secret in CREDENTIALS:
        assert secret not in printed
        assert secret.encode() not in stored


def test_stratagem_run_stops_on_access_denied_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model the account may not call: one request, no retry, exit 3 with one line naming it."""
    with FakeBedrockServer(error=(403, "AccessDeniedException")) as server:
        path = write_run(tmp_path, server.endpoint_url)
        code, out, err = cli(capsys, "run", str(path), "--no-progress")
        served = {r.model_id for r in server.requests}, len(server.requests)
    assert code == 3
    assert served == ({"us.anthropic.claude-3-7-sonnet-20250219-v1:0"}, 1)
    (line,) = [line for line in err.splitlines() if "AccessDeniedException" in line]
    assert "enable it in the Bedrock console" in line
    assert not any(secret in out + err for secret in CREDENTIALS)
