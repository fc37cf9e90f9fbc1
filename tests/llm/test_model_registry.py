"""Model strings, model config, lazy provider loading, and the scripted test double."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from stratagem.errors import StratagemError
from stratagem.llm import registry
from stratagem.llm.errors import PermanentError
from stratagem.llm.pricing import Price
from stratagem.llm.providers import scripted
from stratagem.llm.providers.scripted import ScriptedProvider, register_script
from stratagem.llm.ratelimit import Limits
from stratagem.llm.registry import (
    ModelConfig,
    ModelName,
    create_provider,
    parse_model,
    read_api_key,
    register_provider,
)
from stratagem.llm.types import Message, Request, Response, Usage
from stratagem.plugins import Registry

REQUEST = Request(messages=(Message("user", "hello"),))


@pytest.mark.parametrize(
    ("model", "provider", "name"),
    [
        ("openai/gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("anthropic/claude-3-5-haiku-latest", "anthropic", "claude-3-5-haiku-latest"),
        ("local/gemma-3-270m", "local", "gemma-3-270m"),
        ("local/path/to/x.gguf", "local", "path/to/x.gguf"),
        ("local//abs/x.gguf", "local", "/abs/x.gguf"),
        ("scripted/always:cooperate", "scripted", "always:cooperate"),
    ],
)
def test_parse_model(model: str, provider: str, name: str) -> None:
    parsed = parse_model(model)
    assert parsed == ModelName(provider, name)
    assert str(parsed) == model


@pytest.mark.parametrize("model", ["gpt-4o", "openai/", "/gpt-4o", "OpenAI/gpt-4o", ""])
def test_bad_model_strings(model: str) -> None:
    with pytest.raises(StratagemError, match="expected 'provider/model'"):
        parse_model(model)


def test_model_config_parses_nested_values() -> None:
    config = ModelConfig.model_validate(
        {
            "model": "openai/gpt-4o-mini",
            "base_url": "http://localhost:8000/v1",
            "api_key_env": "MY_KEY",
            "prices": {"input": 0.1, "output": 0.2},
            "limits": {"requests_per_minute": 60, "tokens_per_day": 100000},
            "max_concurrency": 4,
            "timeout_s": 30,
            "params": {"top_p": 0.9},
        }
    )
    assert config.prices == Price(0.1, 0.2)
    assert config.limits == Limits(requests_per_minute=60, tokens_per_day=100000)
    assert config.name == ModelName("openai", "gpt-4o-mini")
    assert ModelConfig(model="scripted/echo").limits.unlimited


@pytest.mark.parametrize(
    "fields",
    [
        {"model": "gpt-4o"},
        {"model": "openai/x", "limits": {"requests_per_minute": -1}},
        {"model": "openai/x", "max_concurrency": 0},
        {"model": "openai/x", "temperature": 0.5},
        {"model": "openai/x", "prices": {"input": 1}},
    ],
)
def test_model_config_rejects_bad_values(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ModelConfig.model_validate(fields)


def test_a_key_pasted_into_the_config_is_refused_and_never_echoed() -> None:
    key = "sk-proj-abcdefghijklmnop1234567890"
    with pytest.raises(ValidationError) as info:
        ModelConfig(model="openai/gpt-4o", api_key_env=key)
    assert key not in str(info.value)
    assert "NAME of an environment variable" in str(info.value)
    with pytest.raises(ValidationError) as info:
        ModelConfig.model_validate({"model": "openai/gpt-4o", "api_key": key})
    assert key not in str(info.value)


def test_read_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATAGEM_TEST_KEY", "  secret-value-123  ")
    assert read_api_key("STRATAGEM_TEST_KEY") == "secret-value-123"
    monkeypatch.delenv("STRATAGEM_TEST_KEY")
    with pytest.raises(PermanentError, match="STRATAGEM_TEST_KEY is not set"):
        read_api_key("STRATAGEM_TEST_KEY")


def test_unknown_provider_suggests_the_closest() -> None:
    with pytest.raises(StratagemError, match="unknown model provider 'opnai': did you mean openai"):
        create_provider(ModelConfig(model="opnai/gpt-4o"))


def test_registered_factory_and_lazy_import(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_FACTORIES", Registry("provider"))
    assert (
        register_provider("fake", lambda config: ScriptedProvider(config.model, ["hi"])) == "fake"
    )
    provider = create_provider(ModelConfig(model="fake/one"))
    assert provider.model == "fake/one"
    assert "fake" in registry.provider_names()
    register_provider("fake", lambda config: ScriptedProvider(config.model, ["again"]))  # a fake
    assert asyncio.run(
        create_provider(ModelConfig(model="fake/one")).complete(REQUEST, 0)
    ).text == ("again")
    with pytest.raises(StratagemError, match="provider prefix 'Bad Prefix'"):
        register_provider("Bad Prefix", lambda config: ScriptedProvider())

    # A provider module, as stratagem's own are registered: imported when first used.
    register_provider("ghost", "stratagem.llm.providers.no_such")
    with pytest.raises(StratagemError, match="model provider 'ghost' cannot be loaded"):
        create_provider(ModelConfig(model="ghost/x"))
    assert register_provider("echoing", "stratagem.llm.providers.scripted") == "echoing"
    assert create_provider(ModelConfig(model="echoing/echo")).model == "echoing/echo"
    with pytest.raises(StratagemError, match="not a module's dotted name"):
        register_provider("bad", "no dots here")


# -- the scripted provider ------------------------------------------------------------------------


def ask(
    model: str, text: str = "hello there", choices: tuple[str, ...] = (), sample: int = 0
) -> str:
    provider = create_provider(ModelConfig(model=model))
    req = Request(messages=(Message("system", "sys"), Message("user", text)), choices=choices)
    return asyncio.run(provider.complete(req, sample)).text


PD = ("cooperate", "defect")


def test_builtin_scripts() -> None:
    assert ask("scripted/echo", "say this") == "say this"
    assert ask("scripted/first", choices=PD) == "cooperate"
    assert ask("scripted/last", choices=PD) == "defect"
    assert ask("scripted/choice:1", choices=("a", "b", "c")) == "b"
    assert ask("scripted/choice:9", choices=("a", "b", "c")) == "c"
    assert ask("scripted/first") == ""
    assert ask("scripted/cooperate", choices=("defect", "cooperate")) == "cooperate"
    assert ask("scripted/defect", choices=("C", "D")) == "D"
    assert ask("scripted/defect", choices=("stag", "hare")) == "hare"
    assert ask("scripted/cooperate") == "cooperate"
    assert ask("scripted/always:I choose J") == "I choose J"


def test_random_script_is_a_function_of_the_request() -> None:
    labels = tuple("abcdefgh")
    draws = [ask("scripted/random:7", choices=labels, sample=s) for s in range(20)]
    assert set(draws) <= set(labels) and len(set(draws)) > 1
    assert draws == [ask("scripted/random:7", choices=labels, sample=s) for s in range(20)]
    other = [ask("scripted/random:8", choices=labels, sample=s) for s in range(20)]
    assert other != draws


def test_cycle_and_usage_in_words() -> None:
    provider = create_provider(ModelConfig(model="scripted/cycle:one two,three"))
    req = Request(messages=(Message("user", "four words right here"),))

    async def main() -> list[Response]:
        return [await provider.complete(req, 0) for _ in range(3)]

    replies = asyncio.run(main())
    assert [r.text for r in replies] == ["one two", "three", "one two"]
    assert replies[0].usage == Usage(4, 2)
    assert replies[0].model == "scripted/cycle:one two,three"


def test_registered_script_and_scripted_responses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scripted, "_REGISTERED", {})
    register_script("tooluser", [Response("", reasoning="think"), "done"])
    provider = create_provider(ModelConfig(model="scripted/tooluser"))
    assert isinstance(provider, ScriptedProvider)
    req = Request(messages=(Message("user", "go"),))
    first = asyncio.run(provider.complete(req, 0))
    assert first.reasoning == "think" and first.model == "scripted/tooluser"
    assert first.usage == Usage(1, 0)
    assert asyncio.run(provider.complete(req, 0)).text == "done"
    assert len(provider.calls) == 2


def test_unknown_script() -> None:
    with pytest.raises(StratagemError, match="unknown scripted model 'ehco': did you mean echo"):
        create_provider(ModelConfig(model="scripted/ehco"))
    with pytest.raises(StratagemError, match="choice:x"):
        create_provider(ModelConfig(model="scripted/choice:x"))
