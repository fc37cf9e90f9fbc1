"""The debate-based agent of seed-001 §6.3: a suspect and its lawyer."""

from __future__ import annotations

import asyncio
import time

import pytest
from arch_support import FakeClient, observation, play_with_questions

from stratagem.agents import DebateAgent
from stratagem.agents.debate_agent import DEFAULT_MAX_TURNS
from stratagem.agents.questions import QUESTIONS
from stratagem.errors import StratagemError
from stratagem.llm.types import Request

# seed-001 §6.3, Fig 2.11, rendered for 10 rounds.
SUSPECT_PROMPT = """You are a person.

SCENARIO:
You and your partner were arrested and are waiting separately for interrogation.
You will be interrogated for 10 rounds.
During each interrogation round, you and your partner will independently and simultaneously choose one action.
Depending on your choices, you will receive different sentences.
You will be assisted by a lawyer during your interrogation.
You will debate with your lawyer to determine the best decision.
Your objective is to minimise your total years in prison over all interrogation rounds.

CRITICAL RULES:
You must debate with the lawyer at least once.
Do not simulate future rounds of the debate.
Do not simulate your lawyer's response.

EXAMPLE OF CORRECT RESPONSE:
I may agree with your point, but ...

EXAMPLE OF WRONG RESPONSE:
**Criminal**: I want to do this and this.
**Lawyer**: No, you should do that."""  # noqa: E501

# Fig 2.12, rendered for the Dilemma (years T0 R5 P10 S15) with attitude defect.
LAWYER_PROMPT_DEFECT = """You are a lawyer.

SCENARIO:
Your client is being interrogated and must make a decision.
Depending on their choices, you will receive the following sentences:
If they choose 'Defect' and their partner chooses 'Defect', they will receive 10 years in prison and their partner will receive 10 years in prison.
If they choose 'Defect' and their partner chooses 'Cooperate', they will receive 0 years in prison and their partner will receive 15 years in prison.
If they choose 'Cooperate' and their partner chooses 'Defect', they will receive 15 years in prison and their partner will receive 0 years in prison.
If they choose 'Cooperate' and their partner chooses 'Cooperate', they will receive 5 years in prison and their partner will receive 5 years in prison.
You should advise your client to choose Defect.
You will debate with your client to determine the best decision.
Your objective is to minimise your client's total years in prison over all interrogation rounds.

CRITICAL RULES:
You must debate with your client at least once
Do not simulate future rounds of the debate.
Do not simulate your client's response.

EXAMPLE OF CORRECT RESPONSE:
As your lawyer, I would suggest you to...

EXAMPLE OF WRONG RESPONSE:
**Criminal**: I want to do this and this.
**Lawyer**: No, you should do that."""  # noqa: E501

# Fig 2.13, first round (no history yet).
INIT_DECISION = """The objective of the debate is to determine the best decision for me.
We both need to provide arguments to support our own opinion.

CRITICAL DEBATE RULES:
We must express only our opinion.
The suspect can't simulate the responses of the lawyer.
The lawyer can't simulate the responses of the suspect.
Each response can only contain its proponent's own opinion.
Debaters are forbidden from simulating future responses.
Our opinions should be expressed in at most three sentences
Once the debate is concluded, I must express my final decision in the following JSON format:
{'DECISION': '<YOUR_DECISION>'}"""

# Fig 2.14 with Q4, after one round.
INIT_Q4 = """This is a debate between two agents: a suspect and its lawyer.
The objective of the debate is to determine the answer to this question:
How many years of sentence have you received so far?
(Express the answer as ANSWER:<TOTAL_YEARS>)
Both agents need to provide arguments to support their own opinion

CRITICAL DEBATE RULES:
Both agents must express only their opinion.
The suspect can't simulate the responses of the lawyer.
The lawyer can't simulate the responses of the suspect.
Each response can only contain its proponent's own opinion.
Debaters are forbidden from simulating future responses.
Once the debate is concluded, the suspect must express their final decision in the following JSON format:
{'ANSWER': '<YOUR_ANSWER>'}

ADDITIONAL INFORMATION:
Summary of the last 1 interrogation rounds:
Round 1 - Suspect chose: Defect, Suspect's partner chose: Defect"""  # noqa: E501


def systems(request: Request) -> str:
    return request.messages[0].content


