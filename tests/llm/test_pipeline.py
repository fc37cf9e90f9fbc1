"""The call pipeline end to end, with doubles only: no network, no real waiting."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from stratagem.errors import StratagemError
from stratagem.llm.budget import Budget
from stratagem.llm.cache import ResponseCache
from stratagem.llm.errors import (
    BudgetExceeded,
    CallFailed,
    ModelRefused,
    PermanentError,
    TransientError,
)
from stratagem.llm.pipeline import CallContext, ModelClient, build_client
from stratagem.llm.pricing import Prices
from stratagem.llm.providers.scripted import ScriptedProvider
from stratagem.llm.ratelimit import Limits, RateLimiter
from stratagem.llm.registry import ModelConfig
from stratagem.llm.retry import RetryPolicy
from stratagem.llm.types import Message, Request, Response, Usage

MODEL = "scripted/paid"
PRICES = Prices({MODEL: [1000.0, 2000.0]})  # USD per million: 0.001 per input word, 0.002 out


def req(text: str = "choose now", n: int = 1, **kw: Any) -> Request:
    return Request(messages=(Message("user", text),), n=n, **kw)


@dataclass
class Recorded:
    rows: list[tuple[Any, ...]] = field(default_factory=list)

    def __call__(self, *row: Any) -> None:
        self.rows.append(row)


class Flaky:
    """Fails in a fixed pattern (an exception per call, None = answer), then answers."""

    def __init__(self, pattern: list[BaseException | None], model: str = MODEL) -> None:
        self.model = model
        self.pattern = pattern
        self.calls = 0
        self.closed = False

    async def complete(self, request: Request, sample: int) -> Response:
        outcome = self.pattern[min(self.calls, len(self.pattern) - 1)]
        self.calls += 1
        if outcome is not None:
            raise outcome
        return Response(f"answer {sample}", usage=Usage(2, 1), latency_s=0.1)

    async def aclose(self) -> None:
        self.closed = True


def client(
    provider: Any,
    clock: Any,
    *,
    cache: ResponseCache | None = None,
    limiter: RateLimiter | None = None,
    limits: Limits | None = None,
    budget: Budget | None = None,
    recorder: Any = None,
    retry: RetryPolicy | None = None,
    max_concurrency: int | None = None,
) -> ModelClient:
    return ModelClient(
        provider,
        cache=cache,
        limiter=limiter,
        limits=limits,
        retry=retry or RetryPolicy(),
        prices=PRICES,
        budget=budget,
        recorder=recorder,
        max_concurrency=max_concurrency,
        rng=random.Random(0),
        sleep=clock.sleep,
    )


def test_a_call_is_priced_charged_cached_and_recorded(clock: Any) -> None:
    cache, budget, rec = ResponseCache(), Budget(max_usd=10), Recorded()
    c = client(
        ScriptedProvider(MODEL, ["defect now"]), clock, cache=cache, budget=budget, recorder=rec
    )
    ctx = CallContext(episode_id="e1", player=0, round=3, purpose="decision")
    [response] = asyncio.run(c.generate(req(), ctx))
    assert response.text == "defect now" and not response.cached
    assert response.usage == Usage(2, 2)
    assert response.cost_usd == pytest.approx(0.002 + 0.004)
    assert budget.spent_usd == pytest.approx(0.006) and budget.spent_tokens == 4
    assert len(cache) == 1
    # The recorder also gets the request as the cache key encoded it, to keep without
    # encoding it again, and the key the answer was cached under (the store's `cache_key`).
    key, request_json = ResponseCache.key_and_request(MODEL, req(), 0)
    assert rec.rows == [(MODEL, ctx, req(), response, None, 0, request_json, key)]
    assert cache.get(key) is not None
    [again] = asyncio.run(c.generate(req(), ctx))  # answered by the cache, under the same key
    assert again.cached and rec.rows[1][7] == key


def test_a_paid_call_is_recorded_even_when_caching_its_answer_fails(
    tmp_path: Path, clock: Any
) -> None:
    """The disk refuses the cache's write: the call is still counted, and the failure is one
    line naming the cache file."""
    cache, rec = ResponseCache(tmp_path / "cache.db"), Recorded()
    cache._conn.execute("PRAGMA query_only = ON")  # every write now fails, as on a full disk
    c = client(ScriptedProvider(MODEL, ["defect now"]), clock, cache=cache, recorder=rec)
    with pytest.raises(StratagemError, match=r"cache\.db: cannot cache an answer"):
        asyncio.run(c.generate(req()))
    [(model, _, _, response, error, _, _, _)] = rec.rows
    assert (model, response.text, error) == (MODEL, "defect now", None)
    assert response.cost_usd > 0
    cache.close()


def test_exact_retry_count_with_a_fixed_failure_pattern(clock: Any) -> None:
    provider = Flaky([TransientError("429"), TransientError("503"), TimeoutError("slow"), None])
    rec = Recorded()
    c = client(provider, clock, recorder=rec, retry=RetryPolicy(jitter=False))
    [response] = asyncio.run(c.generate(req()))
    assert response.text == "answer 0"
    assert provider.calls == 4
    assert clock.sleeps == [0.5, 1.0, 2.0]
    assert rec.rows[0][5] == 3 and rec.rows[0][4] is None
    assert c.stats.retries == 3 and c.stats.provider_calls == 4


def test_retry_after_is_honoured(clock: Any) -> None:
    provider = Flaky([TransientError("429 rate limited", retry_after=7.0), None])
    c = client(provider, clock)
    asyncio.run(c.generate(req()))
    assert clock.sleeps == [7.0]
    assert clock.now == 1007.0


def test_exhausted_retries_raise_call_failed_and_record_the_error(clock: Any) -> None:
    provider = Flaky([TransientError("503 overloaded")])
    cache, rec = ResponseCache(), Recorded()
    c = client(provider, clock, cache=cache, recorder=rec)
    with pytest.raises(CallFailed, match="gave up after 6 attempts") as info:
        asyncio.run(c.generate(req()))
    assert info.value.retries == 5 and provider.calls == 6
    [(_, _, _, response, error, retries, _, _)] = rec.rows
    assert response is None and retries == 5
    assert "503 overloaded" in error
    assert len(cache) == 0  # nothing cached: the next run tries again


def test_permanent_errors_fail_at_once_with_the_retries_before(clock: Any) -> None:
    provider = Flaky([TransientError("429"), PermanentError("400 unknown model")])
    rec = Recorded()
    c = client(provider, clock, recorder=rec)
    with pytest.raises(PermanentError, match="400 unknown model"):
        asyncio.run(c.generate(req()))
    assert provider.calls == 2
    assert rec.rows[0][4] == "PermanentError: 400 unknown model" and rec.rows[0][5] == 1


def test_cache_replays_exactly_and_for_free(tmp_path: Path, clock: Any) -> None:
    path = tmp_path / "cache.sqlite"
    requests = [req("round 1"), req("round 2", temperature=0.7), req("vote", n=3)]

    def run_all(provider: Any, budget: Budget, limiter: RateLimiter, rec: Recorded) -> list[Any]:
        c = client(
            provider,
            clock,
            cache=ResponseCache(path),
            budget=budget,
            limiter=limiter,
            limits=Limits(requests_per_minute=100),
            recorder=rec,
        )

        async def main() -> list[Any]:
            return [await c.generate(r) for r in requests]

        return asyncio.run(main())

    first_provider = ScriptedProvider(MODEL, lambda r, s: f"{r.messages[0].content} #{s}")
    first_limiter, first_rec = RateLimiter(clock=clock, sleep=clock.sleep), Recorded()
    first = run_all(first_provider, Budget(), first_limiter, first_rec)
    assert len(first_provider.calls) == 5
    assert first_limiter.usage(MODEL, 60)[0] == 5

    second_provider = ScriptedProvider(MODEL, ["SHOULD NOT BE CALLED"])
    budget, limiter, rec = (
        Budget(max_usd=0.0),
        RateLimiter(clock=clock, sleep=clock.sleep),
        Recorded(),
    )
    second = run_all(second_provider, budget, limiter, rec)
    assert len(second_provider.calls) == 0  # re-running costs nothing ...
    assert budget.spent_usd == 0.0 and limiter.usage(MODEL, 60) == (0, 0)
    for a_list, b_list in zip(first, second, strict=True):
        for a, b in zip(a_list, b_list, strict=True):
            assert (a.text, a.usage, a.tool_calls, a.reasoning) == (
                b.text,
                b.usage,
                b.tool_calls,
                b.reasoning,
            )
            assert b.cached and b.cost_usd == 0.0 and not a.cached and a.cost_usd > 0
    assert [row[3].cached for row in rec.rows] == [True] * 5  # ... and is recorded as cached
    assert [row[3].text for row in rec.rows] == [row[3].text for row in first_rec.rows]


def test_more_samples_reuse_the_cached_ones(clock: Any) -> None:
    cache = ResponseCache()
    provider = ScriptedProvider(MODEL, lambda r, s: f"sample {s}")
    c = client(provider, clock, cache=cache)
    three = asyncio.run(c.generate(req(n=3)))
    five = asyncio.run(c.generate(req(n=5)))
    assert [r.text for r in three] == ["sample 0", "sample 1", "sample 2"]
    assert [r.text for r in five] == [f"sample {i}" for i in range(5)]
    assert [r.cached for r in five] == [True, True, True, False, False]
    assert len(provider.calls) == 5


def test_budget_stops_new_calls_but_cached_ones_replay(clock: Any) -> None:
    cache, rec = ResponseCache(), Recorded()
    budget = Budget(max_usd=0.005)
    provider = ScriptedProvider(MODEL, ["one two three"])  # 2 in + 3 out words = 0.008 USD
    c = client(provider, clock, cache=cache, budget=budget, recorder=rec)
    asyncio.run(c.generate(req("first question")))
    with pytest.raises(BudgetExceeded) as info:
        asyncio.run(c.generate(req("second question")))
    assert "max_usd" in str(info.value) and "$0.0080" in str(info.value)
    assert "cached answers still replay" in str(info.value)
    assert len(provider.calls) == 1
    [again] = asyncio.run(c.generate(req("first question")))
    assert again.cached and again.text == "one two three"
    assert len(rec.rows) == 2  # the refused call never happened, so it is not recorded


def test_budget_in_tokens_stops_calls(clock: Any) -> None:
    c = client(ScriptedProvider(MODEL, ["x"]), clock, budget=Budget(max_tokens=3))
    asyncio.run(c.generate(req("a b")))
    with pytest.raises(BudgetExceeded, match="token cap"):
        asyncio.run(c.generate(req("c d")))


def test_limits_are_enforced_and_cache_hits_do_not_count(clock: Any) -> None:
    cache = ResponseCache()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    c = client(
        ScriptedProvider(MODEL, ["ok"]),
        clock,
        cache=cache,
        limiter=limiter,
        limits=Limits(requests_per_minute=2),
    )

    async def main() -> None:
        for text in ["a", "b", "a", "b", "a", "c"]:
            await c.generate(req(text))

    asyncio.run(main())
    assert clock.sleeps == [60.0]  # only "c" needed a third slot in the minute
    assert limiter.usage(MODEL, 60) == (1, 2)


def test_limits_without_a_shared_limiter_still_hold(clock: Any) -> None:
    c = client(ScriptedProvider(MODEL, ["ok"]), clock, limits=Limits(requests_per_day=1))
    assert c.limiter is not None
    assert client(ScriptedProvider(MODEL, ["ok"]), clock, limits=Limits()).limiter is None


def test_max_concurrency_caps_calls_in_flight(clock: Any) -> None:
    in_flight, peak = 0, 0

    class Slow:
        model = MODEL

        async def complete(self, request: Request, sample: int) -> Response:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.001)
            in_flight -= 1
            return Response("ok")

        async def aclose(self) -> None:
            pass

    c = client(Slow(), clock, max_concurrency=2)

    async def main() -> None:
        await asyncio.gather(*(c.generate(req(f"q{i}")) for i in range(8)))

    asyncio.run(main())
    assert peak == 2


def test_one_failed_sample_does_not_lose_the_others(clock: Any) -> None:
    cache = ResponseCache()

    def reply(r: Request, s: int) -> str:
        if s == 1:
            raise PermanentError("sample 1 refused")
        return f"s{s}"

    class InFlight(ScriptedProvider):
        """All samples are sent before any answer comes back, as over a network."""

        async def complete(self, request: Request, sample: int) -> Response:
            await asyncio.sleep(0)
            return await super().complete(request, sample)

    c = client(InFlight(MODEL, reply), clock, cache=cache)
    with pytest.raises(PermanentError):
        asyncio.run(c.generate(req(n=3)))
    assert len(cache) == 2


def test_a_permanent_error_stops_every_later_call_to_the_model(clock: Any) -> None:
    """Issue 11 item 3: a bad key is sent once, not once per episode; the same error comes back."""

    def reply(r: Request, s: int) -> str:
        raise PermanentError(f"{MODEL}: HTTP 401 unauthorised: bad key (check PAID_KEY)")

    provider = ScriptedProvider(MODEL, reply)
    records: list[tuple[str | None, Response | None]] = []
    c = client(
        provider, clock, recorder=lambda m, ctx, rq, rs, err, n, js, key: records.append((err, rs))
    )

    async def main() -> list[BaseException]:
        first = await asyncio.gather(c.generate(req("a")), return_exceptions=True)
        later = await asyncio.gather(
            *(c.generate(req(f"q{i}")) for i in range(19)), return_exceptions=True
        )
        return [*first, *later]  # type: ignore[list-item]

    errors = asyncio.run(main())
    assert len(provider.calls) == 1 and c.stats.provider_calls == 1
    assert all(isinstance(e, ModelRefused) and e.model == MODEL for e in errors)
    assert {str(e) for e in errors} == {f"{MODEL}: HTTP 401 unauthorised: bad key (check PAID_KEY)"}
    assert c.refused is not None
    # The one request sent is on record; the refused ones sent nothing, so nothing is recorded.
    assert len(records) == 1 and records[0][0] and "HTTP 401" in records[0][0]


def test_cached_answers_still_replay_after_a_refusal(clock: Any) -> None:
    cache = ResponseCache()
    answers = iter(["fine"])

    def reply(r: Request, s: int) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise PermanentError(f"{MODEL}: HTTP 403 forbidden") from None

    c = client(ScriptedProvider(MODEL, reply), clock, cache=cache)
    asyncio.run(c.generate(req("a")))
    with pytest.raises(ModelRefused):
        asyncio.run(c.generate(req("b")))
    assert asyncio.run(c.generate(req("a")))[0].cached  # free, sends nothing
    with pytest.raises(ModelRefused, match="HTTP 403"):
        asyncio.run(c.generate(req("c")))
    assert c.stats.provider_calls == 2


SECRET = "sk-proj-THISISASECRETKEY0123456789"
OTHER_SECRET = "plainsecretvalue42xyz"


def test_keys_never_appear_in_errors_or_records(
    monkeypatch: pytest.MonkeyPatch, clock: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("MY_SERVICE_TOKEN", OTHER_SECRET)
    rec = Recorded()
    leaky = Flaky([TransientError(f"401 for key {SECRET} via {OTHER_SECRET}")])
    c = client(leaky, clock, recorder=rec, retry=RetryPolicy(max_attempts=2))
    with pytest.raises(CallFailed) as info:
        asyncio.run(c.generate(req()))
    assert SECRET not in str(info.value) and OTHER_SECRET not in str(info.value)
    assert "[redacted]" in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no chained leak

    for message in [
        f"bad request: Authorization: Bearer {OTHER_SECRET}",
        "invalid api_key=abcd1234efgh5678 given",
        f'{{"x-api-key": "{SECRET}"}}',
    ]:
        c = client(Flaky([PermanentError(message)]), clock, recorder=rec)
        with pytest.raises(PermanentError) as perm:
            asyncio.run(c.generate(req()))
        for text in (str(perm.value), rec.rows[-1][4]):
            assert (
                SECRET not in text and OTHER_SECRET not in text and "abcd1234efgh5678" not in text
            )
        assert perm.value.__cause__ is None and perm.value.__suppress_context__

    class Buggy(Flaky):
        async def complete(self, request: Request, sample: int) -> Response:
            raise RuntimeError(f"crashed with {SECRET}")

    with pytest.raises(CallFailed) as bug:
        asyncio.run(client(Buggy([None]), clock, recorder=rec).generate(req()))
    assert SECRET not in str(bug.value) and SECRET not in rec.rows[-1][4]
    assert all(SECRET not in str(row) for row in rec.rows)


def test_build_client_from_config(clock: Any) -> None:
    config = ModelConfig(
        model="scripted/first",
        prices={"input": 1_000_000.0, "output": 0.0},
        limits={"requests_per_minute": 5},
        max_concurrency=2,
    )
    budget, rec = Budget(), Recorded()
    c = build_client(config, cache=ResponseCache(), budget=budget, recorder=rec, prices=Prices())
    assert c.model == "scripted/first"
    assert c.limits == Limits(requests_per_minute=5) and c.limiter is not None
    [r] = asyncio.run(c.generate(req("pick one", choices=("cooperate", "defect"))))
    assert r.text == "cooperate" and r.cost_usd == pytest.approx(2.0)
    assert budget.spent_usd == pytest.approx(2.0)
    asyncio.run(c.aclose())
    assert isinstance(c.provider, ScriptedProvider) and c.provider.closed


def test_zero_samples_is_refused(clock: Any) -> None:
    c = client(ScriptedProvider(MODEL), clock)
    with pytest.raises(PermanentError, match="at least 1 sample"):
        asyncio.run(c.generate(req(n=0)))
