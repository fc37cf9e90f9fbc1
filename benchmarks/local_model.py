"""Benchmark: the embedded model decoded by llama-cpp-python and by stratagem, side by side.

The workload is seed-001's: the plain, tool (Nash lawyer) and debate agents each play a few
rounds of the Dilemma against TitForTat and answer the four comprehension questions after every
round, through the real agents, prompts and grammars. Each agent plays three times on the same
loaded model:

- `llama-cpp`: every request decoded by `Llama.create_completion` with the request's grammar (what
  the local provider did before it had its own loop): the grammar runs over the whole vocabulary
  at every token, a constrained reply runs on through the whitespace its grammar still allows,
  and only the previous call's KV cache is reused;
- `stratagem, no slots`: `local_decoding.generate` (grammar tested only on the candidates sampling
  can pick, forced text unsampled, replies end when whole), live KV cache only;
- `stratagem`: the same plus saved KV states (`local_slots`), the default.

Replies differ between decoders (different random draws), so the number of calls differs too:
the table shows calls, seconds, and seconds per call, and the ratios are per call.

    .venv/bin/python benchmarks/local_model.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass

from stratagem.agents import Agent, DebateAgent, PlainLLMAgent, Prompter, StrategyAgent, ToolAgent
from stratagem.agents.questions import ask_questions
from stratagem.games.catalog import get_stage
from stratagem.games.matrix.repeated import RepeatedGame, RepeatedState
from stratagem.llm.pipeline import CallContext
from stratagem.llm.providers.local import (
    _STOP,
    LocalProvider,
    build_grammar,
    parse_reply,
    render_prompt,
)
from stratagem.llm.types import Request, Response, Usage
from stratagem.strategies.registry import get_strategy


@dataclass
class Tally:
    calls: int = 0
    seconds: float = 0.0
    valid: int = 0
    decisions: int = 0
    answers: int = 0
    readable: int = 0


class BenchClient:
    """The agents' model client, bare (no cache, no retries): one provider call per request."""

    def __init__(self, provider: LocalProvider, decoder: str, tally: Tally) -> None:
        self.model = provider.model
        self.provider = provider
        self.decoder = decoder
        self.tally = tally

    async def generate(
        self, request: Request, context: CallContext | None = None
    ) -> list[Response]:
        started = time.perf_counter()
        if self.decoder == "llama-cpp":
            response = reference_completion(self.provider, request)
        else:
            response = self.provider.complete_sync(request, 0)
        self.tally.calls += 1
        self.tally.seconds += time.perf_counter() - started
        return [response]


def reference_completion(provider: LocalProvider, request: Request) -> Response:
    """What the local provider did before its own decoding loop: `create_completion` with the
    request's grammar, the JSON whitespace the schema converter allows included."""
    from llama_cpp.llama_grammar import LlamaGrammar

    text = build_grammar(request)
    if text is not None:  # undo the compact-JSON change: the converter's own space rule
        text = text.replace('space ::= ""', 'space ::= " "?')
    grammar = None if text is None else LlamaGrammar.from_string(text, verbose=False)
    llm = provider._loaded().llm
    out = llm.create_completion(
        render_prompt(request.messages, request.tools),
        max_tokens=request.max_tokens or 256,
        temperature=0.8 if request.temperature is None else request.temperature,
        top_k=40,
        top_p=0.95,
        seed=request.seed or 0,
        stop=[] if grammar is not None else _STOP,
        grammar=grammar,
    )
    assert isinstance(out, dict)
    reply, calls = parse_reply(str(out["choices"][0]["text"]), request)
    usage = Usage(out["usage"]["prompt_tokens"], out["usage"]["completion_tokens"])
    return Response(text=reply, tool_calls=calls, usage=usage, model=provider.model)


def make_agent(kind: str, client: BenchClient) -> Agent:
    prompter = Prompter("prisoner", "json", "prompt")
    if kind == "plain":
        return PlainLLMAgent(client, prompter, max_reasks=1, max_tokens=16)
    if kind == "tool":
        return ToolAgent(client, "compute", prompter, max_reasks=1, max_tokens=48)
    return DebateAgent(client, "cooperate", prompter, max_reasks=1, max_tokens=24, max_turns=2)


async def play(agent: Agent, rounds: int, tally: Tally) -> None:
    stage = get_stage("dilemma")
    state = RepeatedGame(stage, rounds).initial_state(0)
    opponent = StrategyAgent(get_strategy("TitForTat"))
    agent.reset(0, "bench")
    opponent.reset(0, "bench")
    while not state.is_terminal():
        mine = await agent.act(state.observation(0))
        theirs = await opponent.act(state.observation(1))
        tally.decisions += 1
        tally.valid += mine.valid
        nxt, _ = state.forfeit({0: mine.action, 1: theirs.action})
        assert isinstance(nxt, RepeatedState)
        state = nxt
        for answer in await ask_questions(agent, state.observation(0)):
            tally.answers += 1
            tally.readable += answer.relevant


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    setups = {
        "llama-cpp": LocalProvider(kv_slots=0),
        "stratagem, no slots": LocalProvider(kv_slots=0),
        "stratagem": LocalProvider(kv_slots=16),
    }
    setups["stratagem"].complete_sync(Request(messages=(), max_tokens=1), 0)  # load the model
    print(f"seed-001 workload: {args.rounds} rounds of the Dilemma against TitForTat, four "
          "questions after every round\n")  # fmt: skip
    header = f"{'agent':<8}{'decoder':<22}{'calls':>6}{'seconds':>9}{'s/call':>8}"
    print(header + f"{'valid':>8}{'readable':>10}{'speed-up/call':>15}")
    for kind in ("plain", "tool", "debate"):
        baseline: float | None = None
        for decoder, provider in setups.items():
            provider.reset()
            provider._loaded().slots.clear()
            tally = Tally()
            client = BenchClient(provider, decoder, tally)
            asyncio.run(play(make_agent(kind, client), args.rounds, tally))
            per_call = tally.seconds / max(tally.calls, 1)
            baseline = baseline or per_call
            print(
                f"{kind:<8}{decoder:<22}{tally.calls:>6}{tally.seconds:>9.1f}{per_call:>8.2f}"
                f"{f'{tally.valid}/{tally.decisions}':>8}"
                f"{f'{tally.readable}/{tally.answers}':>10}{baseline / per_call:>14.1f}x"
            )


if __name__ == "__main__":
    main()
