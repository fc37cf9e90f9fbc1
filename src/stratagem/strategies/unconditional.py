"""Strategies that ignore the opponent: always one role, a coin flip, or a fixed alternation.

They are the baselines of every IPD tournament (seed-001 §2 uses AC and AD as opponents) and behave
exactly as the Axelrod library's Cooperator, Defector, Random and Alternator.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar

from stratagem.errors import StratagemError
from stratagem.strategies.base import Classifier, Strategy
from stratagem.strategies.machine import Machine, constant, tabulate


class AlwaysCooperate(Strategy):
    """Cooperate every round: the fully exploitable baseline (seed-001 §2, AC)."""

    name = "AlwaysCooperate"
    # seed-001 §2: "Nice, non-retaliating, forgiving".
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=0, stochastic=False, nice=True, retaliating=False, forgiving=True
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return 0

    def machine(self) -> Machine:
        return constant(self.stage, self.player, 0)


class AlwaysDefect(Strategy):
    """Defect every round: the one-shot equilibrium of the PD played forever (seed-001 §2, AD)."""

    name = "AlwaysDefect"
    # seed-001 §2: "Non-nice, retaliating, non-forgiving" (it never lets a defection go unanswered).
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=0, stochastic=False, nice=False, retaliating=True, forgiving=False
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return 1

    def machine(self) -> Machine:
        return constant(self.stage, self.player, 1)


class Random(Strategy):
    """Cooperate with probability p each round, independently: the noise baseline."""

    name = "Random"
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=0, stochastic=True, nice=False, retaliating=False, forgiving=False
    )

    def __init__(self, p: float = 0.5) -> None:
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= p <= 1.0:
            raise StratagemError(f"Random needs a probability 0 <= p <= 1, got {p!r}")
        self.p = float(p)

    @property
    def label(self) -> str:
        return f"{self.name}({self.p!r})"

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        # random() is in [0, 1): p = 0 always defects and p = 1 always cooperates.
        return 0 if rng.random() < self.p else 1

    def machine(self) -> Machine:
        # One draw a turn, as `act`: u >= p defects.
        return tabulate(self.stage, self.player, (0,), lambda s, own, opp: 0, thresholds=[[self.p]])


class Alternator(Strategy):
    """Cooperate, defect, cooperate, ...: flips its own last move (as Axelrod's, so noise shows)."""

    name = "Alternator"
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=1, stochastic=False, nice=False, retaliating=False, forgiving=False
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return 1 - own[-1] if own else 0

    def machine(self) -> Machine:
        return tabulate(self.stage, self.player, (0, 1), lambda s, own, opp: 1 - own)
