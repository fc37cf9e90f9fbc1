"""seed-001's tool and debate architectures over a cooperation mechanism (`games/mechanisms`).

The thesis' prompts tell an interrogation scenario with two actions; a mechanism adds rules
(a mediator, a contract, a removed action) and decisions (propose, accept, disarm) of its own.
So over a mechanism both architectures keep their pipeline and their fixed lines (the tool's
rules and Fig 2.9, the debate's roles and Fig 2.13, seed-001 §6.2-6.3) and take the scenario
from the mechanism's templates (`game_templates/<mechanism>/`: `system.j2`, its rules;
`turn.j2`, the record it shows the seat and what it asks now), the same text the plain player
reads. The wrappers are in `game_templates/seed-001/`.
"""

from __future__ import annotations

import functools
from typing import Any

import jinja2

from stratagem.agents.attitudes import Attitude, suggested_index
from stratagem.agents.game_prompts import GamePrompter, GamePrompts, prompts_for
from stratagem.agents.prompts import prompt_environment
from stratagem.errors import StratagemError
from stratagem.games.base import Game, Observation
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.games.mechanisms import MechanismGame, MechanismObservation
from stratagem.games.spaces import Choice

FOLDER = "seed-001"
"""The wrappers' folder under `agents/game_templates/`."""


def plays(game: Game) -> str | None:
    """The `plays` rule of the thesis architectures: 2-player repeated matrix games, and the
    cooperation mechanisms over a stage of two actions a seat (the attitudes and the lawyer
    name the cooperate and defect roles)."""
    if type(game) is RepeatedGame and game.n_players == 2:
        return None
    if isinstance(game, MechanismGame):
        if game.stage.sizes != (2, 2):
            return (
                "its attitudes and lawyer name the two actions of a stage game; "
                f"'{game.stage.name}' has {' and '.join(map(str, game.stage.sizes))}"
            )
        return None
    return "it plays 2-player repeated matrix games and the cooperation mechanisms"


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return prompt_environment(jinja2.PackageLoader("stratagem.agents", "game_templates"))


class MechanismPrompts:
    """The mechanism's rules and turn, and the seed-001 wrappers around them, for one game."""

    def __init__(self, game: MechanismGame, prompts: GamePrompts | None = None) -> None:
        prompts = prompts or prompts_for(game)
        if prompts is None:
            raise StratagemError(f"no prompts for the mechanism '{game.name}'")
        self.game = game
        self.prompts = prompts
        self.rules = GamePrompter(game, prompts)

    def labels(self, observation: MechanismObservation) -> tuple[str, ...]:
        """What the seat may answer now: the phase's legal labels (a removed action is not)."""
        space = observation.legal
        if not isinstance(space, Choice):
            raise StratagemError(f"{self.game.name}: no choice to make in this phase")
        return space.labels

    def render(self, name: str, observation: MechanismObservation, **extra: Any) -> str:
        """A wrapper of `seed-001/`, with the mechanism's rules (`rules`), the phase's options
        (`labels`) and the stage's largest payoff (`top`)."""
        template = _environment().get_template(f"{FOLDER}/{name}")
        return template.render(
            rules=self.rules.system(observation).strip(),
            labels=self.labels(observation),
            top=float(self.game.stage.payoffs.max()),
            obs=observation,
            **extra,
        ).strip()

    def turn(self, observation: MechanismObservation, reply: str) -> str:
        """The mechanism's turn (record and question) ending with the wrapper `reply`."""
        return self.rules.turn(observation, self.render(reply, observation)).strip()

    def advice(self, attitude: Attitude, observation: MechanismObservation) -> str:
        """The stage action an attitude names for the seat, or "the best choice" (AMBIG-6)."""
        index = suggested_index(attitude)
        if index is None:
            return "the best choice"
        return self.game.stage.labels[observation.player][index]


def mechanism_observation(observation: Observation) -> MechanismObservation | None:
    """The observation, if it is a mechanism's."""
    return observation if isinstance(observation, MechanismObservation) else None
