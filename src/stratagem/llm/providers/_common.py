"""What providers share: retryable statuses, Retry-After, key redaction, params checking, and
reading a constrained answer from free text."""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from stratagem.llm.errors import PermanentError, TransientError, scrub_secrets
from stratagem.llm.surrogates import escape_surrogates
from stratagem.llm.types import Message

TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})
"""Besides every 5xx: timeout, conflict, too early, rate limited (what the vendors' SDKs retry)."""

_KEY_LIKE = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{6,}")


def is_transient_status(status: int) -> bool:
    return status >= 500 or status in TRANSIENT_STATUSES


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def redact(text: str, secret: str | None) -> str:
    """Remove the API key, and anything shaped like one, from a message we are about to raise."""
    if secret:
        text = text.replace(secret, "[redacted]")
    return scrub_secrets(_KEY_LIKE.sub("[redacted]", text))


_SDK_PREFIX = re.compile(r"^Error code: \d{3} - ")
_REASONS = {400: "invalid request", 401: "unauthorised", 403: "forbidden", 404: "not found"}
_MAX_MESSAGE = 300
"""Characters of a server's error message kept: enough to diagnose, short enough for one line."""


def status_error(
    model: str,
    status: int,
    message: str,
    headers: Mapping[str, str] | None,
    secret: str | None,
    key_env: str | None = None,
) -> TransientError | PermanentError:
    """The error to raise for an HTTP error status from a model API, as one line."""
    message = escape_surrogates(message)  # a server's text, stored and shown as any other
    message = _SDK_PREFIX.sub("", " ".join(message.split()))  # the status is said once, below
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + "..."
    reason = _REASONS.get(status)
    head = f"HTTP {status} {reason}" if reason else f"HTTP {status}"
    text = redact(f"{model}: {head}: {message}", secret)
    if is_transient_status(status):
        return TransientError(text, retry_after(headers), status)
    hint = {
        401: f" (check the API key in {key_env or 'the environment variable'})",
        403: " (the key lacks access to this model or feature)",
        404: " (unknown model or endpoint; check the model name and base_url)",
    }.get(status, "")
    return PermanentError(text + hint, status)


def check_params(model: str, params: Mapping[str, Any], known: Iterable[str]) -> dict[str, Any]:
    """The provider params as a dict, or a `PermanentError` naming any unknown one."""
    allowed = sorted(known)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise PermanentError(
            f"{model}: unknown params {', '.join(unknown)} (known: {', '.join(allowed)})"
        )
    return dict(params)


def match_label(text: str, labels: tuple[str, ...]) -> str | None:
    """The label a free-text reply names exactly (ignoring case, spaces, quotes, final dot)."""
    cleaned = text.strip().strip("\"'`*.").strip().casefold()
    return next((label for label in labels if label.casefold() == cleaned), None)


def strip_fences(text: str) -> str:
    """JSON from a reply that may wrap it in a ``` code fence."""
    body = text.strip()
    if body.startswith("```") and body.endswith("```"):
        body = body[3:-3]
        body = body.removeprefix("json")
    return body.strip()


def system_and_turns(
    messages: tuple[Message, ...], blocks: Callable[[Message], list[dict[str, Any]]]
) -> tuple[str, list[dict[str, Any]]]:
    """(system text, alternating turns) for APIs that take the system prompt apart and content
    blocks per turn (Anthropic, Bedrock's Converse): tool results ride in user turns, a message
    with no blocks is dropped and consecutive turns of one role merge. `blocks` renders one
    message in the API's block shape."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        rendered = blocks(message)
        if not rendered:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(rendered)
        else:
            turns.append({"role": role, "content": rendered})
    return system, turns
