"""Normal-form (matrix) games for 2 or n players: a payoff tensor plus action labels.

Counterfactual variants (seed-003 §1) are transformations of a game: relabel the actions, replace
the payoffs, or both. The tensor has shape (a_1, ..., a_n, n): entry [i, j, ..., p] is player p's
payoff when player 1 plays action i, player 2 plays j, and so on.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.spaces import Action, Choice


def _numbers(name: str, payoffs: ArrayLike) -> NDArray[np.float64]:
    """Payoffs as a float array, or a user error naming the game (not a numpy traceback)."""
    try:
        return np.asarray(payoffs, dtype=float)
    except (TypeError, ValueError) as exc:
        raise StratagemError(f"game '{name}': payoffs are not numbers ({exc})") from None


class NormalFormGame(Game):
    """A simultaneous one-shot game. Also the stage game of `RepeatedGame`."""

    def __init__(
        self,
        name: str,
        labels: Sequence[Sequence[str]],
        payoffs: ArrayLike,
        description: str = "",
    ) -> None:
        self.name = name
        self.labels: tuple[tuple[str, ...], ...] = tuple(tuple(ls) for ls in labels)
        self.n_players = len(self.labels)
        self._description = description
        if self.n_players < 2:
            raise StratagemError(f"game '{name}': needs at least 2 players, got {self.n_players}")
        self.choices = tuple(Choice(ls) for ls in self.labels)  # validates: non-empty, no dups
        """Each player's action space, built once: every observation and move checks against it."""
        for p, ls in enumerate(self.labels):
            if any(not isinstance(label, str) or not label for label in ls):
                raise StratagemError(
                    f"game '{name}': player {p + 1} has an empty or non-text label"
                )
        tensor = _numbers(name, payoffs)
        shape = (*self.sizes, self.n_players)
        if tensor.shape != shape:
            raise StratagemError(
                f"game '{name}': payoff tensor has shape {tensor.shape}, "
                f"labels {[list(ls) for ls in self.labels]} need {shape}"
            )
        if not np.all(np.isfinite(tensor)):
            raise StratagemError(f"game '{name}': payoffs must be finite numbers")
        tensor.setflags(write=False)
        self.payoffs: NDArray[np.float64] = tensor
        # Plain nested lists: indexing them is several times faster than numpy in match loops.
        self.table = tensor.tolist()

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def symmetric(
        cls,
        name: str,
        labels: Sequence[str],
        row_payoffs: ArrayLike,
        description: str = "",
    ) -> NormalFormGame:
        """A symmetric 2-player game from the row player's matrix: u2(a, b) = u1(b, a)."""
        a = _numbers(name, row_payoffs)
        k = len(labels)
        if a.shape != (k, k):
            raise StratagemError(f"game '{name}': row payoffs have shape {a.shape}, need {(k, k)}")
        return cls(name, [labels, labels], np.stack([a, a.T], axis=-1), description)

    @classmethod
    def bimatrix(
        cls,
        name: str,
        labels: Sequence[Sequence[str]],
        row: ArrayLike,
        col: ArrayLike,
        description: str = "",
    ) -> NormalFormGame:
        """A 2-player game from the row player's and the column player's matrices."""
        a, b = _numbers(name, row), _numbers(name, col)
        if a.shape != b.shape:
            raise StratagemError(f"game '{name}': matrices differ in shape {a.shape} vs {b.shape}")
        return cls(name, labels, np.stack([a, b], axis=-1), description)

    @classmethod
    def prisoners_dilemma(
        cls,
        name: str,
        t: float,
        r: float,
        p: float,
        s: float,
        labels: Sequence[str] = ("cooperate", "defect"),
        description: str = "",
    ) -> NormalFormGame:
        """The PD family by T, R, P, S (seed-001 §2): if I cooperate and they defect, I get S."""
        return cls.symmetric(name, labels, [[r, s], [t, p]], description)

    # -- transformations (seed-003 counterfactual variants) -------------------------------------

    def relabel(self, labels: Sequence[Sequence[str]], name: str | None = None) -> NormalFormGame:
        """Same payoffs, new action names (a label-based counterfactual)."""
        return NormalFormGame(name or self.name, labels, self.payoffs, self._description)

    def with_payoffs(self, payoffs: ArrayLike, name: str | None = None) -> NormalFormGame:
        """Same action names, new payoffs (a payoff-based counterfactual)."""
        return NormalFormGame(name or self.name, self.labels, payoffs, self._description)

    def transform(
        self,
        name: str,
        labels: Sequence[Sequence[str]] | None = None,
        payoffs: ArrayLike | None = None,
        description: str = "",
    ) -> NormalFormGame:
        """Relabel, replace payoffs, or both (a joint counterfactual)."""
        return NormalFormGame(
            name,
            self.labels if labels is None else labels,
            self.payoffs if payoffs is None else payoffs,
            description or self._description,
        )

    # -- queries --------------------------------------------------------------------------------

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(len(ls) for ls in self.labels)

    def description(self) -> str:
        return self._description or self.name

    def moves(self, seat: int) -> tuple[str, ...]:
        return self.labels[seat]

    def payoff(self, profile: Sequence[int]) -> tuple[float, ...]:
        """Payoffs of an action-index profile."""
        return tuple(float(x) for x in self.payoffs[tuple(profile)])

    def index(self, player: int, label: str) -> int:
        return self.choices[player].index(label)

    def profiles(self) -> list[tuple[int, ...]]:
        """Every pure action profile, in lexicographic order."""
        return list(itertools.product(*(range(k) for k in self.sizes)))

    def matrices(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Row and column payoff matrices of a 2-player game."""
        if self.n_players != 2:
            raise StratagemError(f"game '{self.name}' has {self.n_players} players, not 2")
        return self.payoffs[..., 0], self.payoffs[..., 1]

    def is_symmetric(self) -> bool:
        if self.n_players != 2 or self.sizes[0] != self.sizes[1]:
            return False
        a, b = self.matrices()
        return bool(np.array_equal(a, b.T))

    def initial_state(self, seed: int = 0) -> OneShotState:
        return OneShotState(self, None)


@dataclass(frozen=True)
class OneShotObservation(Observation):
    game: NormalFormGame | None = None


@dataclass(frozen=True)
class OneShotState(State):
    """A normal-form game played once: everyone acts together, then it is over."""

    game: NormalFormGame
    profile: tuple[int, ...] | None

    def to_act(self) -> tuple[int, ...]:
        return () if self.profile is not None else tuple(range(self.game.n_players))

    def legal(self, player: int) -> Choice:
        return self.game.choices[player]

    def observation(self, player: int) -> OneShotObservation:
        legal = None if self.is_terminal() else self.legal(player)
        return OneShotObservation(player, legal, game=self.game)

    def is_terminal(self) -> bool:
        return self.profile is not None

    def payoffs(self) -> tuple[float, ...]:
        if self.profile is None:
            return (0.0,) * self.game.n_players
        return self.game.payoff(self.profile)

    def _next(self, actions: Mapping[int, Action]) -> tuple[OneShotState, list[Event]]:
        profile = tuple(self.game.index(p, str(actions[p])) for p in range(self.game.n_players))
        nxt = OneShotState(self.game, profile)
        event = Event(
            "round",
            {"actions": [actions[p] for p in sorted(actions)], "payoffs": list(nxt.payoffs())},
        )
        return nxt, [event]
