"""seed-001's tool and debate agents play every cooperation mechanism: their stage moves go
through their own pipeline (the lawyer loop, the debate), their prompts carry the mechanism's
rules and record, and an invalid decision of the mechanism stays invalid."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest
from arch_support import FakeClient
from support.seed001_script import seed001_reply

from stratagem.agents import Decision
from stratagem.agents.base import Agent
from stratagem.agents.debate_agent import DebateAgent
from stratagem.agents.llm_agent import LLMAgent
from stratagem.agents.prompts import Prompter
from stratagem.agents.seed001_mechanisms import MechanismPrompts, plays
from stratagem.agents.tool_agent import ToolAgent
from stratagem.games.base import State
from stratagem.games.catalog import get_game, get_stage
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.games.mechanisms import MechanismGame, MechanismObservation
from stratagem.llm.types import Request, Response

MECHANISMS = ("repetition", "reputation", "mediation", "contracting", "disarmament")
RULES = {  # a sentence of each mechanism's system.j2: its rules reach the prompt
    "repetition": "the game goes on to another round with probability",
    "reputation": "Every member's past moves are public",
    "mediation": "a mediator recommends an action to each of you",
    "contracting": "the contract binds for the whole game",
    "disarmament": "may commit to remove one of your own actions",
}
Build = Callable[[FakeClient, MechanismGame], LLMAgent]


def tool(client: FakeClient, game: MechanismGame) -> LLMAgent:
    prompter = Prompter("prisoner", output="json")
    return ToolAgent(client, "cooperate", prompter, mechanism=MechanismPrompts(game))


def debate(client: FakeClient, game: MechanismGame) -> LLMAgent:
    prompter = Prompter("prisoner", output="json")
    return DebateAgent(client, "cooperate", prompter, mechanism=MechanismPrompts(game))


ARCHITECTURES = {"tool": tool, "debate": debate}

Played = list[tuple[int, MechanismObservation, Decision]]


async def play(game: MechanismGame, agents: Sequence[Agent], seed: int = 0) -> tuple[State, Played]:
    """The runner's loop: act, apply; a decision that stays invalid takes the phase's rule."""
    for p, agent in enumerate(agents):
        agent.reset(seed + p, "ep")
    state: State = game.initial_state(seed)
    played: Played = []
    while not state.is_terminal():
        actions = {}
        for p in state.to_act():
            obs = state.observation(p)
            assert isinstance(obs, MechanismObservation)
            decision = await agents[p].act(obs)
            played.append((p, obs, decision))
            actions[p] = decision.action if decision.valid else None
        state, _ = state.forfeit(actions)
    return state, played


def mechanism(name: str, stage: str) -> MechanismGame:
    options: dict[str, object] = {"stage": stage, "rounds": 2}
    if name == "contracting":
        options["proposer"] = 0
    if name == "reputation":
        options["members"] = 2
    game = get_game(name, **options)
    assert isinstance(game, MechanismGame)
    return game


@pytest.mark.parametrize("stage", ["dilemma", "sh"])
@pytest.mark.parametrize("name", MECHANISMS)
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_each_architecture_plays_each_mechanism(arch: str, name: str, stage: str) -> None:
    game = mechanism(name, stage)
    clients = [FakeClient([seed001_reply]), FakeClient([seed001_reply])]
    agents = [ARCHITECTURES[arch](c, game) for c in clients]
    state, played = asyncio.run(play(game, agents))
    assert state.is_terminal()
    assert all(d.valid for _, _, d in played)
    history = state.observation(0).history  # type: ignore[attr-defined]
    assert len(history) == game.rounds * (2 if name == "reputation" else 1)
    assert all(r.valid for r in history)
    cooperative = get_stage(stage).labels[0][0]
    moves = [d for _, obs, d in played if obs.phase == "move"]
    assert moves and all(d.action == cooperative for d in moves)
    for client in clients:
        first = client.requests[0].messages
        assert RULES[name] in first[0].content  # the mechanism's rules, in the system prompt
    if arch == "tool":  # every stage move consulted the lawyer through the tool loop
        assert all(d.extra["tool_called"] for d in moves)
        move_requests = [r for c in clients for r in c.requests if r.tools]
        assert move_requests and all("TOOL USAGE RULES" in r.messages[-1].content for r in
                                     move_requests[:1])  # fmt: skip
    else:  # every decision, the mechanism's own included, was debated with the lawyer
        assert all(d.extra["architecture"] == "debate" for _, _, d in played)
        assert all(d.extra["ended_by"] == "suspect" for _, _, d in played)
        lawyer = [r for c in clients for r in c.requests if "You are a lawyer." in
                  r.messages[0].content]  # fmt: skip
        assert lawyer and RULES[name] in lawyer[0].messages[0].content
    extra = [d for _, obs, d in played if obs.phase != "move"]
    assert len(extra) == {"contracting": 2, "disarmament": 2}.get(name, 0)


def test_the_record_the_mechanism_shows_reaches_the_prompt() -> None:
    """Round 2 of mediation: the tool agent's decision prompt shows round 1 and the mediator's
    recommendation, as the mechanism's turn.j2 writes them."""
    game = mechanism("mediation", "dilemma")
    client = FakeClient([seed001_reply])
    agents = [tool(client, game), tool(FakeClient([seed001_reply]), game)]
    asyncio.run(play(game, agents))
    prompts = [r.messages[1].content for r in client.requests if r.tools]
    assert "Round 1: the mediator recommended cooperate to you" in prompts[-1]
    assert "The mediator recommends that you play cooperate" in prompts[-1]
    assert prompts[-1].rstrip().endswith("<YOUR_DECISION> is one of 'cooperate' or 'defect'.")


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_an_invalid_proposal_is_reasked_then_recorded_invalid(arch: str) -> None:
    """The proposer never writes a contract: re-asked, then invalid; the engine's rule (no
    contract) applies, and nothing replaces the reply."""
    game = mechanism("contracting", "dilemma")

    def garbled(request: Request) -> str | Response:
        if "Do you propose a contract?" in request.messages[-1].content or any(
            "Do you propose a contract?" in m.content for m in request.messages
        ):
            return "I would rather not say." if arch == "tool" else "We agree. DECISION: maybe"
        return seed001_reply(request)

    proposer = ARCHITECTURES[arch](FakeClient([garbled]), game)
    other = ARCHITECTURES[arch](FakeClient([seed001_reply]), game)
    state, played = asyncio.run(play(game, [proposer, other]))
    (p, obs, decision), *_ = played
    assert (p, obs.phase) == (0, "propose")
    assert not decision.valid and decision.action is None and decision.error
    assert decision.attempts == 1 + proposer.max_reasks + (arch == "debate") * 1
    kinds = [e.kind for e in state.log]  # type: ignore[attr-defined]
    assert kinds[:2] == ["proposal", "contract"]
    assert state.log[0].data["profile"] == []  # type: ignore[attr-defined]
    assert all(o.phase == "move" for _, o, _ in played[1:])


