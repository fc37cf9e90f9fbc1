"""A strategy of the repeated matrix games seated in a game under a cooperation mechanism
(`games.mechanisms`): `TitForTat` plays `contracting/dilemma` as it plays `dilemma`.

Its stage moves are the strategy's, from the history the mechanism shows the seat: the rounds
played with its one partner, or under `reputation` its own record against the current partner's
(the partner's past moves as the "opponent's", so a reciprocating strategy reciprocates
reputations: TitForTat plays what its partner played last, against whomever). The mechanism's
own decisions follow a documented default, one rule per phase (`DECISIONS`): propose the
profile of largest total payoff (the one a mediator recommends), accept only that contract,
keep every action; a mediator's recommendation is not read, so a strategy under mediation plays
as it would without one, and the record shows whether that followed the mediator. A bot never
removes an action, so its strategy's moves are always legal.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import cast

from stratagem.errors import StratagemError
from stratagem.games.base import Game, Observation
from stratagem.games.matrix.repeated import FORFEIT
from stratagem.games.mechanisms import MOVE, MechanismGame, MechanismObservation
from stratagem.games.mechanisms.base import welfare_profile
from stratagem.games.mechanisms.contracting import (
    ACCEPT,
    PROPOSE,
    ContractingObservation,
    offer,
)
from stratagem.games.mechanisms.disarmament import DISARM, KEEP
from stratagem.games.mechanisms.reputation import ReputationObservation
from stratagem.games.spaces import Action
from stratagem.strategies.base import Strategy
from stratagem.strategies.game_bots import GameBot


def _propose(obs: MechanismObservation) -> Action:
    """The profile of largest total payoff, in the proposer's words."""
    assert obs.stage is not None
    return offer(obs.stage, obs.player, welfare_profile(obs.stage))


def _accept(obs: MechanismObservation) -> Action:
    """Accept the contract of largest total payoff, reject any other."""
    assert obs.stage is not None and isinstance(obs, ContractingObservation)
    best = [obs.stage.labels[p][a] for p, a in enumerate(welfare_profile(obs.stage))]
    return "accept" if list(obs.proposal) == best else "reject"


def _keep(obs: MechanismObservation) -> Action:
    """Remove no action."""
    return KEEP


DECISIONS: dict[str, Callable[[MechanismObservation], Action]] = {
    PROPOSE: _propose,
    ACCEPT: _accept,
    DISARM: _keep,
}
"""A bot's default at each of a mechanism's own decisions, by phase."""


class MechanismBot(GameBot):
    """`make` builds a fresh copy of the strategy (one per member it plays under reputation)."""

    name = "mechanism"

    def __init__(self, make: Callable[[], Strategy]) -> None:
        self.make = make
        self._label = make().label
        self._playing: dict[str, Strategy] = {}
        """The strategy of each member this seat plays (the seat itself, outside reputation)."""

    @property
    def label(self) -> str:
        return self._label

    @staticmethod
    def plays(game: Game) -> bool:
        return isinstance(game, MechanismGame)

    def check(self, game: Game, seat: int) -> None:
        stage = game.matrix()
        if not self.plays(game) or stage is None:
            raise StratagemError(f"'{self.label}' plays repeated matrix games, not '{game.name}'")
        self.make().reset(stage, seat)  # a 3-action stage refuses a 2-action strategy

    def act(self, observation: Observation, rng: random.Random) -> Action:
        obs = cast(MechanismObservation, observation)
        if obs.phase != MOVE:
            decide = DECISIONS.get(obs.phase)
            if decide is None:
                raise StratagemError(f"'{self.label}' has no rule for a '{obs.phase}' decision")
            return decide(obs)
        assert obs.stage is not None
        seat = obs.player
        if isinstance(obs, ReputationObservation):
            key = obs.member
            pairs = zip(obs.records[obs.member], obs.records[obs.partner], strict=True)
            played = [(m.own, p.own) for m, p in pairs if m.own is not None and p.own is not None]
            own = [obs.stage.index(seat, a) for a, _ in played]
            opponent = [obs.stage.index(1 - seat, b) for _, b in played]
        else:
            key = str(seat)
            rounds = [r for r in obs.history if FORFEIT not in r.actions]
            own = [r.actions[seat] for r in rounds]
            opponent = [r.actions[1 - seat] for r in rounds]
        strategy = self._playing.get(key)
        if strategy is None:
            strategy = self._playing[key] = self.make()
            strategy.reset(obs.stage, seat)
        return obs.stage.labels[seat][strategy.act(own, opponent, rng)]
