"""AWS Bedrock's Converse API through the AWS SDK (boto3's `bedrock-runtime` client), as seed-003
reached every model it ran (spec §3.3, §6): `bedrock/<model id>`, e.g.
`bedrock/us.meta.llama3-3-70b-instruct-v1:0`.

The request is the study's: `system=[{"text": ...}]`, the conversation as content blocks, and
`inferenceConfig` with the request's temperature and `maxTokens` (the model entry's `max_tokens`,
by default the study's 4096). Tools are Converse tool specs; a tool result is a `toolResult` block
in a user turn; consecutive turns of one role are merged, as the API wants. Converse has no seed
and forces a tool only on some models, so `request.seed` is not sent, and `request.choices` /
`request.json_schema` become an instruction in the system prompt, the reply read back as the label
it names or as JSON without code fences (agents re-ask when it is not legal).

Thinking: `thinking_budget` (tokens or a share of max_tokens, `stratagem.llm.reasoning`) turns on
Claude's extended thinking through `additionalModelRequestFields` (seed-003 §6: the (T) variants,
60%); other models refuse the setting when the file loads. With thinking the API takes no
temperature but 1, so another one is not sent. Thinking and DeepSeek-R1's native reasoning come
back as `reasoningContent` blocks: kept as `Response.reasoning` (stored with the call), never as
the answer, so never fed back into later turns (§3.3).

Usage: Bedrock's `inputTokens` leaves out what the prompt cache read or wrote
(`cacheReadInputTokens`, `cacheWriteInputTokens`), so `Usage.input_tokens` adds them back (the
whole prompt, as for every provider) and keeps them apart to be billed at their rates; without
prompt caching (the study used none) the call's tokens are §3.6's `inputTokens + outputTokens`.
Thinking tokens are part of `outputTokens`, as billed.

Credentials and region come from the standard AWS chain (environment variables, profiles, SSO,
an instance or container role, `AWS_BEARER_TOKEN_BEDROCK`): never in the config, the cache key or
the stored request; their values are masked in every reply and error (`secrets`). Params:
`region` (else the chain's, e.g. `AWS_REGION`), `endpoint_url` (a VPC endpoint or a test server;
`base_url` says the same), `max_tokens`, `thinking_budget`.

The SDK client blocks, so each call runs in a thread pool as wide as the model's
`max_concurrency` (its connection pool too), never on the event loop. The SDK's own retries are
off: throttling, 5xx, a model not ready and timeouts are `TransientError`s the pipeline retries;
access denied, validation errors and unknown models are `PermanentError`s that stop the model.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import boto3
import botocore.config
import botocore.exceptions as aws
import botocore.parsers

from stratagem.llm.errors import PermanentError, TransientError, scrub_secrets
from stratagem.llm.providers._common import (
    check_params,
    is_transient_status,
    match_label,
    retry_after,
    strip_fences,
    system_and_turns,
)
from stratagem.llm.reasoning import ThinkingBudget
from stratagem.llm.reasoning import thinking_budget as read_budget
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall, Usage

if TYPE_CHECKING:
    from stratagem.llm.registry import ModelConfig

DEFAULT_MAX_TOKENS = 4096
"""seed-003 §6: the maxTokens of every PD game (and most RPS games) the study ran."""
DEFAULT_WORKERS = 10
"""Calls in flight without a `max_concurrency` (the SDK's default connection pool)."""
BEARER_ENV = "AWS_BEARER_TOKEN_BEDROCK"
"""A Bedrock API key, which the SDK sends instead of signing with credentials."""
TRANSIENT_CODES = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "ModelNotReadyException",
        "ModelTimeoutException",
        "InternalServerException",
    }
)
"""Worth a retry whatever their status (besides any 5xx, 408, 429...)."""
HINTS = {
    "AccessDeniedException": " (these AWS credentials lack access to this model: enable it in the "
    "Bedrock console for this region and allow bedrock:InvokeModel)",
    "ResourceNotFoundException": " (no such model id in this region; check the model id and "
    "params.region)",
    "UnrecognizedClientException": " (check the AWS credentials)",
    "InvalidSignatureException": " (check the AWS credentials)",
    "ExpiredTokenException": " (the AWS session token expired; renew the credentials)",
}
_MAX_MESSAGE = 300
"""Characters of a server's error message kept: enough to diagnose, short enough for one line."""
REDACTED = "[redacted]"


def _blocks(message: Message) -> list[dict[str, Any]]:
    """A message's Converse content blocks (none for an empty one: the API refuses empty text)."""
    if message.role == "tool":
        result = {"toolUseId": message.tool_call_id or "", "content": [{"text": message.content}]}
        return [{"toolResult": result}]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"text": message.content})
    for call in message.tool_calls:
        use = {"toolUseId": call.id, "name": call.name, "input": call.arguments}
        blocks.append({"toolUse": use})
    return blocks


