"""A stage game repeated for a fixed number of rounds, with the full history.

Each player observes the whole public history (every player's action and payoff in past rounds), as
in both seed-001 (§3.4) and seed-003 (§3.3). Whether the number of rounds is revealed is up to the
presentation: seed-001 tells it, seed-003 does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.normal_form import NormalFormGame
from stratagem.games.spaces import Action, Choice


@dataclass(frozen=True)
class Round:
    """One played round: action indices and payoffs, one per player."""

    actions: tuple[int, ...]
    payoffs: tuple[float, ...]


@dataclass(frozen=True)
class RepeatedObservation(Observation):
    """A player's view of a repeated game: the stage rules and every past round."""

    stage: NormalFormGame | None = None
    round: int = 1
    """The round about to be played, from 1."""
    rounds: int = 1
    history: tuple[Round, ...] = ()

    def own_actions(self) -> list[str]:
        assert self.stage is not None
        return [self.stage.labels[self.player][r.actions[self.player]] for r in self.history]


class RepeatedGame(Game):
    def __init__(self, stage: NormalFormGame, rounds: int) -> None:
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise StratagemError(f"rounds must be an integer >= 1, got {rounds!r}")
        self.stage = stage
        self.rounds = rounds
        self.name = f"{stage.name}x{rounds}"
        self.n_players = stage.n_players

    def description(self) -> str:
        return f"{self.stage.description()}, repeated {self.rounds} rounds"

    def initial_state(self, seed: int = 0) -> RepeatedState:
        return RepeatedState(self, ())


@dataclass(frozen=True)
class RepeatedState(State):
    game: RepeatedGame
    history: tuple[Round, ...]

    def to_act(self) -> tuple[int, ...]:
        return () if self.is_terminal() else tuple(range(self.game.n_players))

    def legal(self, player: int) -> Choice:
        return Choice(self.game.stage.labels[player])

    def observation(self, player: int) -> RepeatedObservation:
        return RepeatedObservation(
            player=player,
            legal=None if self.is_terminal() else self.legal(player),
            events=tuple(self._event(t, r) for t, r in enumerate(self.history, start=1)),
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
                "actions": [labels[p][a] for p, a in enumerate(r.actions)],
                "payoffs": list(r.payoffs),
            },
        )

    def _next(self, actions: Mapping[int, Action]) -> tuple[RepeatedState, list[Event]]:
        stage = self.game.stage
        profile = tuple(stage.index(p, str(actions[p])) for p in range(stage.n_players))
        played = Round(profile, stage.payoff(profile))
        nxt = RepeatedState(self.game, (*self.history, played))
        return nxt, [self._event(len(nxt.history), played)]
