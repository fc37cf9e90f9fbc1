"""seed-001 comprehension questions (§7): verbatim texts, parsing, every architecture asked."""

from __future__ import annotations

import asyncio
import time

import pytest
from arch_support import FakeClient, call, observation, play_with_questions

from stratagem.agents import DebateAgent, PlainLLMAgent, Prompter, ToolAgent
from stratagem.agents.questions import (
    QUESTIONS,
    AnswerParser,
    PlainAnswerer,
    answer_schema,
    answerer_for,
    ask_questions,
    get_question,
    parse_answer,
)
from stratagem.errors import StratagemError

# seed-001 §6.1, Fig 2.4 with Q1, after two rounds.
PLAIN_Q1 = """Your task is to answer this question:
What is going to be your partner's next move?
(Express the answer as ANSWER:<ANSWER>)
Think about this carefully.

OUTPUT FORMAT:
Once you are ready to provide an answer, respond with ONLY this JSON format and nothing else:
{'ANSWER': '<YOUR_ANSWER>'}

ADDITIONAL INFORMATION:
Summary of the last 2 interrogation rounds:
Round 1 - Suspect chose: Cooperate, Suspect's partner chose: Cooperate
Round 2 - Suspect chose: Defect, Suspect's partner chose: Cooperate"""


def test_the_four_questions_are_verbatim() -> None:
    assert [(q.id, q.name) for q in QUESTIONS] == [
        ("Q1", "Opponent intention prediction"),
        ("Q2", "Understanding of immediate information"),
        ("Q3", "Memory of initial context"),
        ("Q4", "Arithmetical computation"),
    ]
    assert [q.prompt for q in QUESTIONS] == [
        "What is going to be your partner's next move?\n(Express the answer as ANSWER:<ANSWER>)",
        "How many rounds have you gone through so far?\n(Express the answer as ANSWER:<N_ROUNDS>)",
        "Which are the maximum and minimum number of years you may get from this round?\n"
        "(Express the answer as ANSWER: MAXIMUM:<MAX>, MINIMUM:<MIN>)",
        "How many years of sentence have you received so far?\n"
        "(Express the answer as ANSWER:<TOTAL_YEARS>)",
    ]
    assert get_question("Q3") is QUESTIONS[2]
    with pytest.raises(StratagemError, match="unknown question 'Q5'"):
        get_question("Q5")


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("{'ANSWER': 'Defect'}", "Defect"),
        ('{"ANSWER": 3}', "3"),
        ("Sure. {'answer': '2'}", "2"),
        ("{'ANSWER': 'MAXIMUM:15, MINIMUM:0'}", "MAXIMUM:15, MINIMUM:0"),
        ("ANSWER: MAXIMUM:15, MINIMUM:0", "MAXIMUM:15, MINIMUM:0"),
        ("ANSWER:20", "20"),
        ('{"ANSWER": "Coop', "Coop"),  # cut off by max_tokens
        ("{'ANSWER': '1'} then {'ANSWER': '2'}", "2"),  # the last one wins
        ("{'ANSWER': '<YOUR_ANSWER>'}", None),  # the prompt's placeholder
        ("{'ANSWER': ''}", None),
        ("I think my partner will cooperate.", None),
        ("", None),
    ],
)
def test_answers_are_parsed_tolerantly(text: str, parsed: str | None) -> None:
    assert parse_answer(text) == parsed


