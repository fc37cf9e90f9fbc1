"""OpenAI chat completions, and any OpenAI-compatible server (vLLM, llama.cpp, Ollama, Mistral...).

Built on the official `openai` SDK with its own retries switched off: retrying is the pipeline's
job, so that every attempt is counted, rate-limited and recorded the same way for every provider.

Constrained output: `request.choices` becomes a `response_format` JSON schema
`{"choice": <one of the labels>}` and the chosen label comes back as the text; `request.json_schema`
becomes a `response_format` schema as it is. `params["structured"]` says how the server takes it:

- `"json_schema"` (default): `{"type": "json_schema", "json_schema": {...}}`, OpenAI structured
  outputs, also vLLM, Ollama, OpenRouter and llama.cpp's own `llama-server`;
- `"json_object"`: `{"type": "json_object", "schema": {...}}`, the form llama-cpp-python's server
  (`python -m llama_cpp.server`) and Together accept;
- `"none"`: no response_format; the reply is returned as given (the label itself when it matches
  one, ignoring case and surrounding punctuation) and the agent re-asks if it is not legal.

Params (`ModelConfig.params`): `structured` (above), `max_tokens_field`
("max_tokens", or "max_completion_tokens" for OpenAI's reasoning models), `strict_schema`
(False: pass `strict` for a request's own json_schema), `extra_body` (a dict merged into every
request, e.g. `{"reasoning_effort": "low"}` or server-specific sampling options).
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

import openai
from openai.types.chat import ChatCompletion

from stratagem.llm.errors import PermanentError, TransientError
from stratagem.llm.providers._common import check_params, redact, status_error
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall, Usage

if TYPE_CHECKING:
    from stratagem.llm.registry import ModelConfig

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
NO_KEY = "sk-no-key-required"
"""Sent to a `base_url` server when no key is configured: local servers ignore it."""

CHOICE_FIELD = "choice"
STRUCTURED_MODES = ("json_schema", "json_object", "none")


def choice_schema(labels: tuple[str, ...]) -> dict[str, Any]:
    """The JSON schema that makes a structured-output server pick exactly one label."""
    return {
        "type": "object",
        "properties": {CHOICE_FIELD: {"type": "string", "enum": list(labels)}},
        "required": [CHOICE_FIELD],
        "additionalProperties": False,
    }


def match_label(text: str, labels: tuple[str, ...]) -> str | None:
    """The label a free-text reply names exactly (ignoring case, spaces, quotes, final dot)."""
    cleaned = text.strip().strip("\"'`*.").strip().casefold()
    for label in labels:
        if cleaned == label.casefold():
            return label
    return None


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
        max_tokens_field: str = "max_tokens",
        strict_schema: bool = False,
        extra_body: dict[str, Any] | None = None,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
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
        self.extra_body = dict(extra_body or {})
        self._key = api_key
        self._client = client or openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0
        )

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
        try:
            completion: Any = await self._client.chat.completions.create(**params)
        except openai.APIStatusError as exc:
            raise status_error(
                self.model, exc.status_code, exc.message, exc.response.headers, self._key
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
        latency = time.perf_counter() - started
        return self.parse_completion(completion, request, latency)

    def parse_completion(self, completion: Any, request: Request, latency: float) -> Response:
        """Our `Response` from the SDK's object; anything malformed is worth a retry."""
        if not isinstance(completion, ChatCompletion) or not getattr(completion, "choices", None):
            raise TransientError(f"{self.model}: malformed response (no choices)")
        try:
            message = completion.choices[0].message
            text = message.content or ""
            calls = tuple(
                ToolCall(call.id, call.function.name, parse_arguments(call.function.arguments))
                for call in message.tool_calls or ()
                if call.type == "function"
            )
            reasoning = getattr(message, "reasoning_content", None) or getattr(
                message, "reasoning", None
            )
            usage = completion.usage
            tokens = (
                Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0)
                if usage is not None
                else Usage()
            )
        except (AttributeError, TypeError) as exc:
            raise TransientError(f"{self.model}: malformed response ({exc})") from None
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

    async def aclose(self) -> None:
        await self._client.close()


def create(config: ModelConfig) -> OpenAIProvider:
    """The registry's entry point for `openai/...` model strings."""
    env = config.api_key_env or DEFAULT_KEY_ENV
    key = os.environ.get(env, "").strip()
    if not key:
        if config.base_url is None or config.api_key_env is not None:
            raise PermanentError(
                f"{config.model}: the environment variable {env} is not set; export your API key "
                "in it (or set base_url for a local server that needs none)"
            )
        key = NO_KEY
    known = ("structured", "max_tokens_field", "strict_schema", "extra_body")
    params = check_params(config.model, config.params, known)
    return OpenAIProvider(
        config.model, api_key=key, base_url=config.base_url, timeout_s=config.timeout_s, **params
    )
