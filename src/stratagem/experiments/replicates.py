"""Replicate cells: every cell of the grid played again, unchanged, to measure the noise floor.

Is a difference between two cells more than two runs of one cell would show? The file's
`replicates: k` plays, beside every cell, k null copies of it (issue 35; the "null variant" of
Kaggle's game-harness prompt ablations): the same model, agents, prompts, game, opponents,
rounds, seeds and repetitions. A replicate episode differs from its cell's episode in one thing,
its replicate number, which is part of its id and so of its seats' sampling seeds
(`experiments.seating` draws every seat's seed from the episode id; the request seed enters
the response cache key, so no answer is replayed from the cell's). The game's seed is the
cell's own: a comparison pairs its cells' episodes by seed and repetition, so the chance moves
they share cancel in its differences, and the replicate, paired with its cell the same way, is
the difference the same comparison would show between two identical cells
(`analysis.noise_floor`).

Episode ids: the replicate number enters an episode's key only when it is above 0, so the
cells' own episodes keep their ids (a finished experiment resumes without playing them again,
and adding `replicates:` to it plays only the copies). A model that answers a prompt the same
way whatever the seed (greedy decoding, temperature 0 where the provider honours it) plays its
copies as its cell: their differences are 0, and so is the noise floor, truly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KEY = "replicate"
"""The field of an episode's spec that holds its replicate number (absent for the cell's own)."""


def replicate_of(spec: Mapping[str, Any]) -> int:
    """The replicate number a stored episode spec names: 0 for a cell's own episode (a file
    without `replicates:`, an import), k >= 1 for its k-th null copy."""
    value = spec.get(KEY)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value


def replicated(agent: str, replicate: int) -> str:
    """An agent's name in a cell key: `zs [replicate 1]` for a copy, unchanged for the cell's
    own, so that a replicate is a cell of its own in every table that shows cells."""
    return agent if replicate == 0 else f"{agent} [{KEY} {replicate}]"


def unreplicated(agent: str, replicate: int) -> str:
    """The cell's own agent name from a copy's (`replicated` undone; the copy's number known)."""
    suffix = replicated("", replicate)
    return agent[: -len(suffix)] if suffix and agent.endswith(suffix) else agent


__all__ = ["KEY", "replicate_of", "replicated", "unreplicated"]
