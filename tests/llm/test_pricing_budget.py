"""Prices (defaults, patterns, overrides, unknown models) and budget caps."""

from __future__ import annotations

import pytest

from stratagem.errors import StratagemError
from stratagem.llm.budget import Budget
from stratagem.llm.errors import BudgetExceeded
from stratagem.llm.pricing import DEFAULT_PRICES, Price, Prices
from stratagem.llm.types import Usage

MILLION = Usage(1_000_000, 1_000_000)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("openai/gpt-4o-mini", 0.15 + 0.60),
        ("openai/gpt-4o-mini-2024-07-18", 0.15 + 0.60),
        ("openai/gpt-4o", 2.50 + 10.00),
        ("openai/gpt-4o-2024-11-20", 2.50 + 10.00),
        ("openai/gpt-4o-2024-05-13", 5.00 + 15.00),
        ("openai/gpt-4.1-mini", 0.40 + 1.60),
        ("openai/o3-mini", 1.10 + 4.40),
        ("anthropic/claude-3-5-haiku-latest", 0.80 + 4.00),
        ("anthropic/claude-3-7-sonnet-20250219", 3.00 + 15.00),
        ("anthropic/claude-sonnet-4-20250514", 3.00 + 15.00),
        ("openai/ministral-8b-latest", 0.10 + 0.10),
        ("local/gemma-3-270m", 0.0),
        ("local/models/x.gguf", 0.0),
        ("scripted/echo", 0.0),
    ],
)
def test_default_prices(model: str, expected: float) -> None:
    prices = Prices()
    assert prices.known(model)
    assert prices.cost(model, MILLION) == pytest.approx(expected)


def test_cost_is_per_million_tokens_in_and_out() -> None:
    cost = Prices().cost("openai/gpt-4o-mini", Usage(2000, 500))
    assert cost == pytest.approx((2000 * 0.15 + 500 * 0.60) / 1e6)


def test_unknown_models_cost_nothing_but_are_flagged() -> None:
    prices = Prices()
    assert not prices.known("openai/some-future-model")
    assert prices.price("openai/some-future-model") is None
    assert prices.cost("openai/some-future-model", MILLION) == 0.0


def test_overrides_from_config_in_three_shapes() -> None:
    prices = Prices(
        {
            "openai/gpt-4o-mini": {"input": 1.0, "output": 2.0},
            "openai/my-finetune": [3, 4],
            "vllm/*": Price(0.5, 0.5),
        }
    )
    assert prices.cost("openai/gpt-4o-mini", MILLION) == pytest.approx(3.0)
    assert prices.cost("openai/my-finetune", MILLION) == pytest.approx(7.0)
    assert prices.cost("vllm/llama", MILLION) == pytest.approx(1.0)
    more = prices.with_overrides({"openai/gpt-4o": [0, 0]})
    assert more.cost("openai/gpt-4o", MILLION) == 0.0
    assert more.cost("openai/my-finetune", MILLION) == pytest.approx(7.0)
    assert Prices().cost("openai/gpt-4o-mini", MILLION) == pytest.approx(0.75)  # untouched


@pytest.mark.parametrize("bad", [{"input": 1.0}, [1.0], "cheap", {"input": -1, "output": 1}])
def test_bad_override_is_a_clear_error(bad: object) -> None:
    with pytest.raises(StratagemError, match="price for 'openai/x'"):
        Prices({"openai/x": bad})  # type: ignore[dict-item]


def test_default_table_is_free_for_offline_models_only() -> None:
    free = {k for k, p in DEFAULT_PRICES.items() if p.input == p.output == 0}
    assert free == {"local/*", "scripted/*"}


def test_budget_in_usd() -> None:
    budget = Budget(max_usd=0.01)
    budget.check()
    budget.charge(0.004, 100)
    budget.check()
    budget.charge(0.007, 100)
    with pytest.raises(BudgetExceeded) as info:
        budget.check()
    message = str(info.value)
    assert "$0.0110" in message and "$0.0100" in message and "max_usd" in message
    assert budget.remaining_usd == 0.0
    assert isinstance(info.value, StratagemError)  # the CLI shows it on one line


def test_budget_in_tokens() -> None:
    budget = Budget(max_tokens=1000)
    budget.charge(0.0, 999)
    budget.check()
    budget.charge(0.0, 2)
    with pytest.raises(BudgetExceeded, match=r"1,001 of the 1,000 token cap \(max_tokens\)"):
        budget.check()
    assert budget.remaining_tokens == 0


def test_zero_budget_allows_replay_only_and_resume_counts_what_was_spent() -> None:
    with pytest.raises(BudgetExceeded):
        Budget(max_usd=0.0).check()
    with pytest.raises(BudgetExceeded):
        Budget(max_usd=1.0, spent_usd=1.0).check()
    Budget().check()  # no caps
    with pytest.raises(ValueError):
        Budget(max_usd=-1.0)
