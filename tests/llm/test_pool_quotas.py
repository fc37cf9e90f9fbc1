"""Issue 26, per-server `limits:` and per-server figures of an endpoint pool (`llm.pool`,
`llm.pool_stats`), on fake OpenAI-compatible servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.fake_openai import COMPLETION_TOKENS, FakeOpenAIServer

from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.llm.errors import TransientError
from stratagem.llm.pool import EndpointPool, rendezvous
from stratagem.llm.pool_stats import percentile
from stratagem.llm.ratelimit import Limits, RateLimiter
from stratagem.llm.registry import EndpointConfig, ModelConfig, create_provider
from stratagem.llm.routing import routing_key
from stratagem.llm.types import Message, Request

KEY_ENV = "STRATAGEM_POOL_QUOTA_KEY"
REQUEST = Request(messages=(Message("user", "hello"),), choices=("cooperate", "defect"))


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-pool-quota-0123456789")


def pool_of(urls: list[str], limits: Limits | None = None) -> EndpointPool:
    config = ModelConfig(
        model="openai/fake",
        api_key_env=KEY_ENV,
        endpoints=tuple(EndpointConfig(base_url=u, limits=limits or Limits()) for u in urls),
        params={"health_wait_s": 1},
    )
    pool = create_provider(config)
    assert isinstance(pool, EndpointPool)
    return pool


def episode_preferring(url: str, urls: list[str]) -> str:
    return next(
        k for k in (f"episode-{i}" for i in range(1000))
        if max(urls, key=lambda u: rendezvous(k, u)) == url
    )  # fmt: skip


async def call(pool: EndpointPool, episode: str) -> str:
    token = routing_key.set(episode)
    try:
        response = await pool.complete(REQUEST, 0)
    finally:
        routing_key.reset(token)
    assert response.endpoint is not None
    return response.endpoint


def test_a_server_s_quota_holds_across_concurrent_calls_and_they_use_another_s() -> None:
    """Two requests a minute on each server: of four concurrent calls of one episode, two go to
    its server and two to the other; a fifth waits, sending nothing, until a minute has
    passed (a fake clock), then goes to the episode's own server."""
    now = [1_000_000.0]
    with (
        FakeOpenAIServer(["ok"], repeat=True) as first,
        FakeOpenAIServer(["ok"], repeat=True) as second,
    ):
        urls = [first.base_url, second.base_url]
        episode = episode_preferring(first.base_url, urls)

        async def scenario() -> tuple[list[str], str, bool, list[int]]:
            pool = pool_of(urls, Limits(requests_per_minute=2))
            pool.limiter = RateLimiter(clock=lambda: now[0])
            used = await asyncio.gather(*(call(pool, episode) for _ in range(4)))
            fifth = asyncio.create_task(call(pool, episode))
            for _ in range(20):
                await asyncio.sleep(0)
            waiting = not fifth.done()
            in_flight = [e.in_flight for e in pool.endpoints]  # 1 where it was sent
            now[0] += 61.0
            pool._wakeups.wake()  # what the minute passing would do
            last = await fifth
            await pool.aclose()
            return sorted(used), last, waiting, in_flight

        used, last, waiting, in_flight = asyncio.run(scenario())
    assert used == sorted([first.base_url] * 2 + [second.base_url] * 2)
    assert waiting and in_flight == [0, 0]
    assert last == first.base_url
    assert (len(first.served), len(second.served)) == (3, 2)


def test_a_token_quota_counts_what_the_calls_used() -> None:
    """A server's tokens per minute are charged the real usage once a call returns."""
    with FakeOpenAIServer(["ok"], repeat=True) as server:

        async def scenario() -> tuple[int, int]:
            pool = pool_of([server.base_url], Limits(tokens_per_day=10**6))
            for i in range(3):
                await call(pool, f"episode-{i}")
            assert pool.limiter is not None
            used = pool.limiter.usage(f"openai/fake@{server.base_url}", 60.0)
            await pool.aclose()
            return used

        assert asyncio.run(scenario()) == (3, 3 * 10)  # 7 prompt + 3 completion tokens each


