"""OpenAI chat completions, and any OpenAI-compatible server (vLLM, llama.cpp, Ollama, Mistral...).

Constrained output: `request.choices` becomes a `response_format` JSON schema
`{"choice": <one of the labels>}` and the chosen label comes back as the text; `request.json_schema`
becomes a `response_format` schema as it is. `params["structured"]` says how the server takes it:

- `"json_schema"` (default): `{"type": "json_schema", "json_schema": {...}}`, OpenAI structured
  outputs, also vLLM, Ollama, OpenRouter and llama.cpp's own `llama-server`;
- `"json_object"`: `{"type": "json_object", "schema": {...}}`, the form llama-cpp-python's server
  (`python -m llama_cpp.server`) and Together accept;
- `"none"`: no response_format; the reply is returned as given (the label itself when it matches
  one, ignoring case and surrounding punctuation) and the agent re-asks if it is not legal.

Calls go over aiohttp (`openai_http`: the SDK cost ~2 ms of CPU per call and capped a process near
a third of a fast API's rate at 256 calls in flight); `params["transport"] = "sdk"` sends them
through the official `openai` SDK instead (its own retries off: retrying is the pipeline's job).

Params (`ModelConfig.params`): `transport` ("aiohttp" or "sdk"), `structured` (above),
`max_tokens_field` ("max_tokens", or "max_completion_tokens" for OpenAI's reasoning models; the
default when `reasoning_effort` is set on OpenAI's own API), `strict_schema` (False: pass
`strict` for a request's own json_schema), `reasoning_effort` (sent as the request's
`reasoning_effort`; see `stratagem.llm.reasoning`), `extra_body` (a dict merged into every
request, for server-specific options).

Reasoning text comes back as `Response.reasoning`, never as the answer: from the message's
`reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter, Ollama) field, or from a
`<think>...</think>` block that servers without a reasoning parser leave at the start of the
content (DeepSeek-R1 on some hosts). Thinking tokens are part of `completion_tokens`, as billed;
`completion_tokens_details.reasoning_tokens` is kept as `Usage.reasoning_tokens`. OpenAI caches
every prompt prefix of 1,024 tokens or more by itself (no marking needed); the part of a prompt
read from that cache, `prompt_tokens_details.cached_tokens`, is kept as `Usage.cached_input_tokens`
and billed at the cached-input rate.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

import openai
from openai.types.chat import ChatCompletion

from stratagem.llm.errors import PermanentError, TransientError
from stratagem.llm.providers._common import check_params, match_label, redact, status_error
from stratagem.llm.providers.openai_http import OpenAIHTTP, default_base_url
from stratagem.llm.reasoning import reasoning_effort as read_effort
from stratagem.llm.surrogates import escape_surrogates
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall, Usage

if TYPE_CHECKING:
    from stratagem.llm.registry import ModelConfig

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
NO_KEY = "sk-no-key-required"
"""Sent to a `base_url` server when no key is configured: local servers ignore it."""

CHOICE_FIELD = "choice"
STRUCTURED_MODES = ("json_schema", "json_object", "none")
TRANSPORTS = ("aiohttp", "sdk")


def choice_schema(labels: tuple[str, ...]) -> dict[str, Any]:
    """The JSON schema that makes a structured-output server pick exactly one label."""
    return {
        "type": "object",
        "properties": {CHOICE_FIELD: {"type": "string", "enum": list(labels)}},
        "required": [CHOICE_FIELD],
        "additionalProperties": False,
    }


def message_param(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def tool_param(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def parse_arguments(raw: str) -> dict[str, Any]:
    """Tool arguments as a dict; unparseable ones are kept under `_raw` for the agent to judge."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def usage_of(usage: Any) -> Usage:
    """Billed tokens of a completion's `usage` object; `completion_tokens` already includes the
    reasoning tokens, `prompt_tokens` the part read from OpenAI's prompt cache
    (`prompt_tokens_details.cached_tokens`, billed at the cached-input rate)."""
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("completion_tokens_details")
    thinking = details.get("reasoning_tokens") if isinstance(details, dict) else None
    prompt = usage.get("prompt_tokens_details")
    cached = prompt.get("cached_tokens") if isinstance(prompt, dict) else None
    inputs = int(usage.get("prompt_tokens") or 0)
    return Usage(
        inputs, int(usage.get("completion_tokens") or 0), int(thinking or 0),
        cached_input_tokens=min(max(int(cached or 0), 0), inputs),
    )  # fmt: skip


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def split_thinking(content: str) -> tuple[str | None, str]:
    """(thinking, answer) of a reply that starts with a `<think>` block; (None, content) if not.

    Servers without a reasoning parser return DeepSeek-R1's thinking inline, and its chat template
    may put the opening tag in the prompt, so a reply with only `</think>` counts too. A block cut
    off by max_tokens (no closing tag) is all thinking: there is no answer to parse.
    """
    body = content.lstrip()
    opened = body.startswith(THINK_OPEN)
    if opened:
        body = body[len(THINK_OPEN) :]
    elif THINK_OPEN in body or THINK_CLOSE not in body:
        return None, content
    thinking, closed, answer = body.partition(THINK_CLOSE)
    if not closed:
        return thinking.strip() or None, ""
    return thinking.strip() or None, answer.strip()


