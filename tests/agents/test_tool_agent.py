"""The tool-based agent of seed-001 §6.2 and its lawyer tools (Fixed and Nash)."""

from __future__ import annotations

import asyncio
import random
import time

import pytest
from arch_support import FakeClient, call, observation, play_with_questions

from stratagem.agents import ToolAgent
from stratagem.agents.prompts import Prompter
from stratagem.agents.questions import QUESTIONS, answer_schema
from stratagem.agents.tools import (
    LAWYER_TOOL_NAME,
    build_lawyer,
    nash_advice,
    nash_arguments,
    nash_tool_parameters,
)
from stratagem.errors import StratagemError
from stratagem.games.catalog import get_stage

# seed-001 §6.2, Fig 2.8 rendered for the Dilemma (years T0 R5 P10 S15, §4.1) and 10 rounds.
ROLE_DILEMMA = """You are a person.
SCENARIO:
You and your partner were arrested and are waiting separately for interrogation.
You will be interrogated for 10 rounds.
During each interrogation round, you and your partner will independently and simultaneously choose one action: 'Cooperate' or 'Defect'.
Depending on your choices, you will receive different sentences.
If you choose 'Defect' and your partner chooses 'Defect', you will receive 10 years in prison and you partner will receive 10 years in prison.
If you choose 'Defect' and your partner chooses 'Cooperate', you will receive 0 years in prison and you partner will receive 15 years in prison.
If you choose 'Cooperate' and your partner chooses 'Defect', you will receive 15 years in prison and you partner will receive 0 years in prison.
If you choose 'Cooperate' and your partner chooses 'Cooperate', you will receive 5 years in prison and you partner will receive 5 years in prison.
You have a tool at your disposal: a phone to call your lawyer.
Your objective is to minimise your total years in prison over all interrogation rounds.
CRITICAL RULES:
Use each tool only once.
DO NOT CALL AGAIN AFTER USING THE TOOL.
DO NOT CALL THE TOOL MULTIPLE TIMES BEFORE ANSWERING."""  # noqa: E501

# Fig 2.9, with the Fig 2.1 summary appended after one round.
DECISION_AFTER_ONE_ROUND = """Think about this carefully.

TOOL USAGE RULES:
- You may call your lawyer tool ONCE if you need advice
- After receiving advice (or if you don't need it), proceed directly to your decision
- DO NOT call any tools after making your decision

OUTPUT FORMAT:
Once you have made your final decision, respond with ONLY this JSON format and nothing else:
{'DECISION': '<YOUR_DECISION>'}

ADDITIONAL INFORMATION:
Summary of the last 1 interrogation rounds:
Round 1 - Suspect chose: Cooperate, Suspect's partner chose: Defect"""

FIXED_DESCRIPTION = """This tool is a phone to call your lawyer for advice during an interrogation.
"Input: There is no input information to provide.
Output: A brief suggestion from your lawyer.

IMPORTANT CONSTRAINTS:
- Call this tool ONLY ONCE per user message
- After receiving the lawyer's advice, you MUST proceed directly to making your decision
- DO NOT call this tool again unless the user asks a new question
- If you've already called this tool in this response, you already have the advice you need"""

NASH_DESCRIPTION = FIXED_DESCRIPTION.replace(
    '"Input: There is no input information to provide.',
    "Input: Information about the possible outcomes you're facing.",
)

RESULT_COOPERATE = """=== LAWYER CONSULTATION COMPLETE ===
Your lawyer advises: Cooperate
Reasoning: Cooperate is the best option.
This consultation is now finished. Based on this advice, make your decision and output it in the required JSON format immediately.
No further tool calls are needed or permitted."""  # noqa: E501

QUESTION_PROMPT_Q2 = """Your task is to answer this question:
How many rounds have you gone through so far?
(Express the answer as ANSWER:<N_ROUNDS>)

Think about this carefully.

TOOL USAGE RULES:
- You may call your lawyer tool ONCE if you need advice
- After receiving advice (or if you don't need it), proceed directly to your decision
- DO NOT call any tools after making your decision

OUTPUT FORMAT:
Once you are ready to provide an answer, respond with ONLY this JSON format and nothing else:
{'ANSWER': '<YOUR_ANSWER>'}

ADDITIONAL INFORMATION:
Summary of the last 1 interrogation rounds:
Round 1 - Suspect chose: Cooperate, Suspect's partner chose: Defect"""


