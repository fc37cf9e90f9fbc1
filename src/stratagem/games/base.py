"""The game protocol shared by every game: `Game` makes a `State`; a `State` says who acts, what
each player may see, and returns the next state when given legal actions.

State is kept apart from what each player observes (as in OpenSpiel and PettingZoo), so private
information stays private by construction: agents only ever receive an `Observation`.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stratagem.games.spaces import Action, ActionSpace, IllegalAction

if TYPE_CHECKING:
    from stratagem.games.matrix.normal_form import NormalFormGame


@dataclass(frozen=True)
class Event:
    """Something that happened, as recorded in the store. `visible_to` None means public."""

    kind: str
    data: Mapping[str, Any]
    visible_to: frozenset[int] | None = None

    def visible(self, player: int) -> bool:
        return self.visible_to is None or player in self.visible_to


@dataclass(frozen=True)
class Observation:
    """What one player may see at one moment. Games extend it with their own fields."""

    player: int
    legal: ActionSpace | None
    """The player's action space if they must act now, otherwise None."""
    events: tuple[Event, ...] = field(default=(), repr=False)
    """The events this player has been allowed to see so far, oldest first."""
    turn: int = 0
    """The step of the episode this observation is handed out at (1 = the first), stamped by the
    episode loop; games need not track it."""

    def moment(self) -> int:
        """The round a decision belongs to: the game's own round count where it keeps one (a
        repeated game), else the step of the episode."""
        value = getattr(self, "round", None)
        return value if isinstance(value, int) else self.turn


class State(ABC):
    """One immutable moment of a game. `apply` never mutates; it returns the next state."""

    @abstractmethod
    def to_act(self) -> tuple[int, ...]:
        """Players who must act now: several at once for simultaneous moves, none when over."""

    @abstractmethod
    def legal(self, player: int) -> ActionSpace:
        """The action space of a player who must act now."""

    @abstractmethod
    def observation(self, player: int) -> Observation:
        """What `player` may see now, private information included."""

    @abstractmethod
    def is_terminal(self) -> bool: ...

    @abstractmethod
    def payoffs(self) -> tuple[float, ...]:
        """Each player's total payoff so far (final once terminal)."""

    @abstractmethod
    def _next(self, actions: Mapping[int, Action]) -> tuple[State, list[Event]]:
        """Advance with already validated actions."""

    def apply(self, actions: Mapping[int, Action]) -> tuple[State, list[Event]]:
        """Validate the actions of exactly the players to act, then advance."""
        if self.is_terminal():
            # Checked first: with nobody to act, an empty action set would otherwise pass.
            raise IllegalAction("the game is over: no further actions are accepted")
        expected = set(self.to_act())
        if set(actions) != expected:
            raise IllegalAction(
                f"expected actions from players {sorted(expected)}, got {sorted(actions)}"
            )
        valid = {p: self.legal(p).validate(a) for p, a in actions.items()}
        return self._next(valid)

    def opening(self) -> tuple[Event, ...]:
        """What is announced before anyone acts (a moderator's opening): events an initial state
        holds that no step returns. The episode loop records them before the first step; other
        states have none."""
        return ()

    def forfeit(self, actions: Mapping[int, Action | None]) -> tuple[State, list[Event]]:
        """Advance when some players have no action (None: their replies stayed invalid after
        every re-ask), by the game's own rule.

        The default rule gives each such player `fallback(player)`: a default move or a skipped
        turn. Games whose rule is different (a forfeited round scoring (0, 0)) override this.
        """
        filled = {p: self.fallback(p) if a is None else a for p, a in actions.items()}
        return self.apply(filled)

    def fallback(self, player: int) -> Action:
        """What a player who produced no valid action does; games without such a rule refuse."""
        raise IllegalAction(
            f"{type(self).__name__} has no rule for a missing action of player {player}"
        )

    def numbered(self, player: int, moves: Sequence[Action]) -> dict[int, Action]:
        """The moves `player` may make now, by their number in its game's `moves(player)`: each
        one its space accepts. A game whose moves are named by the position overrides it."""
        legal, out = self.legal(player), {}
        for number, move in enumerate(moves):
            try:
                out[number] = legal.validate(move)
            except IllegalAction:
                continue
        return out


class Game(ABC):
    """The rules of a game. Deterministic given a seed: chance comes from `rng(seed, step)`."""

    name: str
    n_players: int

    @abstractmethod
    def initial_state(self, seed: int = 0) -> State: ...

    def description(self) -> str:
        """One line for listings."""
        return self.name

    def sides(self) -> tuple[str, ...] | None:
        """The side each seat plays on, where seats form teams (a social deduction game's roles:
        the spy against the majority); None where every seat plays for itself. A competition
        puts a challenger on every seat of one side at once (seed-004 §4)."""
        return None

    def moves(self, seat: int) -> Sequence[Action] | None:
        """Every move `seat` may ever be asked for, in a fixed order, where they are a fixed
        finite set: a move's place is its number in every state, so a learner can act by number
        (a PettingZoo seat's `Discrete` action, masked by `State.numbered`). Where a move's name
        depends on the position, a number stands for it (OpenSpiel's action ids). None (the
        default) where the moves are no such set (free text)."""
        return None

    def matrix(self) -> NormalFormGame | None:
        """The matrix game played each round, for games made of one (what matrix-game analyses
        read: labels and payoffs); None for other games."""
        return None


def chance(seed: int, *step: object) -> random.Random:
    """A random source for one chance event, derived from the game seed and the step.

    Deriving per step (instead of carrying a mutable generator in the state) keeps states immutable
    and lets any state be replayed exactly.
    """
    return random.Random(":".join(str(part) for part in (seed, *step)))


def play(game: Game, policy: Any, seed: int = 0) -> State:
    """Play a game to the end with `policy(observation) -> action`; for tests and examples."""
    state = game.initial_state(seed)
    while not state.is_terminal():
        state, _ = state.apply({p: policy(state.observation(p)) for p in state.to_act()})
    return state
