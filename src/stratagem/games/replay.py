"""Replaying a recorded game through the engine: the moves a record claims, played again from the
game's seed, so that what the record says happened can be compared with what the rules make of it.

The episode loop lets only the engine change a state; an imported record is held to the same
rule by being played again here, one step at a time, exactly as the loop played it: the players
`state.to_act()` names give their moves, a move that the seat's action space refuses is refused,
and the moves of a step go through `State.forfeit`, so a missing move (None: the seat's replies
stayed invalid) is handled by the game's own rule, as it was in play. Nothing here knows a game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, State
from stratagem.games.spaces import Action, IllegalAction

Move = tuple[int, Action | None]
"""A recorded move: the seat and its action (None: no valid action, the game's rule applies)."""


class ReplayError(StratagemError):
    """A record the engine does not play: `move` is the index of the move at fault (None when
    the fault is where the moves end)."""

    def __init__(self, move: int | None, why: str) -> None:
        self.move = move
        self.why = why
        super().__init__(why)


@dataclass(frozen=True)
class ReplayStep:
    moment: int
    """The round the episode loop records the step's events under (`Observation.moment`)."""
    moves: range
    """The indices of the moves played in this step."""
    events: tuple[Event, ...]


@dataclass(frozen=True)
class Replay:
    opening: tuple[Event, ...]
    steps: tuple[ReplayStep, ...]
    state: State
    """The state after the last move."""


def replay(game: Game, seed: int, moves: Sequence[Move]) -> Replay:
    """Play `moves` (in the order they were recorded, step after step) from `seed`."""
    state = game.initial_state(seed)
    opening = tuple(state.opening())
    steps: list[ReplayStep] = []
    i = 0
    while i < len(moves):
        acting = state.to_act()
        if state.is_terminal() or not acting:
            raise ReplayError(i, "the game is already over: the engine takes no further move")
        group = moves[i : i + len(acting)]
        seen: set[int] = set()
        for k, (player, action) in enumerate(group):
            if player not in acting or player in seen:
                raise ReplayError(
                    i + k, f"player {player} moves where the engine asks players {list(acting)}"
                )
            seen.add(player)
            if action is not None:
                try:
                    state.legal(player).validate(action)
                except IllegalAction as exc:
                    raise ReplayError(i + k, f"the engine refuses the move: {exc}") from None
        if len(group) < len(acting):
            missing = sorted(set(acting) - seen)
            raise ReplayError(None, f"the moves end in a step whose players {missing} do not move")
        moment = replace(state.observation(acting[0]), turn=len(steps) + 1).moment()
        played = dict(group)
        try:
            state, events = state.forfeit({p: played[p] for p in acting})  # the loop's order
        except StratagemError as exc:
            raise ReplayError(i, f"the engine refuses the step: {exc}") from None
        steps.append(ReplayStep(moment, range(i, i + len(group)), tuple(events)))
        i += len(group)
    return Replay(opening, tuple(steps), state)
