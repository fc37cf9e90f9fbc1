"""Short-memory reactive strategies: they answer the last round or two of play.

Each one plays exactly as its Axelrod-library namesake (TitForTat, TitFor2Tats, SuspiciousTitForTat,
WinStayLoseShift), which a test checks move for move. `act` is the hot loop of tournaments, so each
is a single expression on the history, with no allocation.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar

from stratagem.strategies.base import Classifier, Strategy


class TitForTat(Strategy):
    """Cooperate first, then copy the opponent's last move (seed-001 §2, TFT)."""

    name = "TitForTat"
    # seed-001 §2: "Nice, forgiving, retaliating, non-envious".
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=1, stochastic=False, nice=True, retaliating=True, forgiving=True
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return opponent[-1] if opponent else 0


class SuspiciousTitForTat(Strategy):
    """Defect first, then copy the opponent's last move: TFT that does not extend trust."""

    name = "SuspiciousTitForTat"
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=1, stochastic=False, nice=False, retaliating=True, forgiving=True
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return opponent[-1] if opponent else 1


class TitForTwoTats(Strategy):
    """Defect only after two defections in a row: TFT that tolerates one (noisy) defection."""

    name = "TitForTwoTats"
    # Retaliating: it does answer defection (a repeated one), unlike AlwaysCooperate.
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=2, stochastic=False, nice=True, retaliating=True, forgiving=True
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return 1 if len(opponent) > 1 and opponent[-1] and opponent[-2] else 0


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
