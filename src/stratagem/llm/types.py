"""The data every model call is made of, the same for every provider.

A `Request` is what an agent asks; a `Response` is what comes back, with usage, latency and cost.
Requests are plain data so the response cache can hash them and the store can record them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": copy.deepcopy(self.arguments)}


@dataclass(frozen=True)
class Message:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    """Calls the assistant made in this message."""
    tool_call_id: str | None = None
    """For a `tool` message: the call it answers."""

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "content": self.content,
            "tool_calls": tuple(c.to_json() for c in self.tool_calls),
            "tool_call_id": self.tool_call_id,
        }


@dataclass(frozen=True)
class Tool:
    """A function the model may call, described by a JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self.parameters),
        }


@dataclass(frozen=True)
class Request:
    """One generation: the messages plus every parameter that changes the answer."""

    messages: tuple[Message, ...]
    tools: tuple[Tool, ...] = ()
    choices: tuple[str, ...] = ()
    """If set, the reply must be exactly one of these labels (grammar or re-asking enforces it)."""
    json_schema: dict[str, Any] | None = None
    """If set, the reply must be JSON valid against this schema."""
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    n: int = 1
    """Samples wanted (self-consistency); each sample is cached under its own index."""
    stop: tuple[str, ...] = ()
    """Texts at which generation stops, not included in the reply (seed-004 §2's `<EOS>`)."""

    def to_json(self) -> dict[str, Any]:
        """A fresh dict of plain data, as `dataclasses.asdict` would give, built directly: it
        runs for the cache key, the cache row and the store record of every call, and `asdict`'s
        generic deep copy cost more than the rest of a call's bookkeeping."""
        return {
            "messages": tuple(m.to_json() for m in self.messages),
            "tools": tuple(t.to_json() for t in self.tools),
            "choices": self.choices,
            "json_schema": copy.deepcopy(self.json_schema),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "n": self.n,
        } | ({"stop": self.stop} if self.stop else {})  # absent when unset: older keys unchanged


@dataclass(frozen=True)
class Usage:
    """Tokens billed. `output_tokens` includes thinking tokens, as providers bill them, so totals,
    costs and seed-003's efficiency (§5.4, per-round tokens) count the thinking too.
    `input_tokens` is the whole prompt, however it was billed: the provider's prompt cache only
    changes the rate of the parts it says it read or wrote (`stratagem.llm.pricing`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    """Of `output_tokens`, those spent thinking, where the provider says (0 where it does not)."""
    cached_input_tokens: int = 0
    """Of `input_tokens`, those read from the provider's prompt cache (OpenAI's
    `cached_tokens`, Anthropic's `cache_read_input_tokens`): billed at a discount."""
    cache_write_tokens: int = 0
    """Of `input_tokens`, those written to the prompt cache (Anthropic's
    `cache_creation_input_tokens`): billed above the input rate."""

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def uncached_input_tokens(self) -> int:
        """Input billed at the plain input rate."""
        return max(0, self.input_tokens - self.cached_input_tokens - self.cache_write_tokens)

    def to_json(self) -> dict[str, int]:
        """The counts; the prompt-cache ones only when there are some, so a record without
        them reads as it did before they existed."""
        out = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }
        if self.cached_input_tokens:
            out["cached_input_tokens"] = self.cached_input_tokens
        if self.cache_write_tokens:
            out["cache_write_tokens"] = self.cache_write_tokens
        return out


@dataclass(frozen=True)
class Response:
    """One sample of a model's answer."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    """Thinking or reasoning text, where the provider returns it: recorded with the call, never
    part of `text` (so never parsed as the answer) and never fed back to the model."""
    usage: Usage = Usage()
    latency_s: float = 0.0
    cost_usd: float = 0.0
    cached: bool = False
    """Replayed from the response cache: it cost nothing this time."""
    model: str = ""
    saved_usd: float = 0.0
    """What the provider's prompt cache saved on this call: its input at the full input rate less
    what it was billed (`cost_usd`); negative where cache writes cost more than reads saved, 0 on
    a replay. The store keeps it in a column of its own, not in `to_json`."""
    endpoint: str | None = None
    """The server of an endpoint pool that answered (`stratagem.llm.pool`); None otherwise."""

    def to_json(self) -> dict[str, Any]:
        """A fresh dict of plain data, as `dataclasses.asdict` would give (see `Request`), less
        `saved_usd`, and `endpoint` only when a pool's server answered."""
        return {
            "text": self.text,
            "tool_calls": tuple(c.to_json() for c in self.tool_calls),
            "reasoning": self.reasoning,
            "usage": self.usage.to_json(),
            "latency_s": self.latency_s,
            "cost_usd": self.cost_usd,
            "cached": self.cached,
            "model": self.model,
        } | ({"endpoint": self.endpoint} if self.endpoint else {})  # absent: records unchanged
