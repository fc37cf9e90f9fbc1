"""Issue 23 item 4: the providers' prompt caches, read from their replies, billed at their own
rates, charged to the budget as billed, and marked on Anthropic requests, against the fake servers
on 127.0.0.1 through the real SDK and HTTP clients."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.fake_anthropic import INPUT_TOKENS, OUTPUT_TOKENS, FakeAnthropicServer
from support.fake_openai import COMPLETION_TOKENS, FakeOpenAIServer

from stratagem.errors import StratagemError
from stratagem.llm.budget import Budget
from stratagem.llm.cache import ResponseCache
from stratagem.llm.errors import BudgetExceeded
from stratagem.llm.pipeline import ModelClient, build_client
from stratagem.llm.pricing import CacheUse, Price, Prices
from stratagem.llm.providers.anthropic import MAX_BREAKPOINTS
from stratagem.llm.registry import ModelConfig
from stratagem.llm.types import Message, Request, Response, ToolCall, Usage

KEY_ENV = "STRATAGEM_PROMPT_CACHE_TEST_KEY"
MINI = "openai/gpt-4o-mini"
SONNET = "anthropic/claude-sonnet-4-20250514"
PROMPT, CACHED = 2000, 1536
ASK = Request((Message("system", "Rules."), Message("user", "Your move?")), max_tokens=20)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-prompt-cache-test-0123456789")


def client(model: str, url: str, **kwargs: Any) -> ModelClient:
    return build_client(ModelConfig(model=model, base_url=url, api_key_env=KEY_ENV), **kwargs)


def generate(model_client: ModelClient, *requests: Request) -> list[Response]:
    async def go() -> list[Response]:
        try:
            return [(await model_client.generate(r))[0] for r in requests]
        finally:
            await model_client.aclose()

    return asyncio.run(go())


# --- reading and billing ------------------------------------------------------------------------


def test_openai_cached_tokens_are_billed_at_the_cached_rate_and_charged_so() -> None:
    budget = Budget(max_usd=1.0)
    with FakeOpenAIServer(["ok"], prompt_tokens=PROMPT, cached_tokens=CACHED) as server:
        [response] = generate(client(MINI, server.base_url, budget=budget), ASK)
    usage = response.usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens) == (
        PROMPT,
        CACHED,
        0,
    )
    # gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per million tokens.
    paid = ((PROMPT - CACHED) * 0.15 + CACHED * 0.075 + COMPLETION_TOKENS * 0.60) / 1e6
    assert response.cost_usd == pytest.approx(paid)
    assert response.saved_usd == pytest.approx(CACHED * 0.075 / 1e6)
    assert budget.spent_usd == pytest.approx(paid)  # the budget is charged what was billed


def test_anthropic_cache_reads_and_writes_are_billed_at_their_rates() -> None:
    budget = Budget(max_usd=1.0)
    with FakeAnthropicServer(cache_read=3000, cache_write=500) as server:
        [response] = generate(client(SONNET, server.base_url, budget=budget), ASK)
    usage = response.usage
    assert usage.input_tokens == INPUT_TOKENS + 3000 + 500  # the whole prompt, as before
    assert (usage.cached_input_tokens, usage.cache_write_tokens) == (3000, 500)
    assert usage.uncached_input_tokens == INPUT_TOKENS
    # Sonnet 4: $3 input, $0.30 cache read, $3.75 cache write, $15 output per million tokens.
    paid = (INPUT_TOKENS * 3 + 3000 * 0.30 + 500 * 3.75 + OUTPUT_TOKENS * 15) / 1e6
    assert response.cost_usd == pytest.approx(paid)
    assert response.saved_usd == pytest.approx((3000 * 2.70 - 500 * 0.75) / 1e6)
    assert budget.spent_usd == pytest.approx(paid)


def test_a_budget_is_not_spent_early_by_cached_input_priced_in_full() -> None:
    """A cap of 2.5 calls at the billed price: priced at the full input rate, 2 calls would
    already pass it and the third would be refused."""
    per_call = ((PROMPT - CACHED) * 0.15 + CACHED * 0.075 + COMPLETION_TOKENS * 0.60) / 1e6
    budget = Budget(max_usd=2.5 * per_call)
    with FakeOpenAIServer(["ok"], prompt_tokens=PROMPT, cached_tokens=CACHED) as server:
        answered = generate(client(MINI, server.base_url, budget=budget), ASK, ASK, ASK)
        assert len(answered) == 3 and budget.spent_usd == pytest.approx(3 * per_call)
        with pytest.raises(BudgetExceeded):
            generate(client(MINI, server.base_url, budget=budget), ASK)
        assert len(server.requests) == 3


def test_cached_tokens_never_exceed_the_prompt() -> None:
    with FakeOpenAIServer(["ok"], prompt_tokens=10, cached_tokens=50) as server:
        [response] = generate(client(MINI, server.base_url), ASK)
    assert response.usage.cached_input_tokens == 10 and response.usage.uncached_input_tokens == 0


@pytest.mark.parametrize(
    ("model", "input", "cached", "write"),
    [
        ("openai/gpt-4o-mini-2024-07-18", 0.15, 0.075, None),
        ("openai/gpt-4o-2024-08-06", 2.50, 1.25, None),
        ("openai/gpt-4.1", 2.00, 0.50, None),
        ("openai/gpt-4.1-mini", 0.40, 0.10, None),
        ("openai/gpt-5-2025-08-07", 1.25, 0.125, None),
        ("openai/o3-2025-04-16", 2.00, 0.50, None),
        ("openai/o4-mini-2025-04-16", 1.10, 0.275, None),
        ("openai/gpt-4o-2024-05-13", 5.00, 5.00, None),  # no cached rate: billed in full
        (SONNET, 3.00, 0.30, 3.75),
        ("anthropic/claude-3-5-haiku-latest", 0.80, 0.08, 1.00),
        ("anthropic/claude-opus-4-5", 5.00, 0.50, 6.25),
    ],
)
def test_the_table_has_the_providers_cached_rates(
    model: str, input: float, cached: float, write: float | None
) -> None:
    prices = Prices()
    million = 1_000_000
    assert prices.cost(model, Usage(million, 0)) == pytest.approx(input)
    assert prices.cost(model, Usage(million, 0, cached_input_tokens=million)) == pytest.approx(
        cached
    )
    if write is not None:
        written = Usage(million, 0, cache_write_tokens=million)
        assert prices.cost(model, written) == pytest.approx(write)


def test_price_overrides_take_cache_rates_or_sensible_defaults() -> None:
    usage = Usage(1000, 100, cached_input_tokens=600, cache_write_tokens=200)
    prices = Prices(
        {
            "openai/mine": {"input": 1, "output": 2, "cached_input": 0.1, "cache_write": 1.25},
            "openai/plain": {"input": 1, "output": 2},  # a model the table does not know
            MINI: {"input": 1, "output": 2},  # keeps the table's 50% discount for it
            SONNET: [4, 20],  # keeps Anthropic's 0.1x read, 1.25x write
        }
    )
    assert prices.cost("openai/mine", usage) == pytest.approx(
        (200 * 1 + 600 * 0.1 + 200 * 1.25 + 100 * 2) / 1e6
    )
    # Defaults: a cache read at the input rate (no discount assumed), a write at 1.25 x input.
    assert prices.price("openai/plain") == Price(1, 2)
    assert prices.cost("openai/plain", usage) == pytest.approx((800 * 1 + 200 * 1.25 + 200) / 1e6)
    assert prices.price(MINI) == Price(1, 2, 0.5)
    sonnet = prices.price(SONNET)
    assert sonnet is not None and (sonnet.input, sonnet.output) == (4, 20)
    assert (sonnet.read_rate, sonnet.write_rate) == (pytest.approx(0.4), pytest.approx(5.0))
    assert prices.saving(SONNET, usage) == pytest.approx((600 * 3.6 - 200 * 1.0) / 1e6)


@pytest.mark.parametrize(
    "bad",
    [{"input": 1, "output": 2, "cached": 0.1}, {"input": 1, "output": 2, "cached_input": -1}],
)
def test_a_bad_cache_rate_is_a_clear_error(bad: object) -> None:
    with pytest.raises(StratagemError, match="price for 'openai/x'"):
        Prices({"openai/x": bad})  # type: ignore[dict-item]


def test_the_cache_use_says_its_share_and_saving() -> None:
    use = CacheUse()
    assert use.text() == "" and use.aside() == ""  # nothing reported: nothing said
    use.add(Usage(1000, 10, cached_input_tokens=810), 0.25)
    assert use.aside() == " (prompt cache: 81% of input read from it, saved $0.2500)"
    use.add(Usage(1000, 10, cache_write_tokens=1000), -0.5)
    assert use.text() == (
        "prompt cache: 40% of input read from it, 50% written to it, "
        "cost $0.2500 more than full-rate input"
    )


# --- Anthropic's breakpoints --------------------------------------------------------------------


def marks(body: dict[str, Any]) -> list[str]:
    """Where a request body carries a cache breakpoint: "system", or "<turn>:<block type>"."""
    found = []
    system = body.get("system")
    if isinstance(system, list):
        found += ["system" for block in system if "cache_control" in block]
    for i, turn in enumerate(body["messages"]):
        for block in turn["content"]:
            if "cache_control" in block:
                assert block["cache_control"] == {"type": "ephemeral"}
                found.append(f"{i}:{block['type']}")
    return found


def test_anthropic_requests_mark_the_stable_prefix_of_a_growing_conversation() -> None:
    call = ToolCall("toolu_1", "look", {"n": 1})
    conversation = (
        Message("system", "Rules of the game."),
        Message("user", "Turn 1. Your move?"),
        Message("assistant", "I offer coal."),
        Message("user", "Rejected. Turn 2. Your move?"),
    )
    with_tools = (
        *conversation,
        Message("assistant", "Let me look.", (call,)),
        Message("tool", "coal: fuel", tool_call_id="toolu_1"),
    )
    no_system = conversation[1:]
    cache = ResponseCache()
    with FakeAnthropicServer() as server:
        requests = [ASK, Request(conversation), Request(with_tools), Request(no_system)]
        generate(client(SONNET, server.base_url, cache=cache), *requests, Request(conversation))
        bodies = server.requests
    assert len(bodies) == 4  # the last request was answered by the response cache
    # A first request: only its system prompt (a write that nothing would read costs 1.25x).
    assert marks(bodies[0]) == ["system"]
    assert bodies[0]["system"] == [
        {"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}}
    ]
    # A conversation: the system prompt, the last turn before the new one, the new turn.
    assert marks(bodies[1]) == ["system", "1:text", "2:text"]
    assert marks(bodies[2]) == ["system", "3:tool_use", "4:tool_result"]
    assert marks(bodies[3]) == ["1:text", "2:text"]
    assert all(len(marks(body)) <= MAX_BREAKPOINTS for body in bodies)  # the API's limit
    # The marks are the provider's: the response cache's keys are those of unmarked requests.
    key, request_json = cache.key_and_request(SONNET, Request(conversation), 0)
    assert "cache_control" not in key + request_json and cache.get(key) is not None