def test_only_the_lawyer_knows_the_sentences_and_the_attitude() -> None:
    agent = DebateAgent(FakeClient(["x"]), "defect")
    suspect, lawyer = agent.system_prompts(observation())
    assert suspect == SUSPECT_PROMPT
    assert lawyer == LAWYER_PROMPT_DEFECT
    assert "years in prison and" not in suspect and "Defect" not in suspect
    assert "advise" not in suspect
    cooperate = DebateAgent(FakeClient(["x"]), "cooperate").system_prompts(observation())[1]
    assert "You should advise your client to choose Cooperate.\n" in cooperate
    compute = DebateAgent(FakeClient(["x"]), "compute").system_prompts(observation())[1]
    assert "You should advise your client to choose the best choice.\n" in compute  # AMBIG-6


def test_debate_stops_at_decision() -> None:
    client = FakeClient([
        "As your lawyer, I would suggest you to defect.",
        "I may agree with your point, but I prefer to cooperate. {'DECISION': 'cooperate'}",
        "never used",
    ])  # fmt: skip
    agent = DebateAgent(client, "defect", seed=3)
    agent.reset(0, "ep")
    decision = asyncio.run(agent.act(observation()))
    assert (decision.action, decision.valid, decision.attempts) == ("cooperate", True, 2)
    lawyer_call, suspect_call = client.requests
    # The lawyer speaks first, to the suspect's chat-init message.
    assert systems(lawyer_call) == LAWYER_PROMPT_DEFECT
    assert [(m.role, m.content) for m in lawyer_call.messages[1:]] == [("user", INIT_DECISION)]
    # The suspect sees its own opening as its turn and the lawyer's reply as the other's.
    assert systems(suspect_call) == SUSPECT_PROMPT
    assert [m.role for m in suspect_call.messages] == ["system", "assistant", "user"]
    assert suspect_call.messages[2].content == "As your lawyer, I would suggest you to defect."
    # Debate turns are free text: no constraint.
    assert lawyer_call.json_schema is None and suspect_call.json_schema is None
    assert lawyer_call.seed == 3
    assert decision.extra["ended_by"] == "suspect" and decision.extra["debate_turns"] == 2
    assert decision.extra["final_ask"] is False
    assert [m["name"] for m in decision.messages] == [
        "Internal_Decision_Maker", "Internal_Assistant", "Internal_Decision_Maker",
    ]  # fmt: skip
    assert [c.purpose for c in client.contexts] == ["decision", "decision"]
    assert all(c.episode_id == "ep" and c.round == 1 for c in client.contexts)


def test_the_lawyer_may_end_the_debate_unless_told_not_to() -> None:
    client = FakeClient(["{'DECISION': 'defect'}", "ok"])
    decision = asyncio.run(DebateAgent(client, "defect").act(observation()))
    assert (decision.action, decision.attempts, decision.extra["ended_by"]) == (
        "defect",
        1,
        "lawyer",
    )
    client = FakeClient(["{'DECISION': 'defect'}", "Fine. {'DECISION': 'Cooperate'}"])
    agent = DebateAgent(client, "defect", lawyer_may_end=False)
    decision = asyncio.run(agent.act(observation()))
    assert (decision.action, decision.attempts, decision.extra["ended_by"]) == (
        "cooperate", 2, "suspect",
    )  # fmt: skip


def test_lower_case_decision_is_ordinary_speech() -> None:
    client = FakeClient(
        ["This is a hard decision.", "My decision: cooperate", "{'DECISION': 'Defect'}"]
    )
    decision = asyncio.run(DebateAgent(client, "compute").act(observation()))
    assert (decision.action, decision.extra["debate_turns"]) == ("defect", 3)


def test_turn_cap_without_final_ask_is_invalid() -> None:
    client = FakeClient(["Let us talk."])
    agent = DebateAgent(
        client, "cooperate", max_turns=3, final_ask=False, invalid="default:cooperate"
    )
    decision = asyncio.run(agent.act(observation()))
    assert len(client.requests) == 3
    assert (decision.valid, decision.action) == (False, "cooperate")
    assert decision.error == "the debate reached 3 turns without DECISION"
    assert decision.extra["ended_by"] == "cap"
    assert decision.extra["invalid_policy"] == "default:cooperate"


def test_turn_cap_then_the_suspect_is_asked_alone() -> None:
    client = FakeClient(["Let us talk.", "Sure.", "{'DECISION': 'Defect'}"])
    decision = asyncio.run(DebateAgent(client, "cooperate", max_turns=2).act(observation()))
    assert (decision.action, decision.valid, decision.attempts) == ("defect", True, 3)
    close = client.requests[2]
    assert systems(close) == SUSPECT_PROMPT
    assert close.messages[-1].role == "user"
    assert close.messages[-1].content == (
        "The debate is over. Express your final decision now, in the following JSON format and "
        "nothing else:\n{'DECISION': '<YOUR_DECISION>'}"
    )
    assert close.json_schema is not None  # constrained where the provider can
    assert client.contexts[2].purpose == "debate-close"
    assert decision.extra["final_ask"] is True and decision.extra["ended_by"] == "cap"


