"""A model entry's `endpoints:`: the servers of one OpenAI-compatible model used as a pool."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from stratagem.experiments.limits import MAX_CONCURRENCY


class EndpointEntry(BaseModel):
    """One server of a model's pool (issue 26): calls go to the pool, not one `base_url`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    """The server's OpenAI-compatible URL, e.g. http://gpu-3:8000/v1."""
    max_concurrency: int | None = Field(None, ge=1, le=MAX_CONCURRENCY)
    """Calls in flight on this server at once; none of its own by default."""
    api_key_env: str | None = None
    """Its key's environment variable; the model's `api_key_env` by default."""

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        scheme, sep, rest = value.partition("://")
        if scheme not in ("http", "https") or not sep or not rest.split("/")[0]:
            raise ValueError(f"'{value}' is not an http(s) URL, e.g. http://gpu-3:8000/v1")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError("must be the NAME of an environment variable holding the key")
        return value
