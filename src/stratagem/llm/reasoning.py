"""Thinking settings of reasoning models, named the same in every experiment file.

A thinking budget that a provider silently ignores scrambles rankings (a "thinking" variant that
never thought), so each setting is registered with the providers that honour it (and, for a
provider serving several vendors' models, the models that do), and a model entry naming one that
its model does not honour is a one-line configuration error, never ignored:

- `thinking_budget` (Anthropic's extended thinking, also Claude's on AWS Bedrock): tokens, or a
  percentage of each call's max_tokens such as "60%" (seed-003 §6: `budget_tokens = max_tokens
  // 5 * 3`);
- `reasoning_effort` (OpenAI's reasoning models, and servers that take the same field).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stratagem.llm.errors import PermanentError

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""The values of OpenAI's `reasoning_effort` (which ones a model takes depends on the model)."""
MIN_THINKING_TOKENS = 1024
"""Anthropic's smallest `budget_tokens`."""


@dataclass(frozen=True)
class ThinkingBudget:
    """A thinking budget: a fixed number of tokens, or a share of each call's max_tokens."""

    tokens: int | None = None
    percent: float | None = None

    def resolve(self, model: str, max_tokens: int) -> int:
        """The budget in tokens for a call of `max_tokens` output tokens (thinking included)."""
        if self.tokens is not None:
            budget = self.tokens
        else:
            assert self.percent is not None
            budget = math.floor(max_tokens * self.percent / 100)
        if budget < MIN_THINKING_TOKENS or budget >= max_tokens:
            raise PermanentError(
                f"{model}: thinking_budget gives {budget} tokens with max_tokens {max_tokens}; it "
                f"must be at least {MIN_THINKING_TOKENS} and below max_tokens (raise max_tokens)"
            )
        return budget

    def __str__(self) -> str:
        return f"{self.tokens}" if self.tokens is not None else f"{self.percent:g}%"


def thinking_budget(model: str, value: Any) -> ThinkingBudget:
    """Read `thinking_budget`: an integer >= 1024, or a string "N%" with 0 < N < 100."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= MIN_THINKING_TOKENS:
        return ThinkingBudget(tokens=value)
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            percent = float(value.strip()[:-1])
        except ValueError:
            percent = math.nan
        if 0 < percent < 100:
            return ThinkingBudget(percent=percent)
    raise PermanentError(
        f"{model}: params.thinking_budget must be a number of tokens >= {MIN_THINKING_TOKENS} "
        f'or a share of max_tokens such as "60%", got {value!r}'
    )


def reasoning_effort(model: str, value: Any) -> str:
    """Read `reasoning_effort`: one of `EFFORTS`."""
    if isinstance(value, str) and value in EFFORTS:
        return value
    raise PermanentError(
        f"{model}: params.reasoning_effort must be one of {', '.join(EFFORTS)}, got {value!r}"
    )


@dataclass(frozen=True)
class ModelRule:
    """Which of a provider's models honour a setting: those whose name `pattern` finds."""

    pattern: str
    which: str
    """The models it finds, in words, for the refusal."""


@dataclass(frozen=True)
class Setting:
    read: Callable[[str, Any], object]
    providers: tuple[str, ...]
    """Provider prefixes that honour the setting."""
    models: Mapping[str, ModelRule] = field(default_factory=dict)
    """Per provider that serves several vendors' models, the ones that honour it (absent: all)."""


BEDROCK_THINKING = ModelRule(
    r"anthropic\.claude-(?:3-7-sonnet|(?:sonnet|opus|haiku)-[4-9])",
    "Claude 3.7 Sonnet and Claude 4 or later; DeepSeek-R1 reasons without one",
)
"""Bedrock's models with Anthropic's extended thinking (seed-003 §6: the (T) variants of Claude 3.7
and 4 Sonnet), by model id, cross-region prefixes (`us.`) and ARNs included."""

SETTINGS: dict[str, Setting] = {
    "thinking_budget": Setting(
        thinking_budget, ("anthropic", "bedrock"), {"bedrock": BEDROCK_THINKING}
    ),
    "reasoning_effort": Setting(reasoning_effort, ("openai",)),
}


def support_setting(name: str, provider: str) -> None:
    """Declare that a (registered) provider honours a reasoning setting."""
    setting = SETTINGS[name]
    if provider not in setting.providers:
        SETTINGS[name] = Setting(setting.read, (*setting.providers, provider), setting.models)


def check_settings(model: str, params: Mapping[str, Any]) -> None:
    """Refuse a reasoning setting the model (or its provider) does not honour, or a malformed
    value."""
    provider, _, name_of_model = model.partition("/")
    for name, setting in SETTINGS.items():
        if name not in params:
            continue
        if provider not in setting.providers:
            raise PermanentError(
                f"{model}: params.{name} is not supported by the {provider} provider (only by "
                f"{', '.join(setting.providers)}); remove it rather than run without it"
            )
        rule = setting.models.get(provider)
        if rule is not None and not re.search(rule.pattern, name_of_model):
            raise PermanentError(
                f"{model}: params.{name} is not supported by this model (on {provider}, only by "
                f"{rule.which}); remove it rather than run without it"
            )
        setting.read(model, params[name])


ANSWER_PARAMS = ("thinking", *SETTINGS)
"""Params that change what a model answers, so the response cache must tell them apart."""