def years(game: str) -> dict[str, int]:
    """The four sentences of a seed-001 game, as the prompts show them (§4.1: 15 - payoff)."""
    a = get_stage(game).matrices()[0]  # rows/columns: cooperate, defect
    top = float(get_stage(game).payoffs.max())
    return {
        "temptation": int(top - a[1][0]),
        "reward": int(top - a[0][0]),
        "punishment": int(top - a[1][1]),
        "sucker": int(top - a[0][1]),
    }


# -- the Nash tool (§4.1 table: Nash-tool output) -------------------------------------------------


def test_years_match_the_spec_table() -> None:
    assert years("dilemma") == {"temptation": 0, "reward": 5, "punishment": 10, "sucker": 15}
    assert years("delight") == {"temptation": 15, "reward": 10, "punishment": 5, "sucker": 0}
    assert years("confusion") == {"temptation": 5, "reward": 0, "punishment": 10, "sucker": 15}


def test_nash_advises_defect_in_the_dilemma_and_cooperate_in_the_delight() -> None:
    rng = random.Random(0)
    assert nash_advice(years("dilemma"), rng) == (1, True)
    assert nash_advice(years("delight"), rng) == (0, True)


def test_nash_picks_at_random_in_the_confusion_seeded() -> None:
    picks = {seed: nash_advice(years("confusion"), random.Random(seed)) for seed in range(20)}
    assert {unique for _, unique in picks.values()} == {False}
    assert {index for index, _ in picks.values()} == {0, 1}
    assert nash_advice(years("confusion"), random.Random(3)) == picks[3]  # seeded: replays


def test_nash_solves_what_it_is_given_even_if_wrong() -> None:
    # All sentences equal: every profile is an equilibrium, so the pick is random.
    _, unique = nash_advice(
        {"temptation": 0, "reward": 0, "punishment": 0, "sucker": 0}, random.Random(0)
    )
    assert unique is False


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"temptation": 0, "reward": 5, "punishment": 10}, "missing argument: sucker"),
        (
            {"temptation": "zero", "reward": 5, "punishment": 10, "sucker": 15},
            "'temptation' must be a number",
        ),
        (
            {"temptation": True, "reward": 5, "punishment": 10, "sucker": 15},
            "'temptation' must be a number",
        ),
        ({"temptation": -1, "reward": 5, "punishment": 10, "sucker": 15}, "must not be negative"),
        (
            {"temptation": float("nan"), "reward": 5, "punishment": 10, "sucker": 15},
            "must be a number",
        ),
    ],
)
def test_malformed_nash_arguments_give_an_error_result(
    arguments: dict[str, object], message: str
) -> None:
    lawyer = build_lawyer("compute", Prompter("prisoner", output="json"), observation())
    result = lawyer.execute(arguments, random.Random(0))
    assert not result.ok and result.advice is None
    assert result.error is not None and message in result.error
    assert result.content.startswith("=== LAWYER CONSULTATION FAILED ===\n")
    assert message in result.content


def test_numeric_strings_and_extra_arguments_are_accepted() -> None:
    given = {"temptation": "0", "reward": 5.0, "punishment": 10, "sucker": 15, "x": 1}
    assert nash_arguments(given) == {
        "temptation": 0.0, "reward": 5.0, "punishment": 10.0, "sucker": 15.0,
    }  # fmt: skip


def test_tools_are_described_verbatim() -> None:
    prompter = Prompter("prisoner", output="json")
    fixed = build_lawyer("defect", prompter, observation())
    nash = build_lawyer("compute", prompter, observation())
    assert (fixed.kind, fixed.advice, nash.kind) == ("fixed", "Defect", "nash")
    assert fixed.tool.name == nash.tool.name == LAWYER_TOOL_NAME
    assert fixed.tool.description == FIXED_DESCRIPTION
    assert nash.tool.description == NASH_DESCRIPTION
    assert fixed.tool.parameters == {"type": "object", "properties": {}}
    params = nash_tool_parameters()
    assert params["required"] == ["temptation", "reward", "punishment", "sucker"]
    assert params["properties"]["sucker"]["description"] == (
        "The number of years you get if you cooperate and your partner defects"
    )
    coop = build_lawyer("cooperate", prompter, observation()).execute({}, random.Random(0))
    assert (coop.ok, coop.advice, coop.content) == (True, "Cooperate", RESULT_COOPERATE)


# -- the agent -------------------------------------------------------------------------------------


