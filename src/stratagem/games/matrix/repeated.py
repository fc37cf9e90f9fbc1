"""A stage game repeated for a fixed number of rounds, with the full history.

Each player observes the whole public history (every player's action and payoff in past rounds), as
in both seed-001 (§3.4) and seed-003 (§3.3). Whether the number of rounds is revealed is up to the
presentation: seed-001 tells it, seed-003 does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.bounds import Rounds, bounded
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.spaces import Action, Choice, IllegalAction

FORFEIT = -1
"""The action index recorded for a player whose move was invalid (see `RepeatedState.forfeit`)."""


@dataclass(frozen=True)
class Round:
    """One played round: action indices and payoffs, one per player."""

    actions: tuple[int, ...]
    payoffs: tuple[float, ...]

    @property
    def valid(self) -> bool:
        """False when some player forfeited the round with an invalid move."""
        return FORFEIT not in self.actions


@dataclass(frozen=True)
class RepeatedObservation(Observation):
    """A player's view of a repeated game: the stage rules and every past round."""

    stage: NormalFormGame | None = None
    round: int = 1
    """The round about to be played, from 1."""
    rounds: int = 1
    history: tuple[Round, ...] = ()

    def own_actions(self) -> list[str | None]:
        """This player's past actions as labels (None for a forfeited move)."""
        assert self.stage is not None
        labels = self.stage.labels[self.player]
        return [
            labels[a] if a != FORFEIT else None
            for a in (r.actions[self.player] for r in self.history)
        ]


class RepeatedGame(Game):
    """`forfeit_payoffs` is what every player gets in a round where someone's move was invalid;
    the default, all zeros, is seed-003's rule (§3.4: "the round scores (0, 0)")."""

    @bounded("repeated game")
    def __init__(
        self,
        stage: NormalFormGame,
        rounds: Rounds,
        forfeit_payoffs: tuple[float, ...] | None = None,
    ) -> None:
        if forfeit_payoffs is not None and len(forfeit_payoffs) != stage.n_players:
            raise StratagemError(
                f"forfeit payoffs need {stage.n_players} numbers, got {list(forfeit_payoffs)}"
            )
        self.stage = stage
        self.rounds = rounds
        self.forfeit_payoffs = tuple(
            float(x) for x in (forfeit_payoffs or (0.0,) * stage.n_players)
        )
        self.name = f"{stage.name}x{rounds}"
        self.n_players = stage.n_players

    def description(self) -> str:
        return f"{self.stage.description()}, repeated {self.rounds} rounds"

    def matrix(self) -> NormalFormGame:
        return self.stage

    def moves(self, seat: int) -> tuple[str, ...]:
        return self.stage.moves(seat)

    def initial_state(self, seed: int = 0) -> RepeatedState:
        return RepeatedState(self, ())


@dataclass(frozen=True)
class RepeatedState(State):
    game: RepeatedGame
    history: tuple[Round, ...]
    log: tuple[Event, ...] = field(default=(), compare=False, repr=False)
    """The events of `history`, grown one round at a time so an observation does not rebuild
    them all (every seat observes every round: building them anew made a game quadratic)."""

    def _events(self) -> tuple[Event, ...]:
        if len(self.log) == len(self.history):
            return self.log
        return tuple(self._event(t, r) for t, r in enumerate(self.history, start=1))

    def to_act(self) -> tuple[int, ...]:
        return () if self.is_terminal() else tuple(range(self.game.n_players))

    def legal(self, player: int) -> Choice:
        return self.game.stage.choices[player]

    def observation(self, player: int) -> RepeatedObservation:
        return RepeatedObservation(
            player=player,
            legal=None if self.is_terminal() else self.legal(player),
            events=self._events(),
            stage=self.game.stage,
            round=len(self.history) + 1,
            rounds=self.game.rounds,
            history=self.history,
        )

    def is_terminal(self) -> bool:
        return len(self.history) >= self.game.rounds

    def payoffs(self) -> tuple[float, ...]:
        totals = [0.0] * self.game.n_players
        for r in self.history:
            for p, x in enumerate(r.payoffs):
                totals[p] += x
        return tuple(totals)

    def _event(self, t: int, r: Round) -> Event:
        labels = self.game.stage.labels
        return Event(
            "round",
            {
                "round": t,
                "actions": [
                    labels[p][a] if a != FORFEIT else None for p, a in enumerate(r.actions)
                ],
                "payoffs": list(r.payoffs),
                "valid": r.valid,
            },
        )

    def _next(self, actions: Mapping[int, Action]) -> tuple[RepeatedState, list[Event]]:
        stage = self.game.stage
        profile = tuple(stage.index(p, str(actions[p])) for p in range(stage.n_players))
        return self._then(Round(profile, stage.payoff(profile)))

    def forfeit(self, actions: Mapping[int, Action | None]) -> tuple[RepeatedState, list[Event]]:
        """Play a round in which some moves are invalid (None): it scores the forfeit payoffs.

        The valid moves are still checked and recorded, so the history shows who failed.
        """
        if self.is_terminal():
            raise IllegalAction("the game is over: no further actions are accepted")
        stage = self.game.stage
        if set(actions) != set(range(stage.n_players)):
            raise IllegalAction(f"expected actions from players {list(range(stage.n_players))}")
        profile = tuple(
            FORFEIT if actions[p] is None else stage.index(p, str(actions[p]))
            for p in range(stage.n_players)
        )
        if FORFEIT not in profile:
            return self._next({p: a for p, a in actions.items() if a is not None})
        return self._then(Round(profile, self.game.forfeit_payoffs))

    def _then(self, played: Round) -> tuple[RepeatedState, list[Event]]:
        event = self._event(len(self.history) + 1, played)
        nxt = RepeatedState(self.game, (*self.history, played), (*self._events(), event))
        return nxt, [event]
