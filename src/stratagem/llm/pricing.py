"""What a call costs: USD per million input and output tokens, per model, overridable in config.

Prices change and differ by contract, so the built-in table is only a default; a model missing
from it costs 0 but is flagged (`known`), so reports can say "cost unknown" instead of "free".

The providers' prompt caches bill parts of the input at their own rates (`Usage`): OpenAI reads
every repeated prompt prefix of 1,024 tokens or more from its cache at a discount
(`cached_tokens`); Anthropic writes what comes before a `cache_control` breakpoint at 1.25 times
the input rate and reads it back at 0.1 times. A call costs
`uncached * input + read * cached_input + written * cache_write + output * output`, and what the
cache saved is the whole input at the input rate less that input part.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from stratagem.errors import StratagemError
from stratagem.llm.types import Usage

CACHE_WRITE_FACTOR = 1.25
"""A cache write's rate over the input rate, when a price does not give it: Anthropic's 5-minute
cache, the one stratagem marks (OpenAI reports no writes)."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens. `cached_input` None: the input rate (no discount assumed, so the
    spend shown is never below what is paid); `cache_write` None: `CACHE_WRITE_FACTOR` x input."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def __post_init__(self) -> None:
        rates = (self.input, self.output, self.cached_input or 0.0, self.cache_write or 0.0)
        if any(rate < 0 for rate in rates):
            raise ValueError(f"prices must not be negative, got {self}")

    @property
    def read_rate(self) -> float:
        return self.input if self.cached_input is None else self.cached_input

    @property
    def write_rate(self) -> float:
        return self.input * CACHE_WRITE_FACTOR if self.cache_write is None else self.cache_write


PriceLike = Price | Mapping[str, float] | Sequence[float]


def _anthropic(input: float, output: float) -> Price:
    """Anthropic bills a 5-minute cache write at 1.25 x input and a cache read at 0.1 x input."""
    return Price(input, output, round(input * 0.1, 6), round(input * CACHE_WRITE_FACTOR, 6))


