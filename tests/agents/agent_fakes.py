"""Test doubles for agent tests: a scripted model client and a tiny game loop."""

from __future__ import annotations

from collections.abc import Sequence

from stratagem.agents.base import Agent
from stratagem.games.matrix.repeated import RepeatedGame, RepeatedState
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Request, Response, Usage

NO_CONTEXT = CallContext()
USAGE = Usage(10, 2)


class ScriptedClient:
    """Replies with the given texts in order; records every request and context."""

    model = "fake/scripted"

    def __init__(self, replies: Sequence[str], usage: Usage = USAGE) -> None:
        self.replies = list(replies)
        self.usage = usage
        self.requests: list[Request] = []
        self.contexts: list[CallContext] = []

    async def generate(self, request: Request, context: CallContext = NO_CONTEXT) -> list[Response]:
        self.requests.append(request)
        self.contexts.append(context)
        return [Response(self.replies.pop(0), usage=self.usage)]


async def play(game: RepeatedGame, agents: Sequence[Agent], seed: int = 0) -> RepeatedState:
    """Play a repeated game to the end the way the runner does: act, apply, observe."""
    for i, agent in enumerate(agents):
        agent.reset(seed + i, episode_id="ep")
    state = game.initial_state(seed)
    while not state.is_terminal():
        actions = {}
        for p in state.to_act():
            decision = await agents[p].act(state.observation(p))
            assert decision.action is not None
            actions[p] = decision.action
        nxt, events = state.apply(actions)
        assert isinstance(nxt, RepeatedState)
        state = nxt
        for p, agent in enumerate(agents):
            await agent.observe(state.observation(p), events)
    return state
