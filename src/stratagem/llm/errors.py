"""What a provider raises, so the pipeline knows whether to retry."""

from __future__ import annotations

import os
import re

from stratagem.errors import StratagemError


class TransientError(Exception):
    """Worth retrying: rate limited (429), server error (5xx), timeout, connection lost."""

    def __init__(
        self, message: str, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        """Seconds the server asked us to wait (Retry-After), if it said."""
        self.status = status
        """The HTTP status that caused it, if any (an endpoint pool treats 429 apart)."""


class ConnectionRefused(TransientError):
    """Nothing listens at the server's address: a wrong host or port, or a server not started.

    Still worth retrying for one call (a server restarting); an endpoint pool whose every server
    refuses its health check stops at once instead of waiting for servers that may never come.
    """


class PermanentError(StratagemError):
    """Not worth retrying: bad request, unknown model, missing API key."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status that caused it, if any (an endpoint pool takes a server out on
        401, 403 and 404, not on a bad request)."""


class ModelRefused(PermanentError):
    """The provider refused a call for good (bad key, no access, unknown model, invalid request).

    Sending the same kind of call again would be refused again (and a bad key would be tried by
    every episode), so the client remembers it: later calls to `model` fail at once, sending
    nothing.
    """

    def __init__(self, message: str, model: str) -> None:
        super().__init__(message)
        self.model = model


class BudgetExceeded(StratagemError):
    """A configured budget (USD or tokens) is spent; no new calls are made."""


class CallFailed(StratagemError):
    """A model call still failed after every retry; the run stops cleanly instead of guessing."""

    def __init__(self, message: str, retries: int) -> None:
        super().__init__(message)
        self.retries = retries
        """Retries made before giving up (attempts minus one)."""


_KEY_PATTERNS = (
    # OpenAI / Anthropic style keys (sk-..., sk-proj-..., sk-ant-...).
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    # Authorization headers and key=value / key: value pairs echoed by HTTP libraries.
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]{6,}"),
    re.compile(
        r"(?i)\b(api[_-]?key|x-api-key|authorization|access[_-]?token|secret)"
        r"(\"?\s*[:=]\s*\"?)[^\s\"',;}]{6,}"
    ),
)
_SECRET_ENV = re.compile(r"(?i)(key|token|secret|password)")


def scrub_secrets(text: str) -> str:
    """Remove anything that looks like a credential, so error texts can be shown and stored.

    Provider libraries sometimes echo headers or URLs with the key in them; besides the usual key
    shapes, the literal value of every credential-like environment variable is masked.
    """
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_ENV.search(name) and value in text:
            text = text.replace(value, "[redacted]")
    text = _KEY_PATTERNS[0].sub("[redacted]", text)
    text = _KEY_PATTERNS[1].sub(lambda m: f"{m.group(1)} [redacted]", text)
    text = _KEY_PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]", text)
    return text
