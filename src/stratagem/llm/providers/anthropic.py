"""Anthropic's Messages API through the official `anthropic` SDK (its own retries switched off).

Mapping from our types: system messages (wherever they are) become `system=`; a tool result is a
`tool_result` block in a user turn; consecutive turns of one role are merged, as the API wants.
Tools are native tool use. Thinking blocks come back as `Response.reasoning`. The API has no seed,
so `request.seed` is not sent (replays come from the response cache). API version 2026-10-21 (the
default of SDK 2.x, which dropped the argument) rejects sampling parameters, so `temperature` is
sent only through an SDK whose `messages.create` still takes it.

Constrained output:

- `request.choices`: a `select_choice` tool whose one argument is an enum of the labels, forced
  with `tool_choice` (with other tools offered: `tool_choice="any"`, so the model either calls one
  of them or chooses); the chosen label comes back as the text.
- `request.json_schema` (an object schema): a `respond` tool with that input schema, forced; the
  arguments come back as the JSON text.
- With extended thinking (`params={"thinking": {...}}`) the API refuses forced tool use, so both
  become an instruction in the system prompt and the reply is validated instead (the label
  itself when it matches one; JSON with code fences removed); agents re-ask when it is not legal.

Params (`ModelConfig.params`): `max_tokens` (1024; the API requires one), `thinking_budget`
(extended thinking: tokens, or a share of each call's max_tokens such as "60%", seed-003 §6; see
`stratagem.llm.reasoning`), `thinking` (the API's own object, passed as given, e.g.
`{"type": "enabled", "budget_tokens": 2048}`; not with `thinking_budget`), `extra_body` (merged
into requests). Thinking tokens are billed as output tokens, so `Usage.output_tokens` counts them.

Prompt caching (`cache_breakpoints`): the API caches only what a request marks, so every request
marks the system prompt, and a growing conversation (one with an assistant turn already) also
marks the last turn before the new one and the new turn itself, 3 of the API's 4 breakpoints:
the next call of the conversation then reads all of this one from the cache (0.1 x input) and
writes only what it adds (1.25 x input). The marks are made here, from the request's messages,
so the response cache's keys are those of unmarked requests. `Usage.input_tokens` counts the
whole prompt (the API's `input_tokens` plus its cache reads and writes), and the reads and
writes are kept apart to be billed at their rates.
"""

from __future__ import annotations

import inspect
import json
import time
from typing import TYPE_CHECKING, Any

import anthropic
from anthropic.resources.messages import AsyncMessages

from stratagem.llm.errors import PermanentError, TransientError
from stratagem.llm.providers._common import (
    check_params,
    match_label,
    redact,
    status_error,
    strip_fences,
    system_and_turns,
)
from stratagem.llm.reasoning import thinking_budget as read_budget
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall, Usage

if TYPE_CHECKING:
    import httpx2

    from stratagem.llm.registry import ModelConfig

DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_MAX_TOKENS = 1024
CHOICE_TOOL = "select_choice"
RESPOND_TOOL = "respond"
_INTERNAL_TOOLS = (CHOICE_TOOL, RESPOND_TOOL)
SENDS_TEMPERATURE = "temperature" in inspect.signature(AsyncMessages.create).parameters
"""Whether this SDK (and so its default API version) still takes a sampling temperature."""


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.content,
            }
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    return blocks


def messages_param(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, Any]]]:
    """(system text, API messages): see `system_and_turns`."""
    return system_and_turns(messages, _blocks)


