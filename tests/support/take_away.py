"""Games a test plugin registers to show that a plugin's game declaring its moves a fixed set
(`Game.moves`) plays by number in PettingZoo (tests/test_pettingzoo_plugin.py): Take Away, taken
in turns, whose legal moves shrink with the pile, and High Card with its moves declared.
`wrong` declares a set that misses a legal move and `loose` numbers every move legal, for
`testing.check_moves` to refuse."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.spaces import Action, Choice
from support.high_card import HighCard

TAKES = ("take 1", "take 2", "take 3")


@dataclass(frozen=True)
class PileState(State):
    """A pile of stones; the seat to move takes 1 to 3 of them, and who takes the last wins."""

    game: TakeAway
    pile: int
    mover: int = 0

    def to_act(self) -> tuple[int, ...]:
        return () if self.is_terminal() else (self.mover,)

    def legal(self, player: int) -> Choice:
        return Choice(TAKES[: min(3, self.pile)])

    def observation(self, player: int) -> Observation:
        return Observation(player, self.legal(player) if player in self.to_act() else None)

    def is_terminal(self) -> bool:
        return self.pile == 0

    def payoffs(self) -> tuple[float, ...]:
        if not self.is_terminal():
            return (0.0, 0.0)
        winner = 1 - self.mover  # who took the last stone
        return (1.0, -1.0) if winner == 0 else (-1.0, 1.0)

    def numbered(self, player: int, moves: Sequence[Action]) -> dict[int, Action]:
        return dict(enumerate(moves)) if self.game.loose else super().numbered(player, moves)

    def _next(self, actions: Mapping[int, Action]) -> tuple[State, list[Event]]:
        taken = TAKES.index(str(actions[self.mover])) + 1
        event = Event("take", {"player": self.mover, "stones": taken})
        return PileState(self.game, self.pile - taken, 1 - self.mover), [event]


class TakeAway(Game):
    n_players = 2

    def __init__(self, pile: int = 7, wrong: bool = False, loose: bool = False) -> None:
        self.name, self.pile, self.wrong, self.loose = "take-away", pile, wrong, loose

    def initial_state(self, seed: int = 0) -> PileState:
        return PileState(self, self.pile)

    def moves(self, seat: int) -> tuple[str, ...]:
        return TAKES[:2] if self.wrong else TAKES


class NumberedHighCard(HighCard):
    """High Card (both seats bet or fold at once) with its moves declared."""

    def moves(self, seat: int) -> tuple[str, ...]:
        return ("fold", "bet")
