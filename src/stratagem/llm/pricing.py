"""What a call costs: USD per million input and output tokens, per model, overridable in config.

Prices change and differ by contract, so the built-in table is only a default; a model missing
from it costs 0 but is flagged (`known`), so reports can say "cost unknown" instead of "free".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from stratagem.errors import StratagemError
from stratagem.llm.types import Usage


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float

    def __post_init__(self) -> None:
        if self.input < 0 or self.output < 0:
            raise ValueError(f"prices must not be negative, got {self.input}/{self.output}")


PriceLike = Price | Mapping[str, float] | Sequence[float]

# As published by the providers in late 2025 (standard tier, no batch or cached-input discounts).
# Override them in config (`prices:`) when they change or your contract differs.
# Keys are exact model strings or glob patterns; the most specific match wins.
DEFAULT_PRICES: Mapping[str, Price] = {
    # OpenAI
    "openai/gpt-4o-mini*": Price(0.15, 0.60),
    "openai/gpt-4o": Price(2.50, 10.00),
    "openai/gpt-4o-2024-*": Price(2.50, 10.00),
    "openai/gpt-4o-2024-05-13": Price(5.00, 15.00),
    "openai/gpt-4.1*": Price(2.00, 8.00),
    "openai/gpt-4.1-mini*": Price(0.40, 1.60),
    "openai/gpt-4.1-nano*": Price(0.10, 0.40),
    "openai/gpt-5*": Price(1.25, 10.00),
    "openai/gpt-5-mini*": Price(0.25, 2.00),
    "openai/gpt-5-nano*": Price(0.05, 0.40),
    "openai/o3*": Price(2.00, 8.00),
    "openai/o3-mini*": Price(1.10, 4.40),
    "openai/o4-mini*": Price(1.10, 4.40),
    "openai/gpt-4-turbo*": Price(10.00, 30.00),
    "openai/gpt-3.5-turbo*": Price(0.50, 1.50),
    # Anthropic
    "anthropic/claude-3-haiku*": Price(0.25, 1.25),
    "anthropic/claude-3-5-haiku*": Price(0.80, 4.00),
    "anthropic/claude-haiku-4-5*": Price(1.00, 5.00),
    "anthropic/claude-3-5-sonnet*": Price(3.00, 15.00),
    "anthropic/claude-3-7-sonnet*": Price(3.00, 15.00),
    "anthropic/claude-sonnet-4*": Price(3.00, 15.00),
    "anthropic/claude-3-opus*": Price(15.00, 75.00),
    "anthropic/claude-opus-4*": Price(15.00, 75.00),
    "anthropic/claude-opus-4-5*": Price(5.00, 25.00),
    # Mistral, under whichever prefix serves it (its API is OpenAI-compatible)
    "*/ministral-8b*": Price(0.10, 0.10),
    "*/ministral-3b*": Price(0.04, 0.04),
    # Free: offline models and the test double
    "local/*": Price(0.0, 0.0),
    "scripted/*": Price(0.0, 0.0),
}


def to_price(model: str, value: Any) -> Price:
    """Read a price from config: `Price`, `{input: x, output: y}` or `[x, y]` (USD per million)."""
    try:
        if isinstance(value, Price):
            return value
        if isinstance(value, Mapping):
            if set(value) != {"input", "output"}:
                raise ValueError("needs exactly the keys 'input' and 'output'")
            return Price(float(value["input"]), float(value["output"]))
        if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
            return Price(float(value[0]), float(value[1]))
        raise ValueError(f"got {value!r}")
    except (TypeError, ValueError) as exc:
        raise StratagemError(
            f"price for '{model}': expected {{input: USD per million tokens, output: USD per "
            f"million tokens}} or [input, output] ({exc})"
        ) from None


def _specificity(pattern: str) -> tuple[int, int]:
    literal = sum(ch not in "*?[]" for ch in pattern)
    return (0 if any(ch in "*?[" for ch in pattern) else 1, literal)


class Prices:
    """The price table in use: the defaults with config overrides on top."""

    def __init__(
        self,
        overrides: Mapping[str, PriceLike] | None = None,
        *,
        defaults: Mapping[str, Price] = DEFAULT_PRICES,
    ) -> None:
        table = dict(defaults)
        for model, value in (overrides or {}).items():
            table[model] = to_price(model, value)
        self._table = table
        self._found: dict[str, Price | None] = {}
        """`price` answers by model: the table never changes, and matching every pattern on
        every call cost more than the rest of the cost accounting."""

    def with_overrides(self, overrides: Mapping[str, PriceLike]) -> Prices:
        """A copy with more overrides on top (e.g. one model's config)."""
        return Prices(overrides, defaults=self._table)

    def price(self, model: str) -> Price | None:
        """The exact entry if there is one, else the most specific matching pattern."""
        if model in self._found:
            return self._found[model]
        exact = self._table.get(model)
        if exact is None:
            matches = [p for p in self._table if fnmatchcase(model, p)]
            exact = self._table[max(matches, key=_specificity)] if matches else None
        self._found[model] = exact
        return exact

    def known(self, model: str) -> bool:
        return self.price(model) is not None

    def cost(self, model: str, usage: Usage) -> float:
        """USD for one call; 0 for a model of unknown price (check `known`)."""
        price = self.price(model)
        if price is None:
            return 0.0
        return (usage.input_tokens * price.input + usage.output_tokens * price.output) / 1e6

    def as_dict(self) -> dict[str, Price]:
        return dict(self._table)