# As published by the providers in late 2025 (standard tier, no batch discount), read 2025-11 from
# platform.openai.com/docs/pricing ("Cached input") and docs.anthropic.com's prompt-caching page
# ("5m cache writes" 1.25x, "cache hits" 0.1x), cross-checked against third-party price tables.
# Cached input: 50% of input for GPT-4o, o1 and o3-mini; 25% for GPT-4.1, o3 and o4-mini; 10% for
# GPT-5; models without a cached rate are billed in full. Override them in config (`price:`) when
# they change or your contract differs. Keys are exact model strings or glob patterns; the most
# specific match wins.
DEFAULT_PRICES: Mapping[str, Price] = {
    # OpenAI
    "openai/gpt-4o-mini*": Price(0.15, 0.60, 0.075),
    "openai/gpt-4o": Price(2.50, 10.00, 1.25),
    "openai/gpt-4o-2024-*": Price(2.50, 10.00, 1.25),
    "openai/gpt-4o-2024-05-13": Price(5.00, 15.00, 5.00),
    "openai/gpt-4.1*": Price(2.00, 8.00, 0.50),
    "openai/gpt-4.1-mini*": Price(0.40, 1.60, 0.10),
    "openai/gpt-4.1-nano*": Price(0.10, 0.40, 0.025),
    "openai/gpt-5*": Price(1.25, 10.00, 0.125),
    "openai/gpt-5-mini*": Price(0.25, 2.00, 0.025),
    "openai/gpt-5-nano*": Price(0.05, 0.40, 0.005),
    "openai/o3*": Price(2.00, 8.00, 0.50),
    "openai/o3-mini*": Price(1.10, 4.40, 0.55),
    "openai/o4-mini*": Price(1.10, 4.40, 0.275),
    "openai/gpt-4-turbo*": Price(10.00, 30.00, 10.00),
    "openai/gpt-3.5-turbo*": Price(0.50, 1.50, 0.50),
    # Anthropic
    "anthropic/claude-3-haiku*": _anthropic(0.25, 1.25),
    "anthropic/claude-3-5-haiku*": _anthropic(0.80, 4.00),
    "anthropic/claude-haiku-4-5*": _anthropic(1.00, 5.00),
    "anthropic/claude-3-5-sonnet*": _anthropic(3.00, 15.00),
    "anthropic/claude-3-7-sonnet*": _anthropic(3.00, 15.00),
    "anthropic/claude-sonnet-4*": _anthropic(3.00, 15.00),
    "anthropic/claude-3-opus*": _anthropic(15.00, 75.00),
    "anthropic/claude-opus-4*": _anthropic(15.00, 75.00),
    "anthropic/claude-opus-4-5*": _anthropic(5.00, 25.00),
    # Claude on AWS Bedrock (seed-003 §6's ids, cross-region `us.` profiles included): Bedrock's
    # on-demand list prices for these models are Anthropic's own, cache rates included, and
    # cross-region inference costs nothing more (aws.amazon.com/bedrock/pricing). Bedrock's other
    # models (Llama, Mistral, DeepSeek) are priced per region and left unpriced: give `price:`.
    "bedrock/*anthropic.claude-3-haiku-*": _anthropic(0.25, 1.25),
    "bedrock/*anthropic.claude-3-5-haiku-*": _anthropic(0.80, 4.00),
    "bedrock/*anthropic.claude-3-5-sonnet-*": _anthropic(3.00, 15.00),
    "bedrock/*anthropic.claude-3-7-sonnet-*": _anthropic(3.00, 15.00),
    "bedrock/*anthropic.claude-sonnet-4-2*": _anthropic(3.00, 15.00),
    "bedrock/*anthropic.claude-3-opus-*": _anthropic(15.00, 75.00),
    "bedrock/*anthropic.claude-opus-4-2*": _anthropic(15.00, 75.00),
    "bedrock/*anthropic.claude-opus-4-1-*": _anthropic(15.00, 75.00),
    # Mistral, under whichever prefix serves it (its API is OpenAI-compatible)
    "*/ministral-8b*": Price(0.10, 0.10),
    "*/ministral-3b*": Price(0.04, 0.04),
    # Free: offline models and the test double
    "local/*": Price(0.0, 0.0),
    "scripted/*": Price(0.0, 0.0),
}

PRICE_KEYS = ("input", "output", "cached_input", "cache_write")


def to_price(model: str, value: Any) -> Price:
    """Read a price from config: `Price`, `{input: x, output: y}` (optionally `cached_input`,
    `cache_write`) or `[x, y]` (USD per million)."""
    try:
        if isinstance(value, Price):
            return value
        if isinstance(value, Mapping):
            if not {"input", "output"} <= set(value) <= set(PRICE_KEYS):
                raise ValueError(
                    "needs the keys 'input' and 'output', and may have 'cached_input' and "
                    "'cache_write'"
                )
            rates = {k: None if value.get(k) is None else float(value[k]) for k in PRICE_KEYS}
            return Price(**rates)  # type: ignore[arg-type]
        if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
            return Price(float(value[0]), float(value[1]))
        raise ValueError(f"got {value!r}")
    except (TypeError, ValueError) as exc:
        raise StratagemError(
            f"price for '{model}': expected {{input: USD per million tokens, output: USD per "
            f"million tokens}} (cached_input, cache_write optional) or [input, output] ({exc})"
        ) from None


def _lookup(table: Mapping[str, Price], model: str) -> Price | None:
    """The exact entry if there is one, else the most specific matching pattern."""
    exact = table.get(model)
    if exact is None:
        matches = [p for p in table if fnmatchcase(model, p)]
        exact = table[max(matches, key=_specificity)] if matches else None
    return exact


