"""A `limits:` block: requests and tokens per minute, hour and day (`llm.ratelimit.Limits`).

Its own module because both a model entry (`config.ModelEntry.limits`) and each server of its
pool (`endpoints.EndpointEntry.limits`) take one.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LimitsConfig(BaseModel):
    """A model's rate limits, shared by the run's concurrent tasks and by other processes on the
    same results directory; none by default."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    requests_per_minute: int | None = Field(None, ge=1)
    """Requests per minute."""
    tokens_per_minute: int | None = Field(None, ge=1)
    """Tokens (prompt and reply) per minute."""
    requests_per_hour: int | None = Field(None, ge=1)
    """Requests per hour."""
    tokens_per_hour: int | None = Field(None, ge=1)
    """Tokens (prompt and reply) per hour."""
    requests_per_day: int | None = Field(None, ge=1)
    """Requests per day."""
    tokens_per_day: int | None = Field(None, ge=1)
    """Tokens (prompt and reply) per day."""
