"""Model strings (`provider/model`), per-model configuration, and the providers behind them.

Provider modules are imported only when a model of theirs is used, so running the scripted or local
model never needs the OpenAI or Anthropic client libraries installed. A provider module exposes
`create(config: ModelConfig) -> Provider`, and may expose checks that refuse, without creating
the provider (no model loaded, nothing sent), what `create` would: `check(name: str)` the model
name (`check_model`), `check_config(config)` the rest of the configuration, a file it names
included (`check_config`), and `ready(config)` the environment, a missing API key (`check_ready`).
So a dry run refuses what the run would. Every provider, stratagem's own included, is
registered by its prefix (`register_provider`, reached as `stratagem.register.provider`), as a
module's name or a factory: a plugin's prefix is `<namespace>:<prefix>`, so its model strings
read `highcard:echo/some-model`, and the plugin is imported the first time one is used.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from stratagem.errors import StratagemError, unknown_name
from stratagem.llm.errors import PermanentError
from stratagem.llm.pricing import Price
from stratagem.llm.provider import Provider
from stratagem.llm.ratelimit import Limits
from stratagem.llm.reasoning import check_settings
from stratagem.llm.server_urls import check_url, first_repeat, server_key
from stratagem.plugins import SEPARATOR, Registry, find, loading, unavailable

ProviderFactory = Callable[["ModelConfig"], Provider]

_PREFIX = re.compile(r"[a-z][a-z0-9_\-]*")
_PROVIDER = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_\-.]*" + SEPARATOR + ")?" + _PREFIX.pattern)
"""A model string's provider: a prefix, after a plugin's namespace for a plugin's."""
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_BUILTIN_MODULES: dict[str, str] = {
    "openai": "stratagem.llm.providers.openai",
    "anthropic": "stratagem.llm.providers.anthropic",
    "bedrock": "stratagem.llm.providers.bedrock",
    "local": "stratagem.llm.providers.local",
    "scripted": "stratagem.llm.providers.scripted",
}
"""stratagem's own providers, registered below as their modules (imported on first use)."""
_EXTRAS: dict[str, str] = {"bedrock": "bedrock"}
"""Providers whose client library is an optional extra of the package, by the extra's name."""
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")

ProviderSource = ProviderFactory | str
"""A factory, or the name of a provider module (`create`, and optional checks) imported on
first use."""

_FACTORIES: Registry[ProviderSource] = Registry("provider")
"""Registered providers by prefix: stratagem's own and in-process ones as given, plugins'
`<namespace>:<prefix>`."""


@dataclass(frozen=True)
class ModelName:
    """A parsed model string: `local/path/to/x.gguf` is provider `local`, name `path/to/x.gguf`."""

    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.name}"


def parse_model(model: str) -> ModelName:
    """Split `provider/model` at the first slash; the rest (slashes included) is the model name.
    A plugin's provider is `<namespace>:<prefix>`."""
    provider, sep, name = model.partition("/")
    if not sep or not name or not _PROVIDER.fullmatch(provider):
        raise StratagemError(
            f"model '{model}': expected 'provider/model', e.g. 'openai/gpt-4o-mini', "
            "'anthropic/claude-3-5-haiku-latest', 'local/gemma-3-270m' or 'scripted/echo'"
        )
    return ModelName(provider, name)


class EndpointConfig(BaseModel):
    """One server of a model's endpoint pool (`stratagem.llm.pool`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    base_url: str
    max_concurrency: int | None = Field(default=None, gt=0)
    """Calls in flight on this server at once (None: no cap of its own)."""
    limits: Limits = Limits()
    """This server's own quotas, on top of the model's `limits`."""
    api_key_env: str | None = None
    """Its key's environment variable; None: the model's."""

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        return check_url(value)


class ModelConfig(BaseModel):
    """Everything about one model that is not the prompt: endpoint, key, prices, quotas, timeouts.

    The API key itself is never part of the config, only the name of the environment variable
    holding it; input values are hidden from validation errors so a key pasted by mistake is
    never echoed.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    model: str
    base_url: str | None = None
    """For OpenAI-compatible servers (vLLM, llama.cpp server, Ollama, Mistral...)."""
    endpoints: tuple[EndpointConfig, ...] | None = None
    """Several OpenAI-compatible servers of this model, used as one pool instead of `base_url`."""
    api_key_env: str | None = None
    """Name of the environment variable with the API key; None: the provider's usual one."""
    prices: Price | None = None
    """USD per million input/output tokens, overriding the default table."""
    limits: Limits = Limits()
    max_concurrency: int | None = Field(default=None, gt=0)
    """Calls of this model in flight at once (None: no cap)."""
    timeout_s: float = Field(default=60.0, gt=0)
    params: dict[str, Any] = Field(default_factory=dict)
    """Extra provider parameters (e.g. top_p, reasoning effort, n_ctx for local models)."""
    path: str | None = None
    """The GGUF file of a `local/<name>` model other than the packaged one: named here, never in
    the model string."""

    @field_validator("model")
    @classmethod
    def _check_model(cls, value: str) -> str:
        try:
            parse_model(value)
        except StratagemError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        return None if value is None else check_url(value)

    @model_validator(mode="after")
    def _one_server_once(self) -> ModelConfig:
        """A pool that names one server twice would send it twice its share (and route by
        duplicate names); the experiment file says where, this guards the Python API."""
        urls = [endpoint.base_url for endpoint in self.endpoints or ()]
        repeat = first_repeat(urls)
        if repeat is not None:
            first, again = repeat
            key = server_key(urls[again])
            raise ValueError(f"endpoints {first + 1} and {again + 1} name one server: {key}")
        return self

    @field_validator("api_key_env")
    @classmethod
    def _check_env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.fullmatch(value):
            raise ValueError(
                "must be the NAME of an environment variable holding the key (e.g. "
                "OPENAI_API_KEY), never the key itself"
            )
        return value

    @property
    def name(self) -> ModelName:
        return parse_model(self.model)


