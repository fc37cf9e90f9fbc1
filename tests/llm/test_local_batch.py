"""The embedded model's batch engine (`params.batch`): several calls decoded together, each reply
(text and usage) the same as the call's alone, on the studies' own prompts."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from stratagem.agents.registry import build_agent
from stratagem.errors import StratagemError
from stratagem.experiments.config import AgentEntry
from stratagem.games.catalog import get_game, get_stage
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.llm.errors import PermanentError
from stratagem.llm.pipeline import CallContext
from stratagem.llm.providers.local import LocalProvider
from stratagem.llm.registry import ModelConfig, create_provider
from stratagem.llm.types import Message, Request, Response


@pytest.fixture(scope="module")
def provider() -> LocalProvider:
    return LocalProvider(batch=4)


class Recorder:
    """The agents' client: the real model, one call at a time, each request kept."""

    def __init__(self, provider: LocalProvider) -> None:
        self.model = provider.model
        self.provider = provider
        self.requests: list[Request] = []

    async def generate(
        self, request: Request, context: CallContext | None = None
    ) -> list[Response]:
        self.requests.append(request)
        return [await self.provider.complete(request, 0)]


def study_requests(provider: LocalProvider) -> list[Request]:
    """A thesis plain agent's decision (JSON) and a MAgIC Chameleon seat's first calls, made
    greedy so that replies are comparable token for token."""
    recorder = Recorder(provider)
    thesis = RepeatedGame(get_stage("dilemma"), 2)
    plain = AgentEntry(kind="plain", framing="prisoner", output="json", max_tokens=24)
    agent = build_agent(plain, recorder, thesis)
    agent.reset(0, "t")
    asyncio.run(agent.act(thesis.initial_state(0).observation(0)))
    magic_game = get_game("chameleon/0")
    magic = build_agent(AgentEntry(kind="magic", max_tokens=32), recorder, magic_game)
    magic.reset(0, "m")
    state = magic_game.initial_state(0)
    asyncio.run(magic.act(state.observation(state.to_act()[0])))
    free = Request(
        messages=(Message("system", "You trade wood and stone."), Message("user", "Your offer?")),
        max_tokens=40,
    )
    return [replace(r, temperature=0.0) for r in [*recorder.requests[:3], free]]


def fresh(request: Request) -> Response:
    """The call alone through a batch engine, its whole prompt evaluated anew: what it gives
    does not depend on what earlier calls left in the cache (a near-tie can flip on the last
    digits of reused cells, computed in other batches)."""
    return LocalProvider(batch=2, kv_reuse=False).complete_sync(request, 0)


def test_batched_greedy_replies_equal_each_call_alone(provider: LocalProvider) -> None:
    requests = study_requests(LocalProvider())
    alone = [fresh(r) for r in requests]

    async def together() -> list[Response]:
        async def late(r: Request, delay: float) -> Response:
            await asyncio.sleep(delay)  # joins while the others decode
            return await provider.complete(r, 0)

        return await asyncio.gather(*(late(r, 0.3 * i) for i, r in enumerate(requests * 2)))

    batched = asyncio.run(together())
    for one, other in zip(alone * 2, batched, strict=True):
        assert other.text == one.text
        assert other.tool_calls == one.tool_calls
        assert other.usage == one.usage  # spend shown is spend paid, whatever the batch
    assert any(r.text for r in batched)
    assert provider._loaded().engines[4].widest >= 2  # decoded together, not in turn


def test_a_growing_transcript_evaluates_only_its_new_tokens(provider: LocalProvider) -> None:
    first = (Message("system", "You are playing the Dilemma. " * 20), Message("user", "Move?"))
    provider.complete_sync(Request(messages=first, max_tokens=4, temperature=0.0), 0)
    longer = (*first, Message("assistant", "Cooperate"), Message("user", "And now?"))
    provider.complete_sync(Request(messages=longer, max_tokens=4, temperature=0.0), 0)
    assert provider.stats.last_submitted > 100
    assert provider.stats.last_evaluated < 20


def test_calls_whose_callers_gave_up_free_their_sequences(provider: LocalProvider) -> None:
    """A run that stops cancels its calls in flight: each leaves the engine (its sequence free
    for the next call), and the calls after them are answered as usual."""
    long = Request(messages=(Message("user", "Tell a long story."),), max_tokens=200)

    async def give_up() -> None:
        tasks = [asyncio.ensure_future(provider.complete(long, 0)) for _ in range(6)]
        await asyncio.sleep(1.0)  # four decoding, two waiting
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(give_up())
    after = Request(messages=(Message("user", "Hi"),), max_tokens=3, temperature=0.0)

    async def four() -> list[Response]:
        return await asyncio.wait_for(
            asyncio.gather(*(provider.complete(after, 0) for _ in range(4))), timeout=120
        )

    assert len(asyncio.run(four())) == 4
    engine = provider._loaded().engines[4]
    assert sorted(engine._free) == [0, 1, 2, 3] and not engine._active


def test_a_grammar_that_cannot_be_built_is_a_permanent_error(provider: LocalProvider) -> None:
    request = Request(messages=(Message("user", "x"),), json_schema={"type": "nonsense"})
    with pytest.raises(PermanentError):
        provider.complete_sync(request, 0)
    assert provider.complete_sync(Request(messages=(Message("user", "Hi"),), max_tokens=2), 0)


def test_batch_is_a_param_of_local_models() -> None:
    created = create_provider(ModelConfig(model="local/gemma-3-270m", params={"batch": 2}))
    assert isinstance(created, LocalProvider) and created.batch == 2
    with pytest.raises(StratagemError):
        LocalProvider(batch=0)