def test_unreadable_decision_goes_to_the_final_ask_with_reasks() -> None:
    client = FakeClient(["DECISION: maybe", "{'DECISION': 'later'}", "{'DECISION': 'cooperate'}"])
    decision = asyncio.run(DebateAgent(client, "defect", max_reasks=1).act(observation()))
    assert (decision.action, decision.attempts) == ("cooperate", 3)
    assert decision.extra["ended_by"] == "unreadable"
    assert "could not be used" in client.requests[2].messages[-1].content
    assert decision.messages[-1]["content"] == "{'DECISION': 'cooperate'}"


def test_separate_lawyer_model() -> None:
    suspect = FakeClient(["{'DECISION': 'defect'}"])
    lawyer = FakeClient(["I suggest cooperating."])
    agent = DebateAgent(suspect, "cooperate", lawyer_client=lawyer)
    decision = asyncio.run(agent.act(observation()))
    assert decision.action == "defect"
    assert systems(lawyer.requests[0]) != systems(suspect.requests[0])
    assert "advise your client" in systems(lawyer.requests[0])


def test_question_debate_uses_fig_2_14_and_ends_at_answer() -> None:
    client = FakeClient(["I think it is 10.", "{'ANSWER': '10'}"])
    agent = DebateAgent(client, "defect")
    agent.reset(0, "ep")
    answer = asyncio.run(agent.answer(QUESTIONS[3], observation(played=[(1, 1)])))
    assert (answer.question_id, answer.parsed, answer.relevant, answer.attempts) == (
        "Q4",
        "10",
        True,
        2,
    )
    assert client.requests[0].messages[1].content == INIT_Q4
    # AMBIG-13: the lawyer keeps its role prompt, attitude included, in question debates.
    assert systems(client.requests[0]) == LAWYER_PROMPT_DEFECT
    assert [c.purpose for c in client.contexts] == ["question", "question"]
    assert client.contexts[0].round == 1
    assert answer.extra["ended_by"] == "suspect"


def test_episode_memory_carries_debates_over() -> None:
    client = FakeClient(["{'DECISION': 'defect'}"])
    agent = DebateAgent(client, "defect", memory="episode")
    agent.reset(0)
    asyncio.run(agent.act(observation()))
    asyncio.run(agent.act(observation(played=[(1, 1)])))
    second = client.requests[1].messages
    assert [m.role for m in second] == ["system", "user", "assistant", "user"]
    assert len(agent.history) == 4
    # The decision's trace holds only its own debate.
    fresh = DebateAgent(FakeClient(["{'DECISION': 'defect'}"]), "defect")
    first = asyncio.run(fresh.act(observation()))
    assert len(first.messages) == 2 and fresh.history == ()


def test_options_are_checked() -> None:
    assert DEFAULT_MAX_TURNS == 10
    with pytest.raises(StratagemError, match="max_turns"):
        DebateAgent(FakeClient(["x"]), "defect", max_turns=0)
    with pytest.raises(StratagemError, match="unknown attitude"):
        DebateAgent(FakeClient(["x"]), "nash")


# -- the embedded model ----------------------------------------------------------------------------


def test_real_model_debates_two_rounds_and_answers() -> None:
    from stratagem.llm.pipeline import build_client
    from stratagem.llm.registry import ModelConfig

    client = build_client(ModelConfig(model="local/gemma-3-270m"))
    # One lawyer turn per debate, then the suspect is asked alone: the cheapest full debate.
    agent = DebateAgent(
        client, "compute", max_turns=1, max_tokens=12, temperature=0.0, max_reasks=0
    )
    started = time.perf_counter()
    episode = asyncio.run(play_with_questions(agent, "dilemma", rounds=2, ask_after={2}))
    elapsed = time.perf_counter() - started
    assert len(episode.decisions) == 2
    for decision in episode.decisions:
        assert decision.action in ("cooperate", "defect") if decision.valid else decision.error
        assert decision.extra["debate_turns"] == 1
    assert [[a.question_id for a in answers] for answers in episode.answers] == [
        ["Q1", "Q2", "Q3", "Q4"]
    ]
    print(
        f"debate agent, 270M: {sum(d.valid for d in episode.decisions)}/2 valid, endings "
        f"{[d.extra['ended_by'] for d in episode.decisions]}, "
        f"{sum(a.relevant for answers in episode.answers for a in answers)}/4 answers readable, "
        f"{elapsed:.1f} s"
    )
