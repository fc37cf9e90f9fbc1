"""Grudging strategies: cooperate until the opponent has defected often enough, then defect forever.

GrimTrigger is seed-001 §2's GT and the Axelrod library's Grudger. GrimTrigger2 is the variant
that seed-001's strategy-frequency estimation names ("sparks unconditional defection after being
betrayed twice", thesis L1435): it waits for the opponent's second defection in total, not
necessarily in a row.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar

from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.base import Classifier, Strategy
from stratagem.strategies.machine import Machine, tabulate


class GrimTrigger(Strategy):
    """Cooperate until the opponent's first defection, then defect for the rest of the match."""

    name = "GrimTrigger"
    # seed-001 §2: "Nice, retaliating, unforgiving, non-envious".
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=float("inf"), stochastic=False, nice=True, retaliating=True, forgiving=False
    )
    threshold: ClassVar[int] = 1
    """Opponent defections (in total) that trigger permanent defection."""

    def __init__(self) -> None:
        self._seen = 0
        self._defections = 0

    def reset(self, stage: NormalFormGame, player: int) -> None:
        super().reset(stage, player)
        self._seen = 0
        self._defections = 0

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        # Count the opponent's defections incrementally (one new round per call) instead of scanning
        # the whole history each round; recount if the history is not the one seen last call.
        n = len(opponent)
        if n == self._seen + 1:
            self._seen = n
            self._defections += opponent[-1]
        elif n != self._seen:
            self._seen = n
            self._defections = sum(opponent)
        return 1 if self._defections >= self.threshold else 0

    def machine(self) -> Machine:
        # The state counts the opponent's defections, up to the threshold (then it stays there).
        k = self.threshold
        actions = (0,) * k + (1,)
        return tabulate(self.stage, self.player, actions, lambda s, own, opp: min(s + opp, k))


class GrimTrigger2(GrimTrigger):
    """Cooperate until the opponent's second defection (in total), then defect forever."""

    name = "GrimTrigger2"
    # Retaliating, though only from the second defection on.
    classifier: ClassVar[Classifier] = GrimTrigger.classifier
    threshold: ClassVar[int] = 2