def messages_param(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, Any]]]:
    """(system text, Converse messages): see `system_and_turns`."""
    return system_and_turns(messages, _blocks)


def tool_param(tool: Tool) -> dict[str, Any]:
    spec = {"name": tool.name, "description": tool.description}
    return {"toolSpec": {**spec, "inputSchema": {"json": tool.parameters}}}


def instruction(request: Request) -> str:
    """What the system prompt says when the reply must be a label or JSON (module docstring)."""
    if request.choices:
        return f"Reply with exactly one of: {', '.join(request.choices)}, and nothing else."
    if request.json_schema is not None:
        schema = json.dumps(request.json_schema, sort_keys=True)
        return f"Reply with only a JSON value valid against this JSON schema: {schema}"
    return ""


class BedrockProvider:
    """One Converse call per sample, in a thread, with errors mapped to Transient/Permanent."""

    def __init__(
        self,
        model: str,
        *,
        client: Any,
        workers: int = DEFAULT_WORKERS,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking_budget: ThinkingBudget | None = None,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.model = model
        self.model_id = model.partition("/")[2] if model.startswith("bedrock/") else model
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget
        self._client = client
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bedrock")
        self._secrets = tuple(s for s in secrets if s)

    def build_params(self, request: Request) -> dict[str, Any]:
        """The keyword arguments of `converse` for `request`."""
        system, turns = messages_param(request.messages)
        system = "\n\n".join(part for part in (system, instruction(request)) if part)
        max_tokens = request.max_tokens or self.max_tokens
        config: dict[str, Any] = {"maxTokens": max_tokens}
        params: dict[str, Any] = {"modelId": self.model_id, "messages": turns}
        if system:
            params["system"] = [{"text": system}]
        if self.thinking_budget is not None:
            budget = self.thinking_budget.resolve(self.model, max_tokens)
            thinking = {"type": "enabled", "budget_tokens": budget}
            params["additionalModelRequestFields"] = {"thinking": thinking}
            if request.temperature == 1:  # the only one the API takes with thinking (§6 sent 1.0)
                config["temperature"] = 1.0
        elif request.temperature is not None:
            config["temperature"] = request.temperature
        if request.stop:
            config["stopSequences"] = list(request.stop)
        params["inferenceConfig"] = config
        if request.tools:
            params["toolConfig"] = {"tools": [tool_param(t) for t in request.tools]}
        return params

    async def complete(self, request: Request, sample: int) -> Response:
        params = self.build_params(request)
        call = functools.partial(self._client.converse, **params)
        started = time.perf_counter()
        try:
            reply = await asyncio.get_running_loop().run_in_executor(self._pool, call)
        except aws.ClientError as exc:
            raise self.client_error(exc) from None
        except aws.NoCredentialsError:
            raise PermanentError(f"{self.model}: {NO_CREDENTIALS}") from None
        except (aws.ReadTimeoutError, aws.ConnectTimeoutError):
            raise TransientError(f"{self.model}: request timed out") from None
        except (aws.HTTPClientError, aws.ConnectionError) as exc:
            raise TransientError(self.clean(f"{self.model}: connection error: {exc}")) from None
        except botocore.parsers.ResponseParserError:
            raise TransientError(f"{self.model}: malformed response body") from None
        except aws.BotoCoreError as exc:
            raise PermanentError(self.clean(f"{self.model}: {exc}")) from None
        return self.parse_reply(reply, request, time.perf_counter() - started)

    def client_error(self, exc: aws.ClientError) -> TransientError | PermanentError:
        """The error to raise for an error reply from Bedrock, as one line without credentials."""
        error = exc.response.get("Error") or {}
        meta = exc.response.get("ResponseMetadata") or {}
        code = str(error.get("Code") or "error")
        status = int(meta.get("HTTPStatusCode") or 0)
        message = " ".join(str(error.get("Message") or "").split())
        if len(message) > _MAX_MESSAGE:
            message = message[:_MAX_MESSAGE] + "..."
        text = self.clean(f"{self.model}: {code} (HTTP {status}): {message}".rstrip(": "))
        if code in TRANSIENT_CODES or is_transient_status(status):
            return TransientError(text, retry_after(meta.get("HTTPHeaders")))
        return PermanentError(text + HINTS.get(code, ""))

    def parse_reply(self, reply: Any, request: Request, latency: float) -> Response:
        """Our `Response` from Converse's reply; anything malformed is worth a retry."""
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        try:
            for block in reply["output"]["message"]["content"]:
                if "text" in block:
                    texts.append(block["text"])
                elif "reasoningContent" in block:  # redactedContent (encrypted) has no text
                    thought = block["reasoningContent"].get("reasoningText") or {}
                    thoughts.append(thought.get("text") or "")
                elif "toolUse" in block:
                    use = block["toolUse"]
                    arguments = use.get("input")
                    arguments = arguments if isinstance(arguments, dict) else {}
                    calls.append(ToolCall(use["toolUseId"], use["name"], dict(arguments)))
            usage = reply["usage"]
            read = int(usage.get("cacheReadInputTokens") or 0)
            written = int(usage.get("cacheWriteInputTokens") or 0)
            tokens = Usage(
                int(usage["inputTokens"]) + read + written,
                int(usage["outputTokens"]),
                cached_input_tokens=read,
                cache_write_tokens=written,
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise TransientError(f"{self.model}: malformed response ({exc!r})") from None
        text = "".join(texts).strip()
        if request.choices and not calls:
            text = match_label(text, request.choices) or text
        elif request.json_schema is not None and not calls:
            text = strip_fences(text)
        return Response(
            text=text,
            tool_calls=tuple(calls),
            reasoning="\n\n".join(t for t in thoughts if t) or None,
            usage=tokens,
            latency_s=latency,
            model=self.model,
        )

    def clean(self, text: str) -> str:
        """`text` without the credentials this provider sends, or anything shaped like one."""
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return scrub_secrets(text)

    def secrets(self) -> tuple[str, ...]:
        """The credential values it sends or signs with, for the pipeline to mask."""
        return self._secrets

    async def aclose(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()


NO_CREDENTIALS = (
    "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, "
    f"{BEARER_ENV}, or run with an instance role"
)


def _credentials(session: Any, model: str) -> tuple[str, ...]:
    """The chain's credential values (to mask them), or a `PermanentError` when there are none."""
    bearer = os.environ.get(BEARER_ENV, "").strip()
    found = session.get_credentials()
    if found is None:
        if bearer:
            return (bearer,)
        raise PermanentError(f"{model}: {NO_CREDENTIALS}")
    frozen = found.get_frozen_credentials()
    return tuple(v for v in (frozen.secret_key, frozen.token, frozen.access_key, bearer) if v)


PARAMS = ("region", "endpoint_url", "max_tokens", "thinking_budget")
"""The params `create` takes (`ModelConfig.params`)."""


def check_config(config: ModelConfig) -> dict[str, Any]:
    """For `registry.check_config` and `create`: the params, checked (no `api_key_env`, no
    unknown param, one endpoint, a positive max_tokens)."""
    model = config.model
    if config.api_key_env is not None:
        raise PermanentError(
            f"{model}: api_key_env does not apply to Bedrock, which takes AWS credentials from "
            f"the standard chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, "
            f"{BEARER_ENV}, an instance role)"
        )
    params = check_params(model, config.params, PARAMS)
    endpoint = params.get("endpoint_url")
    if endpoint is not None and config.base_url is not None and endpoint != config.base_url:
        raise PermanentError(f"{model}: give base_url or params.endpoint_url, not both")
    max_tokens = params.get("max_tokens", DEFAULT_MAX_TOKENS)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise PermanentError(f"{model}: params.max_tokens must be a positive integer")
    return params


def ready(config: ModelConfig) -> tuple[Any, tuple[str, ...]]:
    """For `registry.check_ready` and `create`: (the AWS session, its credential values), or a
    `PermanentError` when the chain has no region or no credentials."""
    model = config.model
    try:
        session = boto3.Session(region_name=config.params.get("region"))
    except aws.BotoCoreError as exc:  # a profile named in AWS_PROFILE that does not exist...
        raise PermanentError(scrub_secrets(f"{model}: {exc}")) from None
    if session.region_name is None:
        raise PermanentError(
            f"{model}: no AWS region: give params.region (the study used us-west-2) or set "
            "AWS_REGION"
        )
    return session, _credentials(session, model)


def create(config: ModelConfig) -> BedrockProvider:
    """The registry's entry point for `bedrock/...` model strings."""
    model = config.model
    params = check_config(config)
    endpoint = params.get("endpoint_url") or config.base_url
    max_tokens = params.get("max_tokens", DEFAULT_MAX_TOKENS)
    budget = params.get("thinking_budget")
    session, secrets = ready(config)
    workers = config.max_concurrency or DEFAULT_WORKERS
    sdk_config = botocore.config.Config(
        connect_timeout=min(config.timeout_s, 10.0),
        read_timeout=config.timeout_s,
        retries={"total_max_attempts": 1},  # retrying is the pipeline's job
        max_pool_connections=workers,
    )
    try:
        client = session.client("bedrock-runtime", endpoint_url=endpoint, config=sdk_config)
    except (aws.BotoCoreError, ValueError) as exc:  # e.g. an endpoint_url that is no URL
        raise PermanentError(scrub_secrets(f"{model}: {exc}")) from None
    return BedrockProvider(
        model,
        client=client,
        workers=workers,
        max_tokens=max_tokens,
        thinking_budget=None if budget is None else read_budget(model, budget),
        secrets=secrets,
    )