def test_an_invalid_stage_move_forfeits_the_round() -> None:
    """A tool agent whose every move is unreadable: re-asked, recorded invalid, round lost."""
    game = mechanism("disarmament", "dilemma")

    def keep_then_babble(request: Request) -> str | Response:
        if request.tools:  # a stage move: never a readable decision
            return "{'DECISION': 'both'}"
        return seed001_reply(request)

    agents = [tool(FakeClient([keep_then_babble]), game), tool(FakeClient([seed001_reply]), game)]
    state, played = asyncio.run(play(game, agents))
    moves = [d for p, o, d in played if p == 0 and o.phase == "move"]
    assert moves and not any(d.valid for d in moves)
    assert all("not a valid decision" in (d.error or "") for d in moves)
    assert all(not r.valid for r in state.observation(0).history)  # type: ignore[attr-defined]


def test_a_removed_action_is_not_an_option() -> None:
    """After `remove defect`, the seat's options are its remaining action only."""
    game = mechanism("disarmament", "dilemma")
    client = FakeClient([seed001_reply])
    asyncio.run(play(game, [debate(client, game), debate(FakeClient([seed001_reply]), game)]))
    last = [r for r in client.requests if not r.messages[0].content.startswith("You are a lawyer")]
    assert "<YOUR_DECISION> is one of 'cooperate'." in "\n".join(
        m.content for m in last[-1].messages
    )


def test_the_thesis_architectures_play_mechanisms_over_two_action_stages_only() -> None:
    assert plays(mechanism("contracting", "sh")) is None
    assert plays(RepeatedGame(get_stage("dilemma"), 3)) is None
    reason = plays(get_game("repetition", stage="eq1"))  # 3 actions a seat
    assert reason is not None and "two actions" in reason
