"""A strategy written as a finite-state machine, so that many matches can be played at once.

Most classic strategies remember little: TitForTat the opponent's last move, GrimTrigger whether
it was betrayed. As a table (the action of each state, the state after each pair of moves) a
strategy can be played by `lockstep.play_matches` for thousands of matches in a few array
operations a turn. A strategy whose `act` draws from the match's generator says how (`thresholds`,
`opening`), so the lockstep engine draws the same numbers in the same order as `play_match`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from stratagem.errors import StratagemError
from stratagem.games.matrix.normal_form import NormalFormGame


@dataclass(frozen=True, eq=False)
class Machine:
    """What a strategy plays in each state and where each round of play takes it."""

    actions: np.ndarray
    """(states,): the action index each state plays (unless `thresholds` draws it)."""
    next: np.ndarray
    """(states, own actions, opponent actions): the state after a round of these two moves (the
    moves both players saw, noise included)."""
    start: int = 0
    thresholds: np.ndarray | None = None
    """(states, own actions - 1), or None for no draw. Given, each turn draws one `rng.random()`
    u and plays the number of thresholds <= u (`bisect_right`): Random(p) is [[p]]."""
    opening: bool = False
    """Turn 0 plays `rng.randrange(own actions)` (the start state's action is unused); no
    transition returns to the start state, so that is the only draw."""

    @property
    def states(self) -> int:
        return len(self.actions)

    @property
    def draws(self) -> bool:
        """Whether it takes numbers from the match's generator."""
        return self.thresholds is not None or self.opening


def tabulate(
    stage: NormalFormGame,
    player: int,
    actions: Sequence[int],
    step: Callable[[int, int, int], int],
    start: int = 0,
    thresholds: Sequence[Sequence[float]] | None = None,
    opening: bool = False,
) -> Machine:
    """The machine of `actions` (one per state) and `step(state, own, opponent) -> next state`,
    checked against the actions `player` and its opponent have in `stage`."""
    n_own, n_opp = stage.sizes[player], stage.sizes[1 - player]
    states = len(actions)
    table = np.array(
        [[[step(s, a, b) for b in range(n_opp)] for a in range(n_own)] for s in range(states)],
        dtype=np.intp,
    ).reshape(states, n_own, n_opp)
    acts = np.array(actions, dtype=np.intp)
    where = f"'{stage.name}', player {player + 1}"
    if not 0 <= start < states or table.min() < 0 or table.max() >= states:
        raise StratagemError(f"a strategy's state machine leaves its {states} states in {where}")
    if acts.min() < 0 or acts.max() >= n_own:
        raise StratagemError(f"a strategy's state machine plays an action {where} does not have")
    cuts = None
    if thresholds is not None:
        cuts = np.array(thresholds, dtype=np.float64).reshape(states, n_own - 1)
    if opening and (cuts is not None or (table == start).any()):
        raise StratagemError("an opening draw must be the machine's only draw, at turn 0 only")
    return Machine(acts, table, start, cuts, opening)


def constant(stage: NormalFormGame, player: int, action: int) -> Machine:
    """The one-state machine of a strategy that always plays `action`."""
    return tabulate(stage, player, (action,), lambda s, own, opp: 0)