def read_api_key(env_var: str) -> str:
    """The key from the environment, or a `PermanentError` naming the variable (never a value)."""
    value = os.environ.get(env_var, "").strip()
    if not value:
        raise PermanentError(
            f"the environment variable {env_var} is not set; export your API key in it"
        )
    return value


def register_provider(prefix: str, provider: ProviderSource) -> str:
    """Make `prefix/...` model strings use `provider`: a factory `(config) -> Provider`, or a
    provider module's name (`create(config)`, and the checks `check`, `check_config` and
    `ready` if it has them, which a dry run asks), imported the first time a model of its is
    used. Returns the full prefix, `<namespace>:prefix` while a plugin loads. Registered
    in-process (no plugin loading), a prefix is taken as given and may override a built-in
    provider (a test's fake); a plugin's never does."""
    plugin = loading()
    short = prefix
    if plugin is not None and prefix.startswith(plugin.namespace + SEPARATOR):
        short = prefix[len(plugin.namespace) + len(SEPARATOR) :]
    if not _PREFIX.fullmatch(short):
        raise StratagemError(
            f"provider prefix {prefix!r}: lowercase letters, digits, - or _, starting with a letter"
        )
    if isinstance(provider, str) and not _MODULE.fullmatch(provider):
        raise StratagemError(f"provider '{prefix}': {provider!r} is not a module's dotted name")
    if not isinstance(provider, str) and not callable(provider):
        raise StratagemError(f"provider '{prefix}': a factory or a module's name, got {provider!r}")
    if plugin is None and prefix in _FACTORIES:
        _FACTORIES.replace(prefix, provider)
        return prefix
    return _FACTORIES.add(prefix, provider)


for _prefix, _module_name in _BUILTIN_MODULES.items():
    register_provider(_prefix, _module_name)


def provider_names() -> list[str]:
    """The built-in prefixes and those registered so far (plugins loaded included)."""
    return sorted(_FACTORIES)


def _source(prefix: str) -> ProviderSource:
    """What serves `prefix`, loading its plugin for `<namespace>:<prefix>`; an unknown prefix,
    or a plugin that failed to load, is its one-line error."""
    source = _FACTORIES.get(prefix)
    if source is not None:
        return source
    failed = unavailable("model provider", prefix)
    if failed is not None:
        raise failed
    error = unknown_name("model provider", prefix, provider_names())
    namespace = prefix.partition(SEPARATOR)[0]
    if SEPARATOR in prefix and find(namespace) is None:
        error = StratagemError(f"{error}; '{namespace}' is no plugin: install it or name it "
                               "(--plugin, plugins:)")  # fmt: skip
    raise error


def _module(prefix: str) -> Any:
    """The provider module serving `prefix`, imported now; None for a factory."""
    source = _source(prefix)
    if not isinstance(source, str):
        return None
    try:
        return importlib.import_module(source)
    except ImportError as exc:
        extra = _EXTRAS.get(prefix)
        hint = (
            f"install it with pip install 'stratagem[{extra}]'"
            if extra
            else "is its optional dependency installed?"
        )
        raise StratagemError(
            f"model provider '{prefix}' cannot be loaded ({exc}); {hint}"
        ) from None


def create_provider(config: ModelConfig) -> Provider:
    """The provider for `config.model`, importing its module on first use.

    Reasoning settings are checked first, for every provider (custom ones included): one its
    provider does not honour is refused rather than silently ignored.
    """
    prefix = config.name.provider
    check_settings(config.model, config.params)
    source = _source(prefix)
    factory = source if not isinstance(source, str) else _module(prefix).create
    if config.endpoints:
        factory = importlib.import_module("stratagem.llm.pool").create
    provider: Provider = factory(config)
    return provider


def check_model(model: str) -> None:
    """Refuse, without creating its provider (no model loaded, no network), a model string
    `create_provider` would refuse: an unknown provider, or what the provider module's own
    `check(name)` finds (a local model named by a path). So a dry run refuses what the run
    would."""
    name = parse_model(model)
    check: Callable[[str], None] | None = getattr(_module(name.provider), "check", None)
    if check is not None:
        check(name.name)


def check_config(config: ModelConfig) -> None:
    """`check_model`, the reasoning settings, and what the provider module's `check_config` finds
    in the rest of `config` (unknown params, a local model's GGUF file): what the file says,
    whatever the environment."""
    check_model(config.model)
    check_settings(config.model, config.params)
    _hook(config, "check_config")


def check_ready(config: ModelConfig) -> None:
    """What the provider module's `ready` finds in the environment (a missing API key, named by
    its variable, never a value), for a pool each server's: the run's start and `--dry-run` both
    ask, before anything is stored or sent."""
    _hook(config, "ready")


def _hook(config: ModelConfig, hook: str) -> None:
    """Call the provider module's `hook(config)`, if it has one (a pool's module for a config
    with endpoints; none for a registered factory)."""
    if config.endpoints:
        _source(config.name.provider)  # an unknown prefix is refused as for one server
        module: Any = importlib.import_module("stratagem.llm.pool")
    else:
        module = _module(config.name.provider)
    check: Callable[[ModelConfig], None] | None = getattr(module, hook, None)
    if check is not None:
        check(config)
