"""The embedded model for real: llama.cpp running the shipped Gemma 3 270M GGUF on the CPU.

Replies are kept short (a few tokens) so the whole module takes a few seconds.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import pytest

from stratagem.llm.errors import PermanentError
from stratagem.llm.providers.local import (
    LocalProvider,
    build_grammar,
    parse_reply,
    render_prompt,
)
from stratagem.llm.registry import ModelConfig, create_provider
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall

SYSTEM = Message(
    "system",
    "You are playing a repeated prisoner's dilemma. Each round you choose cooperate or defect.",
)
MOVES = ("cooperate", "defect")
HISTORY_TOOL = Tool(
    "get_history",
    "Return the moves played so far",
    {"type": "object", "properties": {"rounds": {"type": "integer"}}, "required": ["rounds"]},
)


@pytest.fixture(scope="module")
def provider() -> LocalProvider:
    return LocalProvider()


def run(provider: LocalProvider, request: Request, sample: int = 0) -> Response:
    return asyncio.run(provider.complete(request, sample))


# --- without the model -------------------------------------------------------------------------


def test_transcript_of_a_conversation_is_a_prefix_of_its_continuation() -> None:
    first = (SYSTEM, Message("user", "Round 1. Your move?"))
    later = (*first, Message("assistant", "defect"), Message("user", "Round 2. Your move?"))
    short, long = render_prompt(first), render_prompt(later)
    assert short.endswith("\n\nAssistant:")
    assert long.startswith(short)
    assert "User: Round 2. Your move?\n\nAssistant:" in long


def test_tool_calls_and_results_are_rendered_in_the_call_protocol() -> None:
    call = ToolCall("c1", "get_history", {"rounds": 2})
    prompt = render_prompt(
        (
            SYSTEM,
            Message("user", "Look first."),
            Message("assistant", "", (call,)),
            Message("tool", "C, D", tool_call_id="c1"),
        ),
        (HISTORY_TOOL,),
    )
    assert prompt.index("Tools you can call:") < prompt.index("User: Look first.")
    assert 'Assistant: {"tool": "get_history", "arguments": {"rounds": 2}}' in prompt
    assert "Tool result (get_history): C, D" in prompt


def test_choice_grammar_escapes_labels() -> None:
    grammar = build_grammar(Request((SYSTEM,), choices=('say "hi"', "back\\slash")))
    assert grammar is not None
    assert r'"say \"hi\""' in grammar and r'"back\\slash"' in grammar
    assert build_grammar(Request((SYSTEM,))) is None


def test_parse_reply_recognises_only_offered_tools() -> None:
    request = Request((SYSTEM,), tools=(HISTORY_TOOL,))
    text, calls = parse_reply(' {"tool": "get_history", "arguments": {"rounds": 1}}', request)
    assert text == "" and calls == (ToolCall("call_1_0", "get_history", {"rounds": 1}),)
    text, calls = parse_reply('{"tool": "other", "arguments": {}}', request)
    assert calls == () and text.startswith("{")
    assert parse_reply(" defect", request) == ("defect", ())
    # The grammar lets a raw newline into a string; the call is still a call (measured: the
    # 270M model's item_info calls in TradeCraft), not text to be parsed as the answer.
    text, calls = parse_reply('{"tool": "get_history", "arguments": {"rounds": "a\nb"}}', request)
    assert text == "" and calls[0].arguments == {"rounds": "a\nb"}


def test_unknown_params_and_missing_files_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(PermanentError, match="unknown params bogus"):
        create_provider(ModelConfig(model="local/gemma-3-270m", params={"bogus": 1}))
    with pytest.raises(PermanentError, match="No such file or directory"):
        create_provider(ModelConfig(model="local/mine", path=str(tmp_path / "missing.gguf")))


# --- with the model ----------------------------------------------------------------------------


def test_registry_creates_the_embedded_model() -> None:
    created = create_provider(ModelConfig(model="local/gemma-3-270m", params={"kv_reuse": False}))
    assert isinstance(created, LocalProvider)
    assert created.path.name.endswith(".gguf") and not created.kv_reuse


def test_constrained_choice_returns_a_label(provider: LocalProvider) -> None:
    request = Request((SYSTEM, Message("user", "Round 1. Your move?")), choices=MOVES, seed=1)
    for sample in range(3):
        response = run(provider, request, sample)
        assert response.text in MOVES
        assert response.usage.input_tokens > 10 and response.usage.output_tokens >= 1
        assert response.latency_s > 0 and response.model == "local/gemma-3-270m"


def test_json_schema_output_parses_and_validates(provider: LocalProvider) -> None:
    schema = {
        "type": "object",
        "properties": {"move": {"enum": ["C", "D"]}, "sure": {"type": "boolean"}},
        "required": ["move", "sure"],
    }
    request = Request(
        (SYSTEM, Message("user", "Give your move as JSON.")),
        json_schema=schema,
        seed=2,
        max_tokens=40,
    )
    value = json.loads(run(provider, request).text)
    assert set(value) == {"move", "sure"}
    assert value["move"] in ("C", "D") and isinstance(value["sure"], bool)


def test_tool_call_prompt_returns_a_parsed_tool_call(provider: LocalProvider) -> None:
    # A base model follows a pattern: two earlier rounds in which it looked at the history.
    messages = [SYSTEM]
    results = ["you cooperate, they defect", "you defect, they defect"]
    for i, result in enumerate(results):
        call = ToolCall(f"c{i}", "get_history", {"rounds": i + 1})
        messages += [
            Message("user", f"Round {i + 2}. Look at the history first."),
            Message("assistant", "", (call,)),
            Message("tool", f"Round {i + 1}: {result}.", tool_call_id=call.id),
            Message("assistant", "defect"),
        ]
    messages.append(Message("user", "Round 4. Look at the history first."))
    request = Request(tuple(messages), tools=(HISTORY_TOOL,), temperature=0.0, max_tokens=24)
    response = run(provider, request)
    assert response.text == ""
    assert len(response.tool_calls) == 1
    call = response.tool_calls[0]
    assert call.name == "get_history" and isinstance(call.arguments["rounds"], int)


def test_same_seed_replays_and_samples_differ(provider: LocalProvider) -> None:
    request = Request(
        (SYSTEM, Message("user", "Describe your plan.")), temperature=1.0, seed=7, max_tokens=10
    )
    first = run(provider, request, 0)
    assert run(provider, request, 0).text == first.text
    texts = {run(provider, request, sample).text for sample in range(1, 4)}
    assert len(texts | {first.text}) > 1


def test_concurrent_calls_are_serialised_safely(provider: LocalProvider) -> None:
    request = Request((SYSTEM, Message("user", "Your move?")), choices=MOVES, seed=3)

    async def both() -> list[str]:
        replies = await asyncio.gather(provider.complete(request, 0), provider.complete(request, 1))
        return [r.text for r in replies]

    assert all(text in MOVES for text in asyncio.run(both()))


RULES = Message(
    "system",
    "You are playing a repeated prisoner's dilemma against the same opponent. Each round you both "
    "choose cooperate or defect at the same time. If you both cooperate you each get 3 points; if "
    "you both defect you each get 1 point; if one defects and the other cooperates, the defector "
    "gets 5 points and the cooperator gets 0. Your goal is to score as many points as you can.",
)


def play_rounds(player: LocalProvider, rounds: int) -> list[tuple[int, int]]:
    """A short game against always-defect; (prompt tokens submitted, evaluated) per round."""
    messages = [RULES]
    tokens = []
    for round_ in range(1, rounds + 1):
        messages.append(Message("user", f"Round {round_}. Your move?"))
        response = run(player, Request(tuple(messages), choices=MOVES, seed=round_))
        assert response.text in MOVES
        tokens.append((player.stats.last_submitted, player.stats.last_evaluated))
        messages.append(Message("assistant", response.text))
        messages.append(Message("user", "Your opponent played defect."))
    return tokens


def test_kv_cache_reuse_evaluates_only_the_new_tokens(provider: LocalProvider) -> None:
    provider.reset()
    with_reuse = play_rounds(provider, 4)
    assert with_reuse[0][1] == with_reuse[0][0]  # a cold cache evaluates the whole prompt
    for (before, _), (submitted, evaluated) in itertools.pairwise(with_reuse):
        # Only what follows the previous prompt: the reply, the news, the next question.
        assert evaluated <= submitted - before + 2
        assert evaluated < submitted / 3
    assert provider.stats.prompt_tokens_reused > 0

    no_reuse = LocalProvider(kv_reuse=False)
    without = play_rounds(no_reuse, 3)
    assert all(evaluated == submitted for submitted, evaluated in without)
