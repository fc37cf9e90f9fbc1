"""The rule-based strategy interface, in the spirit of the Axelrod library.

A strategy is a small class whose `classifier` metadata describes it, so tournaments, reports and
classifiers need no special cases. Strategies act on action *indices*, never on literal labels: in a
2-action game index 0 is the cooperative role (cooperate, stag, ...) and index 1 the defecting role
(defect, hare, ...), so every strategy works in every 2-action game of the catalog and its variants.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from stratagem.errors import StratagemError
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.machine import Machine

COOPERATE = 0
"""Index of the cooperative role in a 2-action game."""
DEFECT = 1
"""Index of the defecting role in a 2-action game."""


@dataclass(frozen=True)
class Classifier:
    """What a strategy is like; the same vocabulary as Axelrod's classifier and seed-001 §2."""

    memory_depth: float
    """How many past rounds it looks at (math.inf for unbounded, 0 for none)."""
    stochastic: bool
    nice: bool
    """Never the first to defect."""
    retaliating: bool
    """Answers a defection with a defection."""
    forgiving: bool
    """Returns to cooperation after the opponent does."""
    n_actions: int | None = 2
    """Number of actions it is written for; None means any game."""
    uses_payoffs: bool = False
    """Reads the stage payoffs (best responses, equilibria) rather than only the history."""


class Strategy:
    """A rule-based player of repeated normal-form games.

    Subclasses set `name` and `classifier` and implement `act`. Stateful strategies set their state
    up in `reset`, which is called before every match.
    """

    name: ClassVar[str]
    classifier: ClassVar[Classifier]

    stage: NormalFormGame
    player: int

    def reset(self, stage: NormalFormGame, player: int) -> None:
        """Prepare for a new match of `stage`, playing as `player` (0 or 1)."""
        n = self.classifier.n_actions
        if n is not None and stage.sizes[player] != n:
            raise StratagemError(
                f"strategy '{self.label}' is for {n}-action games; "
                f"'{stage.name}' gives player {player + 1} {stage.sizes[player]} actions"
            )
        self.stage = stage
        self.player = player

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        """The next action index, given both players' past action indices (oldest first)."""
        raise NotImplementedError

    def machine(self) -> Machine | None:
        """This strategy as a state machine for the stage and seat of the last `reset`, so the
        lockstep engine can play it (`strategies.lockstep`); None keeps it on `act`."""
        return None

    @property
    def label(self) -> str:
        """The display name, parameters included (e.g. `Random(0.3)`)."""
        return self.name

    @property
    def deterministic(self) -> bool:
        return not self.classifier.stochastic

    def __repr__(self) -> str:
        return self.label
