"""Shared helpers for the tool, debate and question tests: a model double that can call tools,
an episode loop that asks the comprehension questions after every round, and the real model."""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field

from stratagem.agents import Agent, Decision, StrategyAgent
from stratagem.agents.questions import Answer, ask_questions
from stratagem.games.catalog import get_stage
from stratagem.games.matrix.repeated import RepeatedGame, RepeatedObservation, RepeatedState
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Request, Response, ToolCall, Usage
from stratagem.strategies import TitForTat

NO_CONTEXT = CallContext()
Reply = str | Response | Callable[[Request], str | Response]


def call(name: str = "call_lawyer", call_id: str = "c1", **arguments: object) -> Response:
    """A reply that calls a tool."""
    return Response("", tool_calls=(ToolCall(call_id, name, dict(arguments)),), usage=Usage(5, 1))


class FakeClient:
    """Answers with `replies` in order (the last one repeats); records requests and contexts."""

    def __init__(self, replies: Sequence[Reply], model: str = "fake/model") -> None:
        self.model = model
        self.replies = list(replies)
        self.requests: list[Request] = []
        self.contexts: list[CallContext] = []

    async def generate(self, request: Request, context: CallContext = NO_CONTEXT) -> list[Response]:
        self.requests.append(request)
        self.contexts.append(context)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if callable(reply):
            reply = reply(request)
        if isinstance(reply, str):
            reply = Response(reply, usage=Usage(10, 2))
        return [reply]


def observation(
    game: str = "dilemma", rounds: int = 10, played: Sequence[tuple[int, int]] = ()
) -> RepeatedObservation:
    """Player 0's observation after `played` rounds (action indices) of a seed-001 game."""
    g = RepeatedGame(get_stage(game), rounds)
    state: RepeatedState = g.initial_state()
    labels = g.stage.labels
    for a, b in played:
        nxt, _ = state.apply({0: labels[0][a], 1: labels[1][b]})
        assert isinstance(nxt, RepeatedState)
        state = nxt
    return state.observation(0)


@dataclass
class Episode:
    decisions: list[Decision] = field(default_factory=list)
    answers: list[list[Answer]] = field(default_factory=list)
    state: RepeatedState | None = None


async def play_with_questions(
    agent: Agent,
    game: str = "dilemma",
    rounds: int = 2,
    seed: int = 0,
    ask_after: Container[int] | None = None,
) -> Episode:
    """The runner's loop for seed-001: act, apply (invalid moves forfeit), then ask the four
    questions after every round (or only after the rounds in `ask_after`, to save time)."""
    opponent = StrategyAgent(TitForTat())
    agent.reset(seed, "ep")
    opponent.reset(seed, "ep")
    state = RepeatedGame(get_stage(game), rounds).initial_state(seed)
    episode = Episode()
    while not state.is_terminal():
        mine = await agent.act(state.observation(0))
        theirs = await opponent.act(state.observation(1))
        nxt, _ = state.forfeit({0: mine.action, 1: theirs.action})
        assert isinstance(nxt, RepeatedState)
        state = nxt
        episode.decisions.append(mine)
        if ask_after is None or len(state.history) in ask_after:
            episode.answers.append(await ask_questions(agent, state.observation(0)))
    episode.state = state
    return episode
