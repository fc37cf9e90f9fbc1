"""The data every model call is made of, the same for every provider.

A `Request` is what an agent asks; a `Response` is what comes back, with usage, latency and cost.
Requests are plain data so the response cache can hash them and the store can record them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    """Calls the assistant made in this message."""
    tool_call_id: str | None = None
    """For a `tool` message: the call it answers."""


@dataclass(frozen=True)
class Tool:
    """A function the model may call, described by a JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Usage:
    """Tokens billed. `output_tokens` includes thinking tokens, as providers bill them, so totals,
    costs and seed-003's efficiency (§5.4, per-round tokens) count the thinking too."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    """Of `output_tokens`, those spent thinking, where the provider says (0 where it does not)."""

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