def test_the_snapshot_counts_what_the_servers_served() -> None:
    """Calls, errors and output tokens per server equal what each fake server served (a 500 on
    the first cools it and moves that call to the second), with its state."""
    with (
        FakeOpenAIServer(["ok", "ok", "500"]) as first,
        FakeOpenAIServer(["ok"], repeat=True) as second,
    ):
        urls = [first.base_url, second.base_url]
        episode = episode_preferring(first.base_url, urls)

        async def scenario() -> list[Any]:
            pool = pool_of(urls)
            for _ in range(5):
                await call(pool, episode)
            snapshot = pool.snapshot()
            await pool.aclose()
            return snapshot

        snapshot = asyncio.run(scenario())
    for figures, server in zip(snapshot, (first, second), strict=True):
        answered = server.served.count("ok")
        assert figures.url == server.base_url
        assert figures.calls == len(server.served)
        assert figures.errors == len(server.served) - answered
        assert figures.output_tokens == COMPLETION_TOKENS * answered
        assert figures.p50_s is not None and figures.p95_s is not None
        assert 0 < figures.p50_s <= figures.p95_s and figures.busy_s > 0
    assert [f.state for f in snapshot] == ["cooling", "healthy"]
    assert (snapshot[0].calls, snapshot[0].errors, snapshot[1].calls) == (3, 1, 3)
    assert "HTTP 500" in snapshot[0].reason


def test_an_error_let_through_names_its_server() -> None:
    with FakeOpenAIServer(["500"], repeat=True) as server:

        async def scenario() -> None:
            pool = pool_of([server.base_url])
            try:
                await call(pool, "episode-0")
            finally:
                await pool.aclose()

        with pytest.raises(TransientError, match=rf"^openai/fake \[endpoint {server.base_url}\]: "):
            asyncio.run(scenario())


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 0.5), percentile(values, 0.95), percentile([], 0.5)) == (
        50.0,
        95.0,
        None,
    )


@pytest.mark.parametrize(
    ("limits", "words"),
    [
        ({"requests_per_minute": 0}, r"limits\.requests_per_minute"),
        ({"tokens_per_hour": -5}, r"limits\.tokens_per_hour"),
        ({"requests_per_second": 5}, r"limits\.requests_per_second"),
    ],
)
def test_a_bad_server_limit_is_one_line(limits: dict[str, Any], words: str) -> None:
    entry = {
        "model": "openai/fake",
        "endpoints": [{"base_url": "http://127.0.0.1:1/v1", "limits": limits}],
    }
    data = {"name": "bad", "output": "out", "models": [entry], "games": ["dilemma"],
            "opponents": ["TitForTat"]}  # fmt: skip
    with pytest.raises(StratagemError, match=words) as caught:
        config_from_dict(data, "exp.yaml")
    assert "\n" not in str(caught.value) and "exp.yaml" in str(caught.value)


def test_a_reason_shown_never_carries_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's error text (the reason it is cooling) may echo the key; the snapshot, which
    progress shows and endpoints.json stores, masks it, even a key of no known shape."""
    credential = "plain-credential-0123456789"
    monkeypatch.setenv("STRATAGEM_POOL_QUOTA_CRED", credential)
    config = ModelConfig(
        model="openai/fake",
        api_key_env="STRATAGEM_POOL_QUOTA_CRED",
        endpoints=(EndpointConfig(base_url="http://127.0.0.1:1/v1"),),
    )
    pool = create_provider(config)
    assert isinstance(pool, EndpointPool)
    pool.endpoints[0].reason = f"HTTP 500: unknown user {credential}"
    (figures,) = pool.snapshot()
    assert credential not in figures.reason and "HTTP 500" in figures.reason
    asyncio.run(pool.aclose())