def _with_cache_rates(price: Price, base: Price | None) -> Price:
    """An override that leaves out the cache rates keeps the discount (and write premium) the
    table it overrides had for that model, applied to its own input rate: a contract price for
    GPT-4o still reads its cache at half price. Without such an entry the `Price` defaults hold."""
    if base is None or base.input <= 0:
        return price
    cached, write = price.cached_input, price.cache_write
    if cached is None and base.cached_input is not None:
        cached = price.input * base.cached_input / base.input
    if write is None and base.cache_write is not None:
        write = price.input * base.cache_write / base.input
    return Price(price.input, price.output, cached, write)


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
            table[model] = _with_cache_rates(to_price(model, value), _lookup(defaults, model))
        self._table = table
        self._found: dict[str, Price | None] = {}
        """`price` answers by model: the table never changes, and matching every pattern on
        every call cost more than the rest of the cost accounting."""

    def with_overrides(self, overrides: Mapping[str, PriceLike]) -> Prices:
        """A copy with more overrides on top (e.g. one model's config)."""
        return Prices(overrides, defaults=self._table)

    def price(self, model: str) -> Price | None:
        """The exact entry if there is one, else the most specific matching pattern."""
        if model not in self._found:
            self._found[model] = _lookup(self._table, model)
        return self._found[model]

    def known(self, model: str) -> bool:
        return self.price(model) is not None

    def cost(self, model: str, usage: Usage) -> float:
        """USD for one call, each part of its input at its own rate; 0 for a model of unknown
        price (check `known`)."""
        price = self.price(model)
        if price is None:
            return 0.0
        return (
            usage.uncached_input_tokens * price.input
            + usage.cached_input_tokens * price.read_rate
            + usage.cache_write_tokens * price.write_rate
            + usage.output_tokens * price.output
        ) / 1e6

    def saving(self, model: str, usage: Usage) -> float:
        """USD the prompt cache saved on one call: its whole input at the input rate less what
        its input was billed (negative when writes cost more than reads saved)."""
        price = self.price(model)
        if price is None:
            return 0.0
        return (
            usage.cached_input_tokens * (price.input - price.read_rate)
            + usage.cache_write_tokens * (price.input - price.write_rate)
        ) / 1e6

    def as_dict(self) -> dict[str, Price]:
        return dict(self._table)


@dataclass
class CacheUse:
    """The provider's prompt cache over a set of paid calls: the share of their input it served
    and what it saved, as the run summary, `status` and the report say it."""

    input_tokens: int = 0
    cached_tokens: int = 0
    written_tokens: int = 0
    saved_usd: float = 0.0

    @classmethod
    def from_totals(cls, totals: Mapping[str, Any]) -> CacheUse:
        """From a store's `call_totals`."""
        return cls(
            int(totals["paid_input_tokens"]),
            int(totals["cached_input_tokens"]),
            int(totals["cache_write_tokens"]),
            float(totals["saved_usd"]),
        )

    def add(self, usage: Usage, saved_usd: float) -> None:
        self.input_tokens += usage.input_tokens
        self.cached_tokens += usage.cached_input_tokens
        self.written_tokens += usage.cache_write_tokens
        self.saved_usd += saved_usd

    @property
    def share(self) -> float:
        """Of the input, the part read from the cache."""
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0

    def summary(self) -> str:
        """E.g. "81% of input read from it, saved $0.2345"; "" when the provider reported no
        cache use (nothing to say)."""
        if not (self.cached_tokens or self.written_tokens):
            return ""
        parts = [f"{self.share:.0%} of input read from it"]
        if self.written_tokens:
            parts.append(f"{self.written_tokens / max(self.input_tokens, 1):.0%} written to it")
        if self.saved_usd >= 0:
            parts.append(f"saved ${self.saved_usd:.4f}")
        else:
            parts.append(f"cost ${-self.saved_usd:.4f} more than full-rate input")
        return ", ".join(parts)

    def text(self) -> str:
        """`summary` named: "prompt cache: ..."; "" when there is none."""
        summary = self.summary()
        return f"prompt cache: {summary}" if summary else ""

    def aside(self) -> str:
        """`text` in parentheses after a cost, with its leading space; "" when there is none."""
        text = self.text()
        return f" ({text})" if text else ""
