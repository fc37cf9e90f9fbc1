"""What a provider raises, so the pipeline knows whether to retry."""

from __future__ import annotations

from stratagem.errors import StratagemError


class TransientError(Exception):
    """Worth retrying: rate limited (429), server error (5xx), timeout, connection lost."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        """Seconds the server asked us to wait (Retry-After), if it said."""


class PermanentError(StratagemError):
    """Not worth retrying: bad request, unknown model, missing API key."""


class BudgetExceeded(StratagemError):
    """A configured budget (USD or tokens) is spent; no new calls are made."""
