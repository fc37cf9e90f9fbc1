"""OpenSpiel's baselines: `openspiel-random` (a uniform legal move) and `openspiel-mcts`
(OpenSpiel's own MCTS bot, `openspiel-mcts:<simulations>`), so "LLM vs MCTS" runs as in the peers.

A bot sees what its seat sees: it searches a state drawn consistent with its seat's information
(the true state only in a perfect-information game; OpenSpiel's resampling from the seat's
information state otherwise), never the other seats' private cards. Each decision's randomness
comes from the agent's generator, which the episode seeds, so a seed replays exactly.
"""

from __future__ import annotations

import random
from typing import Any

from stratagem.errors import StratagemError
from stratagem.games.base import Game, Observation, State
from stratagem.games.openspiel import OpenSpielGame, OpenSpielObservation
from stratagem.games.openspiel.game import action_labels
from stratagem.games.spaces import Action, Choice
from stratagem.strategies.game_bots import GameBot

DEFAULT_SIMULATIONS = 100
MAX_SIMULATIONS = 100_000
"""A bound on one decision's search, so a typo cannot make a run that never ends."""
UCT_C = 2.0
"""The exploration constant of OpenSpiel's MCTS examples."""


def _openspiel_game(bot: GameBot, game: Game) -> OpenSpielGame:
    if not isinstance(game, OpenSpielGame):
        raise StratagemError(
            f"'{bot.label}' plays OpenSpiel games (openspiel:...), not '{game.name}'"
        )
    return game


def _world(bot: GameBot, observation: Observation, rng: random.Random) -> Any:
    if not isinstance(observation, OpenSpielObservation) or observation.world is None:
        raise StratagemError(
            f"'{bot.label}' plays OpenSpiel games; got {type(observation).__name__}"
        )
    return observation.world(rng)


class OpenSpielRandom(GameBot):
    name = "openspiel-random"

    def check(self, game: Game, seat: int) -> None:
        _openspiel_game(self, game)

    def act(self, observation: Observation, rng: random.Random) -> Action:
        if not isinstance(observation.legal, Choice):
            raise StratagemError(f"'{self.label}' was asked to act with no move to make")
        return rng.choice(observation.legal.labels)


class OpenSpielMCTS(GameBot):
    name = "openspiel-mcts"

    def __init__(self, simulations: int = DEFAULT_SIMULATIONS) -> None:
        if isinstance(simulations, bool) or not isinstance(simulations, int):
            raise StratagemError(
                f"openspiel-mcts: simulations must be an integer, got {simulations!r}"
            )
        if not 1 <= simulations <= MAX_SIMULATIONS:
            raise StratagemError(
                f"openspiel-mcts: simulations must be from 1 to {MAX_SIMULATIONS:,}, "
                f"got {simulations}"
            )
        self.simulations = simulations

    @property
    def label(self) -> str:
        return f"{self.name}({self.simulations})"

    def check(self, game: Game, seat: int) -> None:
        spiel = _openspiel_game(self, game)
        if spiel.simultaneous:
            raise StratagemError(
                f"'{self.label}' searches sequential games; '{game.name}' has simultaneous moves "
                "(play openspiel-random there)"
            )
        if not spiel.perfect:
            state: State = spiel.initial_state(0)
            while not state.is_terminal() and seat not in state.to_act():
                state = state.apply({p: state.fallback(p) for p in state.to_act()})[0]
            seen = state.observation(seat)
            world = seen.world if isinstance(seen, OpenSpielObservation) else None
            try:
                if world is not None and not state.is_terminal():
                    world(random.Random(0))
            except Exception:  # pyspiel's SpielError: the game cannot resample
                raise StratagemError(
                    f"'{self.label}' needs a state drawn from what its seat knows, and OpenSpiel "
                    f"cannot resample one in '{game.name}'; play openspiel-random there"
                ) from None

    def act(self, observation: Observation, rng: random.Random) -> Action:
        from numpy.random import RandomState
        from open_spiel.python.algorithms import mcts

        world = _world(self, observation, rng)
        seed = rng.getrandbits(32)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=RandomState(seed))
        bot = mcts.MCTSBot(
            world.get_game(),
            UCT_C,
            self.simulations,
            evaluator,
            random_state=RandomState((seed + 1) % 2**32),
        )
        action = bot.step(world)
        labels = {a: label for label, a in action_labels(world, observation.player).items()}
        return labels[action]
