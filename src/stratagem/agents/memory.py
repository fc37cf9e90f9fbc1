"""What an LLM agent remembers between its calls within an episode (seed-001 AMBIG-12).

The thesis does not say whether its Ag2 agents kept their message history across rounds and
questions, and its hints point both ways, so architectures that hold conversations take it as an
option: "fresh" starts every decision and every question from the system prompt(s) and the
current prompt (with the history summary); "episode" keeps one growing conversation per episode.
"""

from __future__ import annotations

from typing import Literal, get_args

from stratagem.errors import StratagemError

Memory = Literal["fresh", "episode"]
MEMORIES: tuple[Memory, ...] = get_args(Memory)


def check_memory(value: str) -> Memory:
    """`value` as a `Memory`, or a user error listing the valid ones."""
    for memory in MEMORIES:
        if value == memory:
            return memory
    raise StratagemError(f"unknown memory '{value}': use {', '.join(MEMORIES)}")
