"""Self-consistency (seed-003 §3.5, Wang et al. 2023): sample k decisions, play the majority move.

As the study's code does it: k copies of the player, each with a copy of the chat so far, each
running the whole validate-and-re-ask loop; the modal move wins (ties broken at random); among
the samples that played it one is picked at random and its chat is the one kept, so the model
later sees only that sample's reply. The round costs the tokens of all k samples, re-asks
included (§3.6), which is why self-consistency rows are about k times less efficient (§5.4).
An invalid sample votes for "no move"; if that wins, the round is invalid.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, Self, runtime_checkable

from stratagem.agents.base import Agent, Decision
from stratagem.errors import StratagemError
from stratagem.games.base import Event, Observation
from stratagem.games.spaces import Action

if TYPE_CHECKING:
    from stratagem.agents.questions import Answer

SEED003_SAMPLES = {2: 3, 3: 5}
"""seed-003 §2.1: k = 3 samples in the PD family (2 actions), 5 in RPS (3 actions)."""

_SEED_STRIDE = 1_000_003
"""Sample i of an episode requests with seed `episode seed * stride + i + 1`: distinct per sample
(else the response cache would answer all k with one reply) and reproducible."""


@runtime_checkable
class Forkable(Protocol):
    """An agent that can be copied mid-episode, the copy sampling with its own seed."""

    name: str

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None: ...

    def request_seed(self) -> int: ...

    def fork(self, seed: int) -> Self: ...

    def adopt(self, other: Self) -> None: ...

    async def act(self, observation: Observation) -> Decision: ...

    async def observe(self, observation: Observation, events: Sequence[Event] = ()) -> None: ...

    async def debrief(self, observation: Observation) -> Sequence[Answer]: ...

    @property
    def debriefs(self) -> bool: ...


class SelfConsistentAgent(Agent):
    """Wraps an LLM agent that can fork; `samples` (k >= 2) decisions per round, majority vote."""

    def __init__(self, base: Forkable, samples: int) -> None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 2:
            raise StratagemError(f"self-consistency needs samples >= 2, got {samples!r}")
        self.base = base
        self.samples = samples
        self.name = f"sc{samples}:{base.name}"
        self._rng = random.Random(0)
        self._seed = 0

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        self.base.reset(seed, episode_id)
        self._seed = self.base.request_seed()
        self._rng = random.Random(seed)

    async def act(self, observation: Observation) -> Decision:
        forks = [
            self.base.fork((self._seed * _SEED_STRIDE + i + 1) % 2**31) for i in range(self.samples)
        ]
        decisions = await asyncio.gather(*(f.act(observation) for f in forks))
        moves: list[Action | None] = [d.action if d.valid else None for d in decisions]
        counts = Counter(moves)
        top = max(counts.values())
        # seed-003 §3.5: the modal move, ties broken at random; then a random sample with it.
        mode = self._rng.choice([m for m in counts if counts[m] == top])
        chosen = self._rng.choice([i for i, m in enumerate(moves) if m == mode])
        self.base.adopt(forks[chosen])
        pick = decisions[chosen]
        return replace(
            pick,
            attempts=sum(d.attempts for d in decisions),
            tokens=sum(d.tokens for d in decisions),
            notes={
                **pick.notes,
                "self_consistency": {
                    "moves": [None if m is None else str(m) for m in moves],
                    "chosen": chosen,
                    "samples": self.samples,
                },
            },
        )

    async def observe(self, observation: Observation, events: Sequence[Event] = ()) -> None:
        await self.base.observe(observation, events)

    async def debrief(self, observation: Observation) -> Sequence[Answer]:
        """Questions are answered by the kept sample's chat, i.e. the base agent."""
        return await self.base.debrief(observation)

    @property
    def debriefs(self) -> bool:
        return self.base.debriefs