def test_plain_agent_questions_use_fig_2_4() -> None:
    client = FakeClient(
        ["{'ANSWER': 'Cooperate'}", "{'ANSWER': '2'}", "no idea", "{'ANSWER': '5'}", "x"]
    )
    agent = PlainLLMAgent(client, Prompter("prisoner", output="json"), max_reasks=1, seed=9)
    agent.reset(0, "ep")
    answers = asyncio.run(ask_questions(agent, observation(played=[(0, 0), (1, 0)])))
    assert [a.question_id for a in answers] == ["Q1", "Q2", "Q3", "Q4"]
    assert [a.parsed for a in answers] == ["Cooperate", "2", "5", None]
    assert [a.relevant for a in answers] == [True, True, True, False]
    assert [a.attempts for a in answers] == [1, 1, 2, 2]
    assert answers[2].raw == "{'ANSWER': '5'}"
    assert answers[3].raw == "x" and answers[3].error is not None
    first = client.requests[0]
    assert [m.role for m in first.messages] == ["system", "user"]
    assert first.messages[1].content == PLAIN_Q1
    assert first.json_schema == answer_schema() and first.seed == 9
    assert {(c.episode_id, c.round) for c in client.contexts} == {("ep", 2)}
    assert [c.purpose for c in client.contexts][:3] == ["question", "question", "question"]
    assert answers[0].question == QUESTIONS[0].prompt
    assert answers[0].to_json()["parsed"] == "Cooperate"


def test_a_bare_client_is_asked_through_the_plain_prompts() -> None:
    client = FakeClient(["{'ANSWER': '1'}"])
    answers = asyncio.run(ask_questions(client, observation(played=[(0, 0)]), QUESTIONS[1:2]))
    assert [(a.question_id, a.parsed) for a in answers] == [("Q2", "1")]
    assert isinstance(answerer_for(client), PlainAnswerer)


def test_tool_and_debate_agents_answer_through_their_own_prompts() -> None:
    tool = ToolAgent(FakeClient([call(), "{'ANSWER': '0'}"]), "cooperate")
    debate = DebateAgent(FakeClient(["Zero.", "{'ANSWER': '0'}"]), "cooperate")
    assert answerer_for(tool) is tool and answerer_for(debate) is debate
    obs = observation(played=[(0, 0)])
    (from_tool,) = asyncio.run(ask_questions(tool, obs, QUESTIONS[3:]))
    (from_debate,) = asyncio.run(ask_questions(debate, obs, QUESTIONS[3:]))
    assert (from_tool.parsed, from_tool.attempts, from_tool.extra["tool_called"]) == ("0", 2, True)
    assert (from_debate.parsed, from_debate.attempts) == ("0", 2)


def test_something_that_cannot_answer_is_a_user_error() -> None:
    with pytest.raises(StratagemError, match="cannot answer"):
        answerer_for(object())  # type: ignore[arg-type]
    with pytest.raises(StratagemError, match="repeated matrix games"):
        asyncio.run(PlainAnswerer(FakeClient(["x"])).answer(QUESTIONS[0], object()))  # type: ignore[arg-type]


def test_parser_follows_the_parser_protocol() -> None:
    parser = AnswerParser()
    assert parser.parse("{'ANSWER': 'x'}", ("ignored",)) == "x"
    assert parser.name == "json"


# -- the embedded model ----------------------------------------------------------------------------


def test_real_model_plain_agent_plays_two_rounds_and_answers() -> None:
    from stratagem.llm.pipeline import build_client
    from stratagem.llm.registry import ModelConfig

    client = build_client(ModelConfig(model="local/gemma-3-270m"))
    agent = PlainLLMAgent(
        client, Prompter("prisoner", output="json"), max_reasks=0, max_tokens=12, temperature=0.0
    )
    started = time.perf_counter()
    episode = asyncio.run(play_with_questions(agent, "delight", rounds=2, ask_after={2}))
    elapsed = time.perf_counter() - started
    assert len(episode.decisions) == 2
    for decision in episode.decisions:
        assert decision.action in ("cooperate", "defect") if decision.valid else decision.error
    answers = [a for round_answers in episode.answers for a in round_answers]
    assert [a.question_id for a in answers] == ["Q1", "Q2", "Q3", "Q4"]
    assert all(a.relevant == (a.parsed is not None) and a.attempts == 1 for a in answers)
    print(
        f"plain agent, 270M: {sum(d.valid for d in episode.decisions)}/2 valid, "
        f"{sum(a.relevant for a in answers)}/4 answers readable, "
        f"answers {[a.parsed for a in answers]}, {elapsed:.1f} s"
    )