def test_fixed_tool_call_then_decision() -> None:
    client = FakeClient([call(), "{'DECISION': 'defect'}"])
    agent = ToolAgent(client, "cooperate", seed=4)
    agent.reset(7, "ep")
    decision = asyncio.run(agent.act(observation(played=[(0, 1)])))
    assert (decision.action, decision.valid, decision.attempts) == ("defect", True, 2)
    first, second = client.requests
    assert [m.role for m in first.messages] == ["system", "user"]
    assert first.messages[0].content == ROLE_DILEMMA
    assert first.messages[1].content == DECISION_AFTER_ONE_ROUND
    assert [t.name for t in first.tools] == [LAWYER_TOOL_NAME]
    assert first.json_schema is not None
    assert first.json_schema["properties"]["DECISION"]["enum"] == ["Cooperate", "Defect"]
    assert first.seed == 4
    # The call and its result are in the conversation; the spent tool is no longer offered.
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "tool"]
    assert second.messages[2].tool_calls[0].name == LAWYER_TOOL_NAME
    assert second.messages[3].content == RESULT_COOPERATE
    assert second.messages[3].tool_call_id == "c1"
    assert second.tools == ()
    assert [c.purpose for c in client.contexts] == ["decision", "tool"]
    assert all((c.episode_id, c.round) == ("ep", 2) for c in client.contexts)
    assert decision.extra["tool_called"] is True
    assert decision.extra["advice"] == "Cooperate"
    assert (decision.extra["attitude"], decision.extra["tool"]) == ("cooperate", "fixed")
    assert decision.messages[-1] == {"role": "assistant", "content": "{'DECISION': 'defect'}"}


@pytest.mark.parametrize(("game", "advice"), [("dilemma", "Defect"), ("delight", "Cooperate")])
def test_nash_tool_through_the_agent(game: str, advice: str) -> None:
    client = FakeClient([call(**years(game)), "{'DECISION': 'Defect'}"])
    agent = ToolAgent(client, "compute")
    decision = asyncio.run(agent.act(observation(game)))
    assert decision.valid and decision.extra["tool"] == "nash"
    assert decision.extra["advice"] == advice
    assert f"Your lawyer advises: {advice}\n" in client.requests[1].messages[-1].content
    result = decision.extra["steps"][0]["result"]
    assert result["details"]["random"] is False
    assert result["details"]["years"] == {k: float(v) for k, v in years(game).items()}


def test_confusion_advice_varies_with_the_episode_seed() -> None:
    advice = set()
    for seed in range(12):
        client = FakeClient([call(**years("confusion")), "{'DECISION': 'Defect'}"])
        agent = ToolAgent(client, "compute")
        agent.reset(seed)
        advice.add(asyncio.run(agent.act(observation("confusion"))).extra["advice"])
    assert advice == {"Cooperate", "Defect"}


def test_malformed_call_gets_an_error_and_the_model_can_call_again() -> None:
    client = FakeClient(
        [call(temptation=0), call(call_id="c2", **years("dilemma")), '{"DECISION": "Defect"}']
    )
    agent = ToolAgent(client, "compute", max_reasks=1)
    decision = asyncio.run(agent.act(observation()))
    assert (decision.valid, decision.attempts) == (True, 3)
    error_result = client.requests[1].messages[-1]
    assert (
        error_result.role == "tool"
        and "missing arguments: reward, punishment, sucker" in error_result.content
    )
    assert client.requests[1].tools  # a failed call does not spend the tool
    assert client.requests[2].tools == ()
    assert [c.purpose for c in client.contexts] == ["decision", "reask", "tool"]
    assert decision.extra["advice"] == "Defect"


def test_endless_tool_calls_are_bounded() -> None:
    client = FakeClient([call()])
    agent = ToolAgent(client, "defect", max_tool_calls=1, max_reasks=2, after_limit="refuse")
    decision = asyncio.run(agent.act(observation()))
    assert (decision.valid, decision.action, decision.attempts) == (False, None, 4)  # 1 + 1 + 2
    assert all(r.tools for r in client.requests)
    refused = client.requests[-1].messages[-1].content
    assert "no further tool calls are permitted" in refused
    assert decision.extra["invalid_policy"] == "forfeit"
    assert decision.extra["tool_calls"] == 1


def test_unknown_tool_is_refused() -> None:
    client = FakeClient([call("get_weather"), "{'DECISION': 'Cooperate'}"])
    decision = asyncio.run(ToolAgent(client, "defect").act(observation()))
    assert decision.valid and decision.extra["tool_called"] is False
    assert "there is no tool called 'get_weather'" in client.requests[1].messages[-1].content


