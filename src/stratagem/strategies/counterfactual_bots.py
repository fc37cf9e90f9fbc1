"""The algorithmic opponents of seed-003 (counterfactual strategic reasoning), payoff-generic.

seed-003 §2.2 ("Exact behaviour in the code") defines them from the authors' code, which differs
from the paper's prose: the "TFT" and "MF" bots play a *best response* to the opponent's last or
modal move and open at random; they are not classic tit-for-tat. Every bot reads the stage game it
is reset with (payoffs, equilibrium, labels), so one bot plays every counterfactual variant: under
PD payoffs the best responders always defect from round 2, under Stag Hunt payoffs they copy.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from stratagem.errors import StratagemError
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.base import Classifier, Strategy
from stratagem.strategies.machine import Machine, constant, tabulate

SEED003_PATTERNS: dict[int, tuple[int | str, ...]] = {
    # seed-003 §2.2: PD family ["defection", "cooperation"] (or ["hare", "stag"]), i.e. the
    # defecting role then the cooperative role in all four variants.
    2: (1, 0),
    # seed-003 §2.2: RPS uses these literal words in every variant, so in the label-permuted
    # variants (eq1-alt, ba3-alt) they are other indices with other dominance.
    3: ("scissors", "rock", "paper"),
}
"""The cyclic pattern of seed-003's pattern player, by number of actions."""

_PROBABILITY_FLOOR = 1e-12
"""Equilibrium probabilities below this are solver noise, not support."""


def best_responses(stage: NormalFormGame, player: int) -> list[int]:
    """For each opponent action, `player`'s payoff-maximising reply (ties to the lowest index).

    seed-003 §2.2 writes the PD map as "reply b if ba>aa else a" (mode a) and "b if bb>ab else a"
    (mode b): a strict comparison, so ties go to the first action, as argmax does. In RPS the best
    response is the counter under the variant's own dominance.
    """
    if stage.n_players != 2:
        raise StratagemError(f"best responses need a 2-player game; '{stage.name}' is not")
    own = stage.payoffs[..., player]
    if player == 1:
        own = own.T  # rows: own action, columns: opponent action
    return [int(i) for i in np.argmax(own, axis=0)]


class SingleRoundEquilibrium(Strategy):
    """Play the stage game's symmetric Nash equilibrium every round, i.i.d. (seed-003 SREP)."""

    name = "SingleRoundEquilibrium"
    bot_name: ClassVar[str] = "single-round-equilibrium-player"
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=0,
        stochastic=True,
        nice=False,
        retaliating=False,
        forgiving=False,
        n_actions=None,
        uses_payoffs=True,
    )

    def __init__(self) -> None:
        self._pure = -1
        self._cumulative: list[float] = []

    def reset(self, stage: NormalFormGame, player: int) -> None:
        super().reset(stage, player)
        # Imported here so the strategies package does not pull the equilibrium solver (nashpy)
        # into every import.
        from stratagem.games.matrix.solution import symmetric_equilibrium

        # seed-003 §2.2: the mixed NE (PD: always b; SH 6,1,4,2: a w.p. 1/3; RPS: cb/Σ, ac/Σ, ba/Σ).
        sigma = [max(0.0, float(x)) for x in symmetric_equilibrium(stage, selection="mixed")]
        total = sum(sigma)
        if len(sigma) != stage.sizes[player] or total <= 0.0:
            raise StratagemError(
                f"'{stage.name}': the equilibrium {sigma} does not fit player {player + 1}'s "
                f"{stage.sizes[player]} actions"
            )
        probs = [x / total if x / total > _PROBABILITY_FLOOR else 0.0 for x in sigma]
        support = [i for i, x in enumerate(probs) if x > 0.0]
        # A pure equilibrium needs no draw, so SREP is deterministic wherever the NE is pure.
        self._pure = support[0] if len(support) == 1 else -1
        # Thresholds between consecutive actions; bisect finds the drawn action without a loop.
        cumulative, acc = [], 0.0
        for x in probs[:-1]:
            acc += x
            cumulative.append(acc)
        self._cumulative = cumulative

    @property
    def probabilities(self) -> list[float]:
        """The equilibrium it draws from (after `reset`)."""
        edges = [0.0, *self._cumulative, 1.0]
        if self._pure >= 0:
            return [1.0 if i == self._pure else 0.0 for i in range(len(edges) - 1)]
        return [b - a for a, b in itertools.pairwise(edges)]

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        if self._pure >= 0:
            return self._pure
        return bisect.bisect_right(self._cumulative, rng.random())

    def machine(self) -> Machine:
        if self._pure >= 0:
            return constant(self.stage, self.player, self._pure)
        # One draw a turn, as `act`, with the same thresholds.
        cuts = [self._cumulative]
        return tabulate(self.stage, self.player, (0,), lambda s, own, opp: 0, thresholds=cuts)


