"""Short-memory reactive strategies: they answer the last round or two of play.

Each one plays exactly as its Axelrod-library namesake (TitForTat, TitFor2Tats, SuspiciousTitForTat,
WinStayLoseShift), which a test checks move for move. `act` is the hot loop of matches played in
Python, so each is a single expression on the history, with no allocation; `machine` is the same
strategy as a table, for matches played in lockstep (`strategies.lockstep`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar

from stratagem.strategies.base import Classifier, Strategy
from stratagem.strategies.machine import Machine, tabulate


class TitForTat(Strategy):
    """Cooperate first, then copy the opponent's last move (seed-001 §2, TFT)."""

    name = "TitForTat"
    # seed-001 §2: "Nice, forgiving, retaliating, non-envious".
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=1, stochastic=False, nice=True, retaliating=True, forgiving=True
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return opponent[-1] if opponent else 0

    def machine(self) -> Machine:
        # The state is the opponent's last move, which is also the next action.
        return tabulate(self.stage, self.player, (0, 1), lambda s, own, opp: opp)


class SuspiciousTitForTat(Strategy):
    """Defect first, then copy the opponent's last move: TFT that does not extend trust."""

    name = "SuspiciousTitForTat"
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=1, stochastic=False, nice=False, retaliating=True, forgiving=True
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return opponent[-1] if opponent else 1

    def machine(self) -> Machine:
        return tabulate(self.stage, self.player, (0, 1), lambda s, own, opp: opp, start=1)


class TitForTwoTats(Strategy):
    """Defect only after two defections in a row: TFT that tolerates one (noisy) defection."""

    name = "TitForTwoTats"
    # Retaliating: it does answer defection (a repeated one), unlike AlwaysCooperate.
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=2, stochastic=False, nice=True, retaliating=True, forgiving=True
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return 1 if len(opponent) > 1 and opponent[-1] and opponent[-2] else 0

    def machine(self) -> Machine:
        # The state counts the opponent's defections in a row, up to two.
        return tabulate(
            self.stage, self.player, (0, 0, 1), lambda s, own, opp: min(s + 1, 2) if opp else 0
        )


class WinStayLoseShift(Strategy):
    """Pavlov: cooperate first; keep the last move after the opponent cooperated, else switch."""

    name = "WinStayLoseShift"
    # Axelrod's definition: cooperate after (C, C) or (D, D), defect after (C, D) or (D, C). In
    # indices that is own XOR opponent, which is also "repeat if they cooperated, else switch".
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=1, stochastic=False, nice=True, retaliating=True, forgiving=True
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return own[-1] ^ opponent[-1] if own else 0

    def machine(self) -> Machine:
        return tabulate(self.stage, self.player, (0, 1), lambda s, own, opp: own ^ opp)
