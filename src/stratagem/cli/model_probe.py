"""`python -m stratagem.cli.model_probe MODEL`: load a model and ask it one constrained question,
printing the answer. `stratagem doctor` runs it in a child process, so a model library that
crashes (SIGILL from a llama.cpp built for another CPU) is reported instead of ending doctor."""

from __future__ import annotations

import asyncio
import sys

from stratagem.llm.registry import ModelConfig, create_provider
from stratagem.llm.types import Message, Request

QUESTION = Request(
    messages=(Message("user", "Two players: cooperate or defect? Answer with one word."),),
    choices=("cooperate", "defect"),
    max_tokens=8,
    seed=0,
)


async def _ask(model: str) -> str:
    provider = create_provider(ModelConfig(model=model))
    try:
        return (await provider.complete(QUESTION, 0)).text
    finally:
        await provider.aclose()


def main(argv: list[str]) -> int:
    try:
        print(asyncio.run(_ask(argv[0])))
    except Exception as exc:  # whatever stops the model: one line for doctor to show
        text = str(exc).strip().splitlines()
        print(text[0] if text else type(exc).__name__, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
