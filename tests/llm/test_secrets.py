"""Issue 23 item 5, the pipeline's part: the provider's exact key is masked in every text of a reply
(content, reasoning, tool calls, model), in a reply replayed from a cache written before masking
existed, and in error texts, also where the key has no credential shape and its variable no
credential name (so the pattern scrubbing of errors alone would miss it)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from stratagem.llm.cache import ResponseCache
from stratagem.llm.errors import CallFailed, ModelRefused, PermanentError, TransientError
from stratagem.llm.pipeline import ModelClient
from stratagem.llm.pricing import Prices
from stratagem.llm.provider import provider_secrets
from stratagem.llm.providers.anthropic import AnthropicProvider
from stratagem.llm.providers.openai import NO_KEY, OpenAIProvider
from stratagem.llm.providers.scripted import ScriptedProvider
from stratagem.llm.retry import RetryPolicy
from stratagem.llm.secrets import REDACTED, SecretScrubber
from stratagem.llm.types import Message, Request, Response, ToolCall, Usage

KEY = "SENTINEL/a1b2+c3d4"
"""No `sk-` shape and a `/`: only the exact value can catch it."""
ESCAPED = KEY.replace("/", "\\/")
"""As some JSON encoders write it inside a string."""
MODEL = "keyed/model"


def req(text: str = "choose") -> Request:
    return Request(messages=(Message("user", text),))


@dataclass
class Keyed:
    """A provider holding KEY that answers (or fails) as told."""

    answer: Response | BaseException
    model: str = MODEL
    calls: int = 0

    async def complete(self, request: Request, sample: int) -> Response:
        self.calls += 1
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer

    def secrets(self) -> tuple[str, ...]:
        return (KEY,)

    async def aclose(self) -> None:
        pass


@dataclass
class Recorder:
    rows: list[tuple[Any, ...]] = field(default_factory=list)

    def __call__(self, *row: Any) -> None:
        self.rows.append(row)


async def _no_sleep(_: float) -> None:
    pass


def client(provider: Any, cache: ResponseCache | None, recorder: Recorder) -> ModelClient:
    return ModelClient(
        provider,
        cache=cache,
        limiter=None,
        limits=None,
        retry=RetryPolicy(max_attempts=2, base_delay=0),
        prices=Prices({}),
        budget=None,
        recorder=recorder,
        sleep=_no_sleep,
    )


def echoing() -> Response:
    escaped = json.dumps({"said": f"Bearer {KEY}"})  # JSON text: the `/` stays, quotes escaped
    return Response(
        text=f"Authorization: Bearer {KEY}; as JSON {escaped}; escaped {ESCAPED}",
        reasoning=f"the header was {KEY}",
        tool_calls=(
            ToolCall("call_1", f"tool_{KEY}", {"note": [f"x-api-key: {KEY}"], KEY: {"k": KEY}}),
        ),
        usage=Usage(3, 2),
        model=f"server-model {KEY}",
    )


def test_every_text_of_a_reply_is_masked_before_anyone_sees_it(tmp_path: Path) -> None:
    recorder = Recorder()
    with ResponseCache(tmp_path / "cache.db") as cache:
        model = client(Keyed(echoing()), cache, recorder)
        (response,) = asyncio.run(model.generate(req()))
        # The second time the same request comes from the cache.
        (replayed,) = asyncio.run(model.generate(req()))
    for seen in (response, replayed, recorder.rows[0][3], recorder.rows[1][3]):
        dumped = json.dumps(seen.to_json())
        assert KEY not in dumped and ESCAPED not in dumped
        assert seen.text.startswith(f"Authorization: Bearer {REDACTED}; as JSON")
        assert seen.reasoning == f"the header was {REDACTED}"
        assert seen.model == f"server-model {REDACTED}"
        (call,) = seen.tool_calls
        assert call.name == f"tool_{REDACTED}"
        assert call.arguments == {
            "note": [f"x-api-key: {REDACTED}"], REDACTED: {"k": REDACTED}
        }  # fmt: skip
    assert replayed.cached and not response.cached
    assert KEY.encode() not in (tmp_path / "cache.db").read_bytes()


def test_a_reply_cached_before_masking_is_masked_on_replay(tmp_path: Path) -> None:
    """A cache written by an older stratagem holds the echoed key: the replay masks it, for the
    agent (and so for what it sends next) and for the store."""
    provider = Keyed(echoing())
    with ResponseCache(tmp_path / "cache.db") as cache:
        key, request_json = cache.key_and_request(MODEL, req(), 0)
        cache.put(key, MODEL, req(), echoing(), request_json=request_json)  # as before the fix
        recorder = Recorder()
        (response,) = asyncio.run(client(provider, cache, recorder).generate(req()))
    assert provider.calls == 0 and response.cached
    assert KEY not in json.dumps(response.to_json())
    assert KEY not in json.dumps(recorder.rows[0][3].to_json())


def test_a_reply_without_the_key_is_returned_as_it_is() -> None:
    """The per-call cost: nothing is copied when nothing is found."""
    plain = Response("cooperate", tool_calls=(ToolCall("c", "vote", {"x": ["y"]}),), model="m")
    assert SecretScrubber([KEY]).response(plain) is plain
    assert SecretScrubber([]).response(echoing()) == echoing()


def test_short_placeholder_keys_are_not_masked() -> None:
    """Local servers take placeholder keys ("EMPTY", "ollama"); masking them would corrupt
    replies that merely contain the word."""
    assert SecretScrubber(["EMPTY", "ollama"]).text("EMPTY ollama") == "EMPTY ollama"


@pytest.mark.parametrize(
    "failure",
    [
        RuntimeError(f"library said: headers {{'auth': '{KEY}'}}"),  # any exception
        TransientError(f"503 from proxy; token={KEY}"),  # retried, then given up
        PermanentError(f"bad request echoing {KEY}"),  # refused for good
    ],
    ids=["exception", "transient", "permanent"],
)
def test_error_texts_mask_the_exact_key(failure: BaseException) -> None:
    recorder = Recorder()
    model = client(Keyed(failure), None, recorder)
    with pytest.raises((CallFailed, ModelRefused)) as raised:
        asyncio.run(model.generate(req()))
    error = recorder.rows[-1][4]
    assert KEY not in str(raised.value) and KEY not in error
    assert REDACTED in str(raised.value) and REDACTED in error
    if isinstance(failure, PermanentError):  # the remembered refusal, shown on every later call
        assert model.refused is not None and KEY not in str(model.refused)


def test_providers_expose_the_key_they_send() -> None:
    openai = OpenAIProvider("openai/x", api_key=KEY, base_url="http://127.0.0.1:9/v1")
    placeholder = OpenAIProvider("openai/x", api_key=NO_KEY, base_url="http://127.0.0.1:9/v1")
    anthropic = AnthropicProvider("anthropic/x", api_key=KEY, base_url="http://127.0.0.1:9")
    assert provider_secrets(openai) == (KEY,) and provider_secrets(anthropic) == (KEY,)
    assert provider_secrets(placeholder) == ()
    assert provider_secrets(ScriptedProvider()) == ()  # no key, no method
