"""What a MAgIC player says in each game (seed-004 §2, §8): its system prompt, the request of
each phase, the reply length, and how a reply is read.

One profile per game type, in a registry (`profile_for`), so the player has no switch on games.
A profile reads only the seat's observation; the texts are the study's (`texts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from stratagem.agents.magic import texts
from stratagem.agents.magic.chat import seat_name, system_message
from stratagem.agents.magic.texts import Wording
from stratagem.agents.magic.vote_parse import VoteParser
from stratagem.agents.parsing import ParseError, Parser
from stratagem.games.base import Game, Observation
from stratagem.games.magic.chameleon import ChameleonGame, ChameleonObservation
from stratagem.games.magic.undercover import UndercoverGame
from stratagem.games.spaces import Choice, FreeText


@dataclass(frozen=True)
class Turn:
    """One call's make-up: the system prompt, the request (None: the default "Now you speak"),
    the reply's token limit, its parser, and the request fields that make a provider keep to the
    reply's template (`choices`, `json_schema`), sent only when the entry constrains its output
    (the study's models were not constrained: `constrain: false` reproduces it)."""

    system: str
    request: str | None
    max_tokens: int
    parser: Parser
    constraint: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MagicProfile:
    """How one game is played in MAgIC's chat: `turn(game, observation, wording, code_compat)`
    makes a decision's call; `system(game, observation, wording)` is the system prompt of any
    other call of the seat (a probe, an analysis)."""

    name: str
    turn: Callable[[Any, Observation, Wording, bool], Turn]
    system: Callable[[Any, Observation, Wording], str]


PROFILES: dict[type[Game], MagicProfile] = {}


def register(game_type: type[Game], profile: MagicProfile) -> None:
    PROFILES[game_type] = profile


def profile_for(game: Game) -> MagicProfile | None:
    return PROFILES.get(type(game))


@dataclass(frozen=True)
class TextParser:
    """A clue or a guess: the reply itself, which must say something and fit the space."""

    space: FreeText
    name: str = "magic-text"

    def parse(self, text: str, labels: Sequence[str] = ()) -> str:
        said = text.strip()
        if not said:
            raise ParseError("the reply is empty; say your clue in one sentence")
        if len(said) > self.space.max_chars:
            raise ParseError(
                f"the reply is too long; keep it under {self.space.max_chars} characters"
            )
        return said


SOCIAL_MAX_TOKENS = 256
"""seed-004 §2: max_tokens 256 in Chameleon, Undercover and Cost Sharing."""


def _social_parser(observation: Observation, code_compat: bool) -> Parser:
    space = observation.legal
    if isinstance(space, Choice):  # the vote: the other players' names
        return VoteParser(code_compat=code_compat, rule="social")
    assert isinstance(space, FreeText)
    return TextParser(space)


def vote_choices(observation: Observation, template: str = "I vote for {}.") -> dict[str, Any]:
    """The vote template filled with each legal player: a grammar for constrained output."""
    space = observation.legal
    if not isinstance(space, Choice):
        return {}
    return {"choices": tuple(template.format(label) for label in space.labels)}


def _chameleon_system(game: ChameleonGame, observation: Observation, wording: Wording) -> str:
    me = seat_name(observation.player)
    return system_message(
        texts.text("chameleon_global"), me, texts.render("chameleon_role_desc", player=me)
    )


def _undercover_system(game: UndercoverGame, observation: Observation, wording: Wording) -> str:
    me = seat_name(observation.player)
    return system_message(
        texts.text("undercover_global"), me, texts.render("undercover_role_desc", player=me)
    )


def _chameleon_turn(
    game: ChameleonGame, observation: Observation, wording: Wording, code_compat: bool
) -> Turn:
    assert isinstance(observation, ChameleonObservation)
    me = seat_name(observation.player)
    system = texts.text("chameleon_global")
    if observation.phase == "clue":
        # seed-004 §8.2: vanilla Chameleon seats are ChameleonPlayers, with the clue demo.
        role = "chameleon" if observation.is_chameleon else "non_chameleon"
        system += texts.text(f"chameleon_clue_demo_{role}")
    return Turn(
        system_message(system, me, texts.render("chameleon_role_desc", player=me)),
        None,
        SOCIAL_MAX_TOKENS,
        _social_parser(observation, code_compat),
        vote_choices(observation),
    )


def _undercover_turn(
    game: UndercoverGame, observation: Observation, wording: Wording, code_compat: bool
) -> Turn:
    return Turn(
        _undercover_system(game, observation, wording),
        None,
        SOCIAL_MAX_TOKENS,
        _social_parser(observation, code_compat),
        vote_choices(observation),
    )


register(ChameleonGame, MagicProfile("chameleon", _chameleon_turn, _chameleon_system))
register(UndercoverGame, MagicProfile("undercover", _undercover_turn, _undercover_system))