class OpenAIProvider:
    """One chat completion per call, with errors mapped to Transient/Permanent."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        structured: str = "json_schema",
        max_tokens_field: str | None = None,
        strict_schema: bool = False,
        reasoning_effort: str | None = None,
        extra_body: dict[str, Any] | None = None,
        transport: str = "aiohttp",
        client: openai.AsyncOpenAI | None = None,
        key_env: str | None = None,
    ) -> None:
        """`client` (an SDK client) implies `transport="sdk"`."""
        if max_tokens_field is None:
            own_api = base_url is None and client is None
            reasoning = reasoning_effort is not None and own_api
            max_tokens_field = "max_completion_tokens" if reasoning else "max_tokens"
        if structured not in STRUCTURED_MODES:
            raise PermanentError(
                f"{model}: params.structured must be one of {', '.join(STRUCTURED_MODES)}"
            )
        if max_tokens_field not in ("max_tokens", "max_completion_tokens"):
            raise PermanentError(
                f"{model}: params.max_tokens_field must be 'max_tokens' or 'max_completion_tokens'"
            )
        self.model = model
        self.api_model = model.partition("/")[2] if model.startswith("openai/") else model
        self.structured = structured
        self.max_tokens_field = max_tokens_field
        self.strict_schema = strict_schema
        self.reasoning_effort = (
            None if reasoning_effort is None else read_effort(model, reasoning_effort)
        )
        self.extra_body = dict(extra_body or {})
        if transport not in TRANSPORTS:
            raise PermanentError(
                f"{model}: params.transport must be one of {', '.join(TRANSPORTS)}"
            )
        self._key = api_key
        self._key_env = key_env
        self._http: OpenAIHTTP | None = None
        self._client: openai.AsyncOpenAI | None = client
        if client is None and transport == "sdk":
            self._client = openai.AsyncOpenAI(
                api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0
            )
        elif client is None:
            url = base_url or default_base_url()
            self._http = OpenAIHTTP(model, url, api_key, timeout_s, key_env)

    def build_params(self, request: Request, sample: int) -> dict[str, Any]:
        """The keyword arguments of `chat.completions.create` for one sample of `request`."""
        params: dict[str, Any] = {
            "model": self.api_model,
            "messages": [message_param(m) for m in request.messages],
        }
        if request.tools:
            params["tools"] = [tool_param(t) for t in request.tools]
        if request.choices:
            fmt = self._response_format("choice", choice_schema(request.choices), strict=True)
        elif request.json_schema is not None:
            fmt = self._response_format("response", request.json_schema, self.strict_schema)
        else:
            fmt = None
        if fmt is not None:
            params["response_format"] = fmt
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.max_tokens is not None:
            params[self.max_tokens_field] = request.max_tokens
        if request.seed is not None:
            params["seed"] = request.seed + sample
        if request.stop:
            params["stop"] = list(request.stop)
        if self.reasoning_effort is not None:
            params["reasoning_effort"] = self.reasoning_effort
        if self.extra_body:
            params["extra_body"] = self.extra_body
        return params

    def _response_format(
        self, name: str, schema: dict[str, Any], strict: bool
    ) -> dict[str, Any] | None:
        if self.structured == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": name, "strict": strict, "schema": schema},
            }
        if self.structured == "json_object":
            return {"type": "json_object", "schema": schema}
        return None

    async def complete(self, request: Request, sample: int) -> Response:
        params = self.build_params(request, sample)
        started = time.perf_counter()
        if self._http is not None:
            extra = params.pop("extra_body", None)
            completion = await self._http.post("/chat/completions", {**params, **(extra or {})})
        else:
            completion = await self._sdk_complete(params)
        latency = time.perf_counter() - started
        return self.parse_completion(completion, request, latency)

    async def _sdk_complete(self, params: dict[str, Any]) -> Any:
        """The completion as JSON data, through the SDK, its errors mapped to ours."""
        assert self._client is not None
        try:
            completion: Any = await self._client.chat.completions.create(**params)
        except openai.APIStatusError as exc:
            raise status_error(
                self.model,
                exc.status_code,
                exc.message,
                exc.response.headers,
                self._key,
                self._key_env,
            ) from None
        except openai.APITimeoutError:
            raise TransientError(f"{self.model}: request timed out") from None
        except openai.APIConnectionError as exc:
            raise TransientError(
                redact(f"{self.model}: connection error: {exc}", self._key)
            ) from None
        except (openai.APIResponseValidationError, json.JSONDecodeError, UnicodeDecodeError):
            raise TransientError(f"{self.model}: malformed response body") from None
        except openai.APIError as exc:
            raise PermanentError(redact(f"{self.model}: {exc}", self._key)) from None
        return completion

    def parse_completion(self, completion: Any, request: Request, latency: float) -> Response:
        """Our `Response` from a chat completion's JSON (or the SDK's `ChatCompletion`); anything
        malformed is worth a retry."""
        if isinstance(completion, ChatCompletion):
            completion = completion.model_dump(mode="json")
        choices = completion.get("choices") if isinstance(completion, dict) else None
        if not choices or not isinstance(choices, list):
            raise TransientError(f"{self.model}: malformed response (no choices)")
        try:
            message = choices[0]["message"]
            text = message.get("content") or ""
            calls = tuple(
                ToolCall(
                    call["id"], call["function"]["name"],
                    parse_arguments(call["function"]["arguments"]),
                )
                for call in message.get("tool_calls") or ()
                if call.get("type") == "function"
            )  # fmt: skip
            reasoning = message.get("reasoning_content") or message.get("reasoning")
            tokens = usage_of(completion.get("usage"))
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            raise TransientError(f"{self.model}: malformed response ({exc!r})") from None
        if not isinstance(text, str):
            raise TransientError(f"{self.model}: malformed response (content is not text)")
        inline, text = split_thinking(text)
        if not (isinstance(reasoning, str) and reasoning):
            reasoning = inline
        if request.choices and not calls:
            text = self._label(text, request.choices)
        return Response(
            text=text,
            tool_calls=calls,
            reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
            usage=tokens,
            latency_s=latency,
            model=self.model,
        )

    def _label(self, text: str, labels: tuple[str, ...]) -> str:
        """The chosen label from a structured reply, else the text as given (agents validate)."""
        if self.structured != "none":
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                value = None
            if isinstance(value, dict) and value.get(CHOICE_FIELD) in labels:
                return str(value[CHOICE_FIELD])
        return match_label(text, labels) or text

    async def model_ids(self) -> list[str]:
        """The models the server names at `/models` (a pool's health check); aiohttp only."""
        if self._http is None:
            raise PermanentError(
                f"{self.model}: a pool of endpoints needs params.transport aiohttp"
            )
        data = await self._http.get("/models")
        rows = data.get("data") if isinstance(data, dict) else None
        ids = (str(r["id"]) for r in rows or () if isinstance(r, dict) and "id" in r)
        return [escape_surrogates(i) for i in ids]  # shown when none is the model wanted

    def secrets(self) -> tuple[str, ...]:
        """The key it sends, for the pipeline to mask (the local-server placeholder is none)."""
        return () if self._key == NO_KEY else (self._key,)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
        if self._client is not None:
            await self._client.close()


PARAMS = (
    "structured", "max_tokens_field", "strict_schema", "reasoning_effort", "extra_body",
    "transport",
)  # fmt: skip
"""The params `create` takes (`ModelConfig.params`)."""


def api_key(config: ModelConfig) -> tuple[str, str | None]:
    """(the key `create` sends, its variable): the placeholder and None for a `base_url` server
    given no key variable; a `PermanentError` naming the variable, never a value, when unset."""
    env = config.api_key_env or DEFAULT_KEY_ENV
    key = os.environ.get(env, "").strip()
    if key:
        return key, env
    if config.base_url is None or config.api_key_env is not None:
        raise PermanentError(
            f"{config.model}: the environment variable {env} is not set; export your API key "
            "in it (or set base_url for a local server that needs none)"
        )
    return NO_KEY, None


def check_config(config: ModelConfig) -> None:
    """For `registry.check_config`: unknown params."""
    check_params(config.model, config.params, PARAMS)


def ready(config: ModelConfig) -> None:
    """For `registry.check_ready`: the key `create` would send is there."""
    api_key(config)


def create(config: ModelConfig) -> OpenAIProvider:
    """The registry's entry point for `openai/...` model strings."""
    key, env = api_key(config)
    params = check_params(config.model, config.params, PARAMS)
    return OpenAIProvider(
        config.model,
        api_key=key,
        base_url=config.base_url,
        timeout_s=config.timeout_s,
        key_env=env,
        **params,
    )
