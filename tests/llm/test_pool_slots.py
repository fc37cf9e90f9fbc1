"""Issue 33: a pool's servers' caps and quotas held in one place for several processes
(`llm.pool_slots`, what a Ray run's coordinator keeps for its workers), here two pools in one
process sharing one `PoolSlots`, calling real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import asyncio

from support.slow_openai import SlowOpenAIServer

from stratagem.llm.pool import EndpointPool
from stratagem.llm.pool_slots import PoolSlots
from stratagem.llm.ratelimit import Limits
from stratagem.llm.registry import EndpointConfig, ModelConfig, create_provider
from stratagem.llm.routing import routing_key
from stratagem.llm.types import Message, Request

REQUEST = Request(messages=(Message("user", "hello"),))


def test_two_pools_sharing_their_servers_slots_never_pass_a_cap_or_a_quota() -> None:
    with SlowOpenAIServer(0.1) as a, SlowOpenAIServer(0.1) as b:
        servers = (
            EndpointConfig(base_url=a.base_url, max_concurrency=1),
            EndpointConfig(base_url=b.base_url, limits=Limits(requests_per_minute=1)),
        )
        config = ModelConfig(
            model="openai/slow-model", endpoints=servers, params={"health_wait_s": 5}
        )
        shared = PoolSlots(config.model, servers)

        async def main() -> list[str | None]:
            pools: list[EndpointPool] = []
            for _ in range(2):  # two workers' pools
                pool = create_provider(config)
                assert isinstance(pool, EndpointPool)
                pool.share(shared)
                pools.append(pool)

            async def call(pool: EndpointPool, episode: str) -> str | None:
                routing_key.set(episode)
                return (await pool.complete(REQUEST, 0)).endpoint

            try:
                return await asyncio.gather(*(
                    call(pool, f"episode-{i}") for i in range(6) for pool in pools
                ))  # fmt: skip
            finally:
                for pool in pools:
                    await pool.aclose()

        served = asyncio.run(main())
        assert (a.peak, a.count, b.count) == (1, 11, 1)
    assert sorted(served) == sorted([a.base_url] * 11 + [b.base_url])
    assert shared.in_flight(a.base_url) == shared.in_flight(b.base_url) == 0
