"""Game families as functions of their parameters: the studies' parameterised matrix games, from
which the catalog names its settings."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stratagem.errors import StratagemError
from stratagem.games.matrix.normal_form import NormalFormGame


def symmetric_tensor(row: ArrayLike) -> NDArray[np.float64]:
    """The payoff tensor of a symmetric 2-player game from the row player's matrix."""
    a = np.asarray(row, dtype=float)
    return np.stack([a, a.T], axis=-1)


def rock_paper_scissors(
    name: str,
    labels: Sequence[str] = ("rock", "paper", "scissors"),
    ac: float = 1,
    ba: float = 1,
    cb: float = 1,
    description: str = "",
) -> NormalFormGame:
    """seed-003's RPS parameterisation (§1.3): with actions a, b, c, a beats c (winner +ac, loser
    -ac), b beats a (±ba) and c beats b (±cb); ties pay 0. Zero-sum and symmetric."""
    if len(labels) != 3:
        raise StratagemError(
            f"game '{name}': rock-paper-scissors needs 3 labels, got {len(labels)}"
        )
    for key, value in (("ac", ac), ("ba", ba), ("cb", cb)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise StratagemError(f"game '{name}': win magnitude {key} must be > 0, got {value!r}")
    row = [
        [0, -ba, ac],  # a: loses to b, beats c
        [ba, 0, -cb],  # b: beats a, loses to c
        [-ac, cb, 0],  # c: loses to a, beats b
    ]
    return NormalFormGame.symmetric(name, labels, row, description)


def n_player_prisoners_dilemma(
    name: str,
    cooperate: float,
    defect: float,
    one_defect: float,
    two_defect: float,
    labels: Sequence[str] = ("cooperate", "defect"),
    description: str = "",
) -> NormalFormGame:
    """seed-004's three-player Prisoner's Dilemma (§3.4), one round. By the number of defectors:
    none, each gets `cooperate`; one, the defector gets `one_defect` and the others 0; two, each
    defector gets `two_defect` and the cooperator 0; three, each gets `defect`."""
    if len(labels) != 2:
        raise StratagemError(f"game '{name}': the prisoner's dilemma needs 2 labels")
    params = {"cooperate": cooperate, "defect": defect, "one_defect": one_defect}
    for key, value in {**params, "two_defect": two_defect}.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise StratagemError(f"game '{name}': {key} must be a finite number, got {value!r}")
    by_defectors = {
        0: (cooperate, cooperate),  # (payoff of a cooperator, payoff of a defector)
        1: (0.0, one_defect),
        2: (0.0, two_defect),
        3: (defect, defect),
    }
    tensor = np.zeros((2, 2, 2, 3))
    for profile in np.ndindex(2, 2, 2):
        k = sum(profile)
        for p, action in enumerate(profile):
            tensor[(*profile, p)] = by_defectors[k][action]
    return NormalFormGame(name, [labels] * 3, tensor, description)
