"""The attitude: the decision an assisting unit suggests, whether or not it is a good one.

seed-001 §4.2: with `cooperate` or `defect` the suggestion is that action; with `compute` the
assistant is asked to work the best option out itself. The tool architecture injects it through
the tool it attaches (Fixed or Nash, §6.2), the debate architecture through the lawyer's prompt
(§6.3); the plain agent has none.
"""

from __future__ import annotations

from typing import Literal, get_args

from stratagem.errors import StratagemError

Attitude = Literal["cooperate", "defect", "compute"]
ATTITUDES: tuple[Attitude, ...] = get_args(Attitude)


def check_attitude(value: str) -> Attitude:
    """`value` as an `Attitude`, or a user error listing the valid ones."""
    for attitude in ATTITUDES:
        if value == attitude:
            return attitude
    raise StratagemError(f"unknown attitude '{value}': use {', '.join(ATTITUDES)}")


def suggested_index(attitude: Attitude) -> int | None:
    """The action a fixed attitude suggests, as an index in the (cooperate, defect) roles of a
    prisoner's-dilemma-type stage game; None for `compute`, which suggests no fixed action."""
    return {"cooperate": 0, "defect": 1, "compute": None}[attitude]