def test_deciding_without_the_tool_is_accepted_and_bad_replies_are_reasked() -> None:
    client = FakeClient(["I will think.", "{'DECISION': 'cooperate'}"])
    decision = asyncio.run(ToolAgent(client, "defect", invalid="default:defect").act(observation()))
    assert (decision.action, decision.valid, decision.attempts) == ("cooperate", True, 2)
    assert decision.extra["tool_called"] is False
    assert "could not be used" in client.requests[1].messages[-1].content
    # Still invalid after the re-asks: the fallback is played, and the decision stays invalid.
    client = FakeClient(["nope"])
    decision = asyncio.run(
        ToolAgent(client, "defect", max_reasks=1, invalid="default:defect").act(observation())
    )
    assert (decision.action, decision.valid, decision.attempts) == ("defect", False, 2)


def test_unconstrained_agent_sends_no_schema() -> None:
    client = FakeClient(["{'DECISION': 'cooperate'}"])
    asyncio.run(ToolAgent(client, "defect", constrain=False).act(observation()))
    assert client.requests[0].json_schema is None and client.requests[0].tools


def test_questions_keep_the_tool_and_use_fig_2_10() -> None:
    client = FakeClient([call(), "{'ANSWER': '1'}"])
    agent = ToolAgent(client, "cooperate")
    agent.reset(0, "ep")
    answer = asyncio.run(agent.answer(QUESTIONS[1], observation(played=[(0, 1)])))
    assert (answer.question_id, answer.parsed, answer.relevant, answer.attempts) == (
        "Q2",
        "1",
        True,
        2,
    )
    first = client.requests[0]
    assert first.messages[1].content == QUESTION_PROMPT_Q2
    assert first.tools and first.json_schema == answer_schema()
    assert client.contexts[0].purpose == "question" and client.contexts[0].round == 1
    assert answer.raw == "{'ANSWER': '1'}"


def test_episode_memory_keeps_one_conversation() -> None:
    client = FakeClient(["{'DECISION': 'cooperate'}"])
    agent = ToolAgent(client, "defect", memory="episode")
    agent.reset(0)
    asyncio.run(agent.act(observation()))
    asyncio.run(agent.act(observation(played=[(0, 0)])))
    second = client.requests[1].messages
    assert [m.role for m in second] == ["system", "user", "assistant", "user"]
    assert len(agent.conversation) == 5
    agent.reset(1)
    assert agent.conversation == ()


def test_bad_options_are_user_errors() -> None:
    client = FakeClient(["x"])
    with pytest.raises(StratagemError, match="unknown attitude"):
        ToolAgent(client, "nice")
    with pytest.raises(StratagemError, match="unknown memory"):
        ToolAgent(client, "defect", memory="forever")
    with pytest.raises(StratagemError, match="after_limit"):
        ToolAgent(client, "defect", after_limit="ignore")  # type: ignore[arg-type]
    with pytest.raises(StratagemError, match="max_tool_calls"):
        ToolAgent(client, "defect", max_tool_calls=-1)


def test_requests_with_tool_calls_are_plain_data() -> None:
    # The response cache hashes requests, tool calls and results included.
    client = FakeClient([call(), "{'DECISION': 'cooperate'}"])
    asyncio.run(ToolAgent(client, "compute").act(observation()))
    data = client.requests[1].to_json()
    assert data["messages"][2]["tool_calls"][0]["name"] == LAWYER_TOOL_NAME
    assert data["messages"][3]["role"] == "tool"


# -- the embedded model ----------------------------------------------------------------------------


def test_real_model_plays_two_rounds_and_answers() -> None:
    from stratagem.llm.pipeline import build_client
    from stratagem.llm.registry import ModelConfig

    client = build_client(ModelConfig(model="local/gemma-3-270m"))
    agent = ToolAgent(client, "cooperate", max_tokens=16, max_reasks=0)
    started = time.perf_counter()
    episode = asyncio.run(play_with_questions(agent, "dilemma", rounds=2, ask_after={2}))
    elapsed = time.perf_counter() - started
    assert len(episode.decisions) == 2
    for decision in episode.decisions:
        assert decision.action in ("cooperate", "defect") if decision.valid else decision.error
    assert [[a.question_id for a in answers] for answers in episode.answers] == [
        ["Q1", "Q2", "Q3", "Q4"]
    ]
    for answers in episode.answers:
        for a in answers:
            assert a.relevant == (a.parsed is not None)
            assert a.attempts >= 1
    print(
        f"tool agent, 270M: {sum(d.valid for d in episode.decisions)}/2 valid, "
        f"{sum(bool(d.extra['tool_called']) for d in episode.decisions)}/2 called the tool, "
        f"{sum(a.relevant for answers in episode.answers for a in answers)}/4 answers readable, "
        f"{elapsed:.1f} s"
    )
