"""Known key values, masked in every text a model call yields.

`scrub_secrets` (llm/errors.py) catches what merely looks like a credential in an error text. A
server may also echo the key in a normal 200 reply (`Authorization: Bearer <key>` in the content,
the reasoning or a tool call's arguments); that text would then be stored, cached, exported,
printed, rendered and quoted back to the model in a re-ask. The client knows the exact value it
sends, so the pipeline masks that value in every response before anything else sees it.

Masking the value masks its `Bearer <value>` form too. A value is also masked as JSON writes it
inside a string (escaped), for replies that carry JSON as text. Partial echoes are not caught.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from stratagem.llm.types import Response, ToolCall

REDACTED = "[redacted]"
MIN_SECRET = 8
"""Shorter values are not masked: placeholder keys for local servers ("EMPTY", "ollama") are
short, and masking them would corrupt ordinary replies; no real API key is that short."""


def _forms(secret: str) -> set[str]:
    """The value as sent, and as it reads inside a JSON string (escaped, `/` as `\\/` too)."""
    escaped = json.dumps(secret)[1:-1]
    return {secret, escaped, escaped.replace("/", "\\/")}


class SecretScrubber:
    """Masks a fixed set of values; a text without any of them is returned as it is (one `in`
    test per value, so a call without an echo costs a few substring scans)."""

    __slots__ = ("forms",)

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if len(secret) >= MIN_SECRET:
                forms |= _forms(secret)
        # Longest first, so an escaped form is masked whole before a shorter one inside it.
        self.forms: tuple[str, ...] = tuple(sorted(forms, key=len, reverse=True))

    def __bool__(self) -> bool:
        return bool(self.forms)

    def text(self, text: str) -> str:
        for form in self.forms:
            if form in text:
                text = text.replace(form, REDACTED)
        return text

    def _data(self, value: Any) -> Any:
        """JSON-like data with every string masked (keys of objects included)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self._data(k): self._data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._data(v) for v in value)
        return value

    def _call(self, call: ToolCall) -> ToolCall:
        masked = ToolCall(self.text(call.id), self.text(call.name), self._data(call.arguments))
        return call if masked == call else masked  # unchanged: the same object

    def response(self, response: Response) -> Response:
        """`response` with every value masked in its texts; the same object if none was there."""
        if not self.forms:
            return response
        text = self.text(response.text)
        reasoning = response.reasoning
        if reasoning is not None:
            reasoning = self.text(reasoning)
        model = self.text(response.model)
        calls = tuple(map(self._call, response.tool_calls)) if response.tool_calls else ()
        if (
            text is response.text
            and reasoning is response.reasoning
            and model is response.model
            and calls == response.tool_calls  # unchanged calls are the same objects
        ):
            return response
        return replace(response, text=text, reasoning=reasoning, model=model, tool_calls=calls)