def tool_param(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


CACHE_MARK = {"type": "ephemeral"}
"""A breakpoint of Anthropic's 5-minute prompt cache."""
MAX_BREAKPOINTS = 4
"""The API refuses a request with more."""


def cache_breakpoints(system: str, turns: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """Mark the stable prefixes of a request for Anthropic's prompt cache (module docstring):
    `turns` gain their marks in place; the system prompt comes back as marked blocks (None when
    there is none). A request without an assistant turn has no conversation to grow: its last
    turn is not marked (a write that nothing would read costs 1.25 x input)."""
    marked: list[dict[str, Any]] = []
    if any(turn["role"] == "assistant" for turn in turns):
        marked = [turn["content"][-1] for turn in turns[-2:]]
    for block in marked:  # with the system prompt's, 3 marks: within MAX_BREAKPOINTS
        block["cache_control"] = dict(CACHE_MARK)
    if not system:
        return None
    return [{"type": "text", "text": system, "cache_control": dict(CACHE_MARK)}]


class AnthropicProvider:
    """One Messages API call per sample, with errors mapped to Transient/Permanent."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking: dict[str, Any] | None = None,
        thinking_budget: int | str | None = None,
        extra_body: dict[str, Any] | None = None,
        http_client: httpx2.AsyncClient | None = None,
        key_env: str | None = None,
    ) -> None:
        if thinking is not None and thinking_budget is not None:
            raise PermanentError(
                f"{model}: give params.thinking_budget or params.thinking, not both"
            )
        self.model = model
        self.api_model = model.partition("/")[2] if model.startswith("anthropic/") else model
        self.max_tokens = max_tokens
        self.thinking = thinking
        self.thinking_budget = (
            None if thinking_budget is None else read_budget(model, thinking_budget)
        )
        self.extra_body = dict(extra_body or {})
        self._key = api_key
        self._key_env = key_env
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            http_client=http_client,
        )

    @property
    def forced_tools(self) -> bool:
        """Forced tool use is how we constrain output, except under extended thinking."""
        return self.thinking is None and self.thinking_budget is None

    def thinking_param(self, max_tokens: int) -> dict[str, Any] | None:
        """The request's `thinking` object, the budget resolved against this call's max_tokens."""
        if self.thinking_budget is not None:
            budget = self.thinking_budget.resolve(self.model, max_tokens)
            return {"type": "enabled", "budget_tokens": budget}
        return self.thinking

    def build_params(self, request: Request) -> dict[str, Any]:
        """The keyword arguments of `messages.create` for `request`."""
        clash = {t.name for t in request.tools} & set(_INTERNAL_TOOLS)
        if clash:
            raise PermanentError(
                f"{self.model}: tool names {sorted(clash)} are reserved for constrained output"
            )
        system, turns = messages_param(request.messages)
        tools = [tool_param(t) for t in request.tools]
        tool_choice: dict[str, Any] | None = None
        instructions: list[str] = []
        schema = request.json_schema
        if request.choices:
            if self.forced_tools:
                tools.append(
                    {
                        "name": CHOICE_TOOL,
                        "description": "Give your answer: exactly one of the allowed choices.",
                        "input_schema": {
                            "type": "object",
                            "properties": {
                                "choice": {"type": "string", "enum": list(request.choices)}
                            },
                            "required": ["choice"],
                        },
                    }
                )
                tool_choice = (
                    {"type": "any"} if request.tools else {"type": "tool", "name": CHOICE_TOOL}
                )
            else:
                instructions.append(
                    "Reply with exactly one of: "
                    + ", ".join(request.choices)
                    + ", and nothing else."
                )
        elif schema is not None:
            if self.forced_tools and schema.get("type") == "object":
                tools.append(
                    {
                        "name": RESPOND_TOOL,
                        "description": "Give your answer.",
                        "input_schema": schema,
                    }
                )
                tool_choice = (
                    {"type": "any"} if request.tools else {"type": "tool", "name": RESPOND_TOOL}
                )
            else:
                instructions.append(
                    "Reply with only a JSON value valid against this JSON schema: "
                    + json.dumps(schema, sort_keys=True)
                )
        system = "\n\n".join(part for part in [system, *instructions] if part)
        max_tokens = request.max_tokens or self.max_tokens
        thinking = self.thinking_param(max_tokens)
        params: dict[str, Any] = {
            "model": self.api_model,
            "max_tokens": max_tokens,
            "messages": turns,
        }
        system_blocks = cache_breakpoints(system, turns)
        if system_blocks is not None:
            params["system"] = system_blocks
        if request.stop:
            params["stop_sequences"] = list(request.stop)
        if tools:
            params["tools"] = tools
        if tool_choice is not None:
            params["tool_choice"] = tool_choice
        if thinking is not None:
            params["thinking"] = thinking  # the API then fixes the temperature itself
        elif request.temperature is not None and SENDS_TEMPERATURE:
            params["temperature"] = request.temperature
        if self.extra_body:
            params["extra_body"] = self.extra_body
        return params

    async def complete(self, request: Request, sample: int) -> Response:
        params = self.build_params(request)
        started = time.perf_counter()
        try:
            message: Any = await self._client.messages.create(**params)
        except anthropic.APIStatusError as exc:
            raise status_error(
                self.model,
                exc.status_code,
                exc.message,
                exc.response.headers,
                self._key,
                self._key_env,
            ) from None
        except anthropic.APITimeoutError:
            raise TransientError(f"{self.model}: request timed out") from None
        except anthropic.APIConnectionError as exc:
            raise TransientError(
                redact(f"{self.model}: connection error: {exc}", self._key)
            ) from None
        except (anthropic.APIResponseValidationError, json.JSONDecodeError, UnicodeDecodeError):
            raise TransientError(f"{self.model}: malformed response body") from None
        except anthropic.AnthropicError as exc:
            raise PermanentError(redact(f"{self.model}: {exc}", self._key)) from None
        latency = time.perf_counter() - started
        return self.parse_message(message, request, latency)

    def parse_message(self, message: Any, request: Request, latency: float) -> Response:
        """Our `Response` from the SDK's `Message`; anything malformed is worth a retry."""
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        answer: str | None = None
        try:
            for block in message.content:
                kind = block.type
                if kind == "text":
                    texts.append(block.text)
                elif kind == "thinking":
                    thoughts.append(block.thinking)
                elif kind == "tool_use":
                    arguments = block.input if isinstance(block.input, dict) else {}
                    if block.name == CHOICE_TOOL and request.choices:
                        answer = str(arguments.get("choice", ""))
                    elif block.name == RESPOND_TOOL and request.json_schema is not None:
                        answer = json.dumps(arguments)
                    else:
                        calls.append(ToolCall(block.id, block.name, dict(arguments)))
            usage = message.usage
            written = getattr(usage, "cache_creation_input_tokens", None) or 0
            read = getattr(usage, "cache_read_input_tokens", None) or 0
            tokens = Usage(
                usage.input_tokens + written + read,
                usage.output_tokens,
                cached_input_tokens=read,
                cache_write_tokens=written,
            )
        except (AttributeError, TypeError) as exc:
            raise TransientError(f"{self.model}: malformed response ({exc})") from None
        text = "".join(texts).strip()
        if answer is not None:
            text = answer
        elif request.choices and not calls:
            text = match_label(text, request.choices) or text
        elif request.json_schema is not None and not calls:
            text = strip_fences(text)
        return Response(
            text=text,
            tool_calls=tuple(calls),
            reasoning="\n\n".join(thoughts) or None,
            usage=tokens,
            latency_s=latency,
            model=self.model,
        )

    def secrets(self) -> tuple[str, ...]:
        """The key it sends (`x-api-key`), for the pipeline to mask."""
        return (self._key,)

    async def aclose(self) -> None:
        await self._client.close()


PARAMS = ("max_tokens", "thinking", "thinking_budget", "extra_body")
"""The params `create` takes (`ModelConfig.params`)."""


def check_config(config: ModelConfig) -> None:
    """For `registry.check_config`: unknown params."""
    check_params(config.model, config.params, PARAMS)


def ready(config: ModelConfig) -> None:
    """For `registry.check_ready`: the key `create` would send is there."""
    from stratagem.llm.registry import read_api_key

    read_api_key(config.api_key_env or DEFAULT_KEY_ENV)


def create(config: ModelConfig) -> AnthropicProvider:
    """The registry's entry point for `anthropic/...` model strings."""
    from stratagem.llm.registry import read_api_key

    env = config.api_key_env or DEFAULT_KEY_ENV
    key = read_api_key(env)
    params = check_params(config.model, config.params, PARAMS)
    return AnthropicProvider(
        config.model,
        api_key=key,
        base_url=config.base_url,
        timeout_s=config.timeout_s,
        key_env=env,
        **params,
    )
