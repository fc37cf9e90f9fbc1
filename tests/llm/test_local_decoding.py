"""stratagem's own decoding loop for the embedded model, checked against llama-cpp-python's.

The loop must pick what the grammar-first chain would pick (checked exactly at temperature 0,
where both are deterministic), end constrained replies as soon as they are whole, append the text
a grammar forces without sampling it, and restore saved KV states bit-exactly.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from stratagem.llm.providers.local import LocalProvider, build_grammar, render_prompt
from stratagem.llm.providers.local_decoding import Sampling, generate
from stratagem.llm.providers.local_slots import common_prefix
from stratagem.llm.types import Message, Request

GREEDY = Sampling(temperature=0.0, top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.0, seed=0)
PROMPTS = [
    "You are a suspect. Your partner may betray you. Choose Cooperate or Defect.",
    "Round 3 of 10. Your partner defected twice. Reply with your move.",
    "Answer with one word: will you stay loyal to your partner?",
]
LABELS = ("Cooperate", "Defect", "Confess")


@pytest.fixture(scope="module")
def provider() -> LocalProvider:
    return LocalProvider(kv_slots=0)


def messages(text: str) -> tuple[Message, ...]:
    return (Message("system", "You are playing a game."), Message("user", text))


@pytest.mark.parametrize("text", PROMPTS)
def test_greedy_choice_matches_llama_cpp_grammar_first_decoding(
    provider: LocalProvider, text: str
) -> None:
    request = Request(messages=messages(text), choices=LABELS, temperature=0.0)
    grammar = build_grammar(request)
    assert grammar is not None
    from llama_cpp.llama_grammar import LlamaGrammar

    llm = provider._loaded().llm
    prompt = render_prompt(request.messages)
    llm.reset()
    theirs = llm.create_completion(
        prompt, max_tokens=8, temperature=0.0, grammar=LlamaGrammar.from_string(grammar)
    )
    tokens = llm.tokenize(prompt.encode(), add_bos=True, special=False)
    # Evaluated in the same batches: llama.cpp's logits differ in the last digits with the split.
    llm.reset()
    ours = generate(llm, tokens, max_tokens=8, sampling=GREEDY, grammar=grammar)
    assert isinstance(theirs, dict)
    assert ours.text.strip() == theirs["choices"][0]["text"].strip()
    assert ours.text.strip() in LABELS and ours.finish == "stop"


def test_a_json_reply_stops_at_its_closing_brace_and_its_keys_are_forced(
    provider: LocalProvider,
) -> None:
    schema = {
        "type": "object",
        "properties": {"DECISION": {"enum": ["Cooperate", "Defect"]}},
        "required": ["DECISION"],
    }
    request = Request(messages=messages(PROMPTS[0]), json_schema=schema, max_tokens=40)
    for sample in range(3):
        response = provider.complete_sync(request, sample)
        assert json.loads(response.text)["DECISION"] in ("Cooperate", "Defect")
        assert response.text.endswith("}")
        # `{"DECISION":"Defect"}` is 8 or 9 tokens; before, the reply ran to max_tokens.
        assert response.usage.output_tokens <= 12


def test_forced_text_is_not_sampled(provider: LocalProvider) -> None:
    """With a one-label grammar every character is forced: the model picks nothing."""
    llm = provider._loaded().llm
    grammar = build_grammar(Request(messages=(), choices=("Cooperate with my partner",)))
    assert grammar is not None
    tokens = llm.tokenize(render_prompt(messages(PROMPTS[1])).encode(), add_bos=True)
    hot = Sampling(temperature=5.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0, seed=3)
    out = generate(llm, tokens, max_tokens=30, sampling=hot, grammar=grammar,
                   done=lambda text: text.strip() == "Cooperate with my partner")  # fmt: skip
    assert out.text.strip() == "Cooperate with my partner"


def test_unconstrained_text_is_cut_at_stop_strings(provider: LocalProvider) -> None:
    llm = provider._loaded().llm
    tokens = llm.tokenize(b"List three fruits, one per line:\n1.", add_bos=True)
    out = generate(llm, tokens, max_tokens=40, sampling=GREEDY, stop=["\n"])
    assert "\n" not in out.text and out.finish == "stop"


def test_saved_states_make_interleaved_conversations_cheap_and_change_nothing() -> None:
    """A conversation resumed after another one ran in between (as a debate's suspect and lawyer
    alternate) restores its saved state: it evaluates only its new turn, and replies exactly as
    if nothing had run in between."""
    suspect = Message("system", "You are a suspect under interrogation. " * 12)
    lawyer = Message("system", "You are a lawyer advising a client. " * 12)
    first = Request(messages=(suspect, Message("user", "What happened?")), max_tokens=10,
                    temperature=0.0)  # fmt: skip
    other = Request(messages=(lawyer, Message("user", "Advise me.")), max_tokens=10,
                    temperature=0.0)  # fmt: skip

    def resumed(provider: LocalProvider, interleave: bool) -> tuple[str, int]:
        provider.reset()
        provider._loaded().slots.clear()
        reply = provider.complete_sync(first, 0).text
        if interleave:
            provider.complete_sync(other, 0)
        follow = Request(
            messages=(*first.messages, Message("assistant", reply), Message("user", "And then?")),
            max_tokens=10,
            temperature=0.0,
        )
        text = provider.complete_sync(follow, 0).text
        return text, provider.stats.last_evaluated

    provider = LocalProvider(kv_slots=8)
    direct, direct_evaluated = resumed(provider, interleave=False)
    restored_before = provider._loaded().slots.restored
    after_other, evaluated = resumed(provider, interleave=True)
    assert after_other == direct
    assert evaluated == direct_evaluated < 40
    assert provider._loaded().slots.restored == restored_before + 1


def test_common_prefix() -> None:
    a = np.array([1, 2, 3, 4])
    assert common_prefix(a, np.array([1, 2, 9])) == 2
    assert common_prefix(a, a[:2]) == 2
    assert common_prefix(a, np.array([7])) == 0


def test_when_a_constrained_reply_is_whole() -> None:
    from stratagem.llm.providers.local import reply_complete
    from stratagem.llm.types import Tool

    assert reply_complete(Request(messages=())) is None  # free text: stop strings only
    labels = reply_complete(Request(messages=(), choices=("1", "10", "Defect")))
    assert labels is not None
    assert labels(" Defect") and not labels("Def")
    assert not labels("1")  # "10" may still follow
    assert labels("10")
    schema = reply_complete(Request(messages=(), json_schema={"type": "object"}))
    assert schema is not None
    assert schema('{"DECISION":"Defect"}') and not schema('{"DECISION":"Def')
    tool = Tool("t", "a tool", {"type": "object"})
    calls = reply_complete(Request(messages=(), tools=(tool,)))
    assert calls is not None
    assert calls('{"tool":"t","arguments":{}}') and calls("I defect.\n")
    assert not calls("I defect")