class Pattern(Strategy):
    """Cycle through a fixed sequence of actions, regardless of play (seed-003 PP).

    Elements are action indices or labels; labels are resolved against the stage game at `reset`,
    so `Pattern(["scissors", "rock", "paper"])` plays those words in any RPS variant whatever their
    order. Without a pattern it uses seed-003's for the game's number of actions
    (`SEED003_PATTERNS`).
    """

    name = "Pattern"
    bot_name: ClassVar[str] = "pattern-player"
    # Memory: the move depends on the round number only; unbounded because the cycle length is not
    # known to the class.
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=float("inf"),
        stochastic=False,
        nice=False,
        retaliating=False,
        forgiving=False,
        n_actions=None,
    )

    def __init__(self, pattern: Sequence[int | str] | None = None) -> None:
        if isinstance(pattern, str):
            pattern = (pattern,)
        if pattern is not None:
            pattern = tuple(pattern)
            if not pattern:
                raise StratagemError("a pattern needs at least one action")
            for x in pattern:
                is_index = isinstance(x, int) and not isinstance(x, bool) and x >= 0
                if not (is_index or (isinstance(x, str) and x)):
                    raise StratagemError(
                        f"pattern elements must be action indices (0, 1, ...) or labels, got {x!r}"
                    )
        self.pattern: tuple[int | str, ...] | None = pattern
        self._sequence: tuple[int, ...] = ()
        self._period = 1

    @property
    def label(self) -> str:
        if self.pattern is None:
            return self.name
        return f"{self.name}({', '.join(str(x) for x in self.pattern)})"

    def reset(self, stage: NormalFormGame, player: int) -> None:
        super().reset(stage, player)
        labels = stage.labels[player]
        pattern = self.pattern
        if pattern is None:
            pattern = SEED003_PATTERNS.get(len(labels))
            if pattern is None:
                raise StratagemError(
                    f"no default pattern for {len(labels)}-action games ('{stage.name}'): "
                    f"give one, e.g. Pattern(1, 0)"
                )
        sequence = []
        for x in pattern:
            if isinstance(x, str):
                if x not in labels:
                    raise StratagemError(
                        f"pattern action '{x}' is not an action of player {player + 1} in "
                        f"'{stage.name}': expected one of {list(labels)}"
                    )
                sequence.append(labels.index(x))
            elif x >= len(labels):
                raise StratagemError(
                    f"pattern action index {x} is out of range for '{stage.name}' "
                    f"({len(labels)} actions)"
                )
            else:
                sequence.append(x)
        self._sequence = tuple(sequence)
        self._period = len(sequence)

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        return self._sequence[len(own) % self._period]

    def machine(self) -> Machine:
        period = self._period  # the state is the position in the pattern
        return tabulate(
            self.stage, self.player, self._sequence, lambda s, own, opp: (s + 1) % period
        )


class _BestResponder(Strategy):
    """Shared set-up of the seed-003 bots that best-respond to a statistic of the opponent."""

    def __init__(self) -> None:
        self._replies: list[int] = []
        self._n_actions = 2

    def reset(self, stage: NormalFormGame, player: int) -> None:
        super().reset(stage, player)
        self._replies = best_responses(stage, player)
        self._n_actions = stage.sizes[player]


class BestResponseToMode(_BestResponder):
    """Open at random, then best-respond to the opponent's most frequent move (seed-003 MF / AP)."""

    name = "BestResponseToMode"
    bot_name: ClassVar[str] = "adaptive-player"
    # Payoff-dependent: under PD payoffs it always defects from round 2, under SH payoffs it copies
    # the mode; the flags hold for both (not forgiving under PD, so conservatively False).
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=float("inf"),
        stochastic=True,
        nice=False,
        retaliating=True,
        forgiving=False,
        n_actions=None,
        uses_payoffs=True,
    )

    def __init__(self) -> None:
        super().__init__()
        self._counts: list[int] = []
        self._seen = 0

    def reset(self, stage: NormalFormGame, player: int) -> None:
        super().reset(stage, player)
        self._counts = [0] * len(self._replies)
        self._seen = 0

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        n = len(opponent)
        if n == self._seen + 1:  # the usual case: one new round since the last call
            self._counts[opponent[-1]] += 1
        elif n != self._seen or not n:  # a new match, or a history this instance has not followed
            self._counts = counts = [0] * len(self._replies)
            for move in opponent:
                counts[move] += 1
        self._seen = n
        if not n:
            # seed-003 §2.2: round 1 is uniform over the actions.
            return rng.randrange(self._n_actions)
        counts = self._counts
        # seed-003 §2.2: mode ties go to the first action; list.index returns the lowest.
        return self._replies[counts.index(max(counts))]


class BestResponseToLast(_BestResponder):
    """Open at random, then best-respond to the opponent's last move (seed-003 "TFT": not TFT)."""

    name = "BestResponseToLast"
    bot_name: ClassVar[str] = "tit-for-tat-player"
    # Payoff-dependent as BestResponseToMode: always defects under PD payoffs from round 2, is a
    # tit-for-tat with a random opening under SH payoffs.
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=1,
        stochastic=True,
        nice=False,
        retaliating=True,
        forgiving=False,
        n_actions=None,
        uses_payoffs=True,
    )

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        # seed-003 §2.2: round 1 uniform over the actions, then the best reply to the last move.
        return self._replies[opponent[-1]] if opponent else rng.randrange(self._n_actions)

    def machine(self) -> Machine:
        # State k < n: the opponent's last move was k; state n: the opening, drawn as `act` does.
        n = len(self._replies)
        actions = (*self._replies, 0)
        return tabulate(
            self.stage, self.player, actions, lambda s, own, opp: opp, start=n, opening=True
        )
