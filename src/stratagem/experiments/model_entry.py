"""An experiment file's model entry: `provider/model`, how to reach it (a URL or a pool of
servers, a key's variable, a local GGUF file), its caps, quotas and prices. Checked when the file
loads, so a dry run refuses what the run would."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from stratagem.errors import StratagemError
from stratagem.experiments.endpoints import EndpointEntry, check_pool
from stratagem.experiments.limits import MAX_CONCURRENCY
from stratagem.experiments.quotas import LimitsConfig
from stratagem.experiments.strict import Strict
from stratagem.llm.pool_options import pool_options
from stratagem.llm.registry import ModelConfig, check_config, check_model
from stratagem.llm.server_urls import check_url


class PriceConfig(Strict):
    """USD per million tokens. Left out, `cached_input` (input the provider's prompt cache read)
    is billed at the built-in table's discount for the model applied to `input`, or at `input`
    for a model the table does not know; `cache_write` at 1.25 x `input` (`llm.pricing`)."""

    input: float = Field(ge=0)
    """Input tokens, at the full rate."""
    output: float = Field(ge=0)
    """Output tokens, thinking tokens included."""
    cached_input: float | None = Field(None, ge=0)
    """Input tokens the provider's prompt cache read."""
    cache_write: float | None = Field(None, ge=0)
    """Input tokens written to the provider's prompt cache."""


class ModelEntry(Strict):
    """One model: `provider/model` plus how to reach it."""

    id: str | None = None
    """A short name used in episode specs and tables; the model string by default."""
    model: str
    """`provider/model`: `openai/...`, `anthropic/...`, `bedrock/...`, `local/gemma-3-270m` (the
    embedded default), `local/<name>` with `path`, or `scripted/...` (tests of logic only)."""
    path: str | None = None
    """For a `local/<name>` model of your own: its GGUF file (relative to the working directory).
    A model string is a name, never a path."""
    base_url: str | None = None
    """An OpenAI-compatible server's URL for an `openai/` model (vLLM, llama.cpp, Ollama...):
    http(s), a host, a port from 1 to 65535, no `user:password@` (a key goes in `api_key_env`)."""
    endpoints: list[EndpointEntry] | None = None
    """Several servers of this `openai/` model used as one pool, instead of `base_url`: each
    episode keeps to one while it is healthy, calls move on when one fails (`llm.pool`).
    `max_concurrency` below still caps the whole pool: raise it to the servers' total. Each
    server once (two spellings of one are refused), 1,024 at most."""
    endpoints_file: str | None = None
    """Instead of `endpoints`: a file of the pool's URLs, one a line (blank lines and # comments
    ignored), as a cluster job writes it; read when the run starts, relative to the cwd. The
    URLs are checked as `endpoints`' are; an error names the line (and a duplicate's first)."""
    api_key_env: str | None = None
    """The environment variable holding the API key (keys never go in files)."""
    max_concurrency: int = Field(4, ge=1, le=MAX_CONCURRENCY)
    """This model's calls in flight at once: 4 suits hosted rate limits and one-slot local
    servers; a fast endpoint takes 64-256."""
    timeout_s: float = Field(60.0, gt=0)
    """Seconds a call may take before it is abandoned and retried."""
    latency_s: float | None = Field(None, gt=0, le=3600)
    """The expected seconds per call, for the plan's wall-time estimate (`--dry-run`); the
    median of this directory's paid calls of the model replaces it once there are some."""
    limits: LimitsConfig = LimitsConfig()
    """Rate limits (below)."""
    price: PriceConfig | None = None
    """Prices (below), over the built-in table of the providers' list prices."""
    params: dict[str, Any] = {}
    """Extra provider parameters (e.g. n_ctx for local models, structured for OpenAI servers)."""

    @field_validator("model")
    @classmethod
    def _provider_model(cls, value: str) -> str:
        if "/" not in value or not value.split("/", 1)[0] or not value.split("/", 1)[1]:
            raise ValueError("must be 'provider/model', e.g. openai/gpt-4o-mini")
        return value

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        return None if value is None else check_url(value)

    @model_validator(mode="after")
    def _endpoints(self) -> ModelEntry:
        """`endpoints` (or `endpoints_file`) replaces `base_url`, holds one server at least, and
        is for openai/ only."""
        if self.endpoints is not None and self.endpoints_file is not None:
            raise ValueError("give endpoints or endpoints_file, not both")
        if self.endpoints is None and self.endpoints_file is None:
            return self
        if self.base_url is not None:
            pool = "endpoints" if self.endpoints is not None else "endpoints_file"
            raise ValueError(f"give base_url or {pool}, not both")
        if self.endpoints is not None and not self.endpoints:
            raise ValueError("endpoints is empty; list one server at least")
        if self.endpoints is not None:
            check_pool(self.endpoints)
        if not self.model.startswith("openai/"):
            raise ValueError("endpoints are for OpenAI-compatible (openai/...) models only")
        return self

    @model_validator(mode="after")
    def _reasoning_settings(self) -> ModelEntry:
        """A thinking budget or reasoning effort its provider does not honour is refused when the
        file loads (so `--dry-run` says so too), not ignored; so are an unknown provider or
        scripted model, a local model named by a path, a `path` that is no GGUF file and an
        unknown param, which the run would refuse."""
        try:
            check_model(self.model)
        except StratagemError as exc:
            raise ValueError(f"model: {exc}") from None
        if self.path is not None and not self.model.startswith("local/"):
            raise ValueError("path: a GGUF file, for local/ models only")
        try:
            params = dict(self.params)
            if self.endpoints is not None or self.endpoints_file is not None:
                _, params = pool_options(self.model, params)  # the pool's own; the rest per server
            check_config(ModelConfig(model=self.model, path=self.path, params=params))
        except StratagemError as exc:
            raise ValueError(str(exc)) from None
        return self

    @property
    def name(self) -> str:
        return self.id or self.model
