"""Prompts of the games beyond repeated 2-player matrix games: a folder of jinja2 templates each.

A game is registered with its template folder (under `agents/game_templates/`) and the name its
amounts go by in replies ("offer", "contribution"). Python hands the templates the player's
observation and a few framing-neutral facts (the seat, the matrix outcomes from that seat, the
reply instruction); the words are in the templates, so a game's prompts can be read and changed
without reading code.

Files of a game folder: `system.j2` (the rules, the player's role) and `turn.j2` (the state as this
player sees it and what it must decide now; `reply` is the instruction of the reply format).
A game defined outside the package registers a folder anywhere (`GamePrompts(directory=...)`),
so adding a game needs no file inside stratagem (docs/guides/new-game.md). A game may also hand
its templates facts of its own (`facts`) and folders of data files they include (`includes`):
OpenSpiel's rules texts, which a prompt variant's `<folder>/<name>/` files replace as they
replace templates.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from stratagem.agents.prompts import prompt_environment
from stratagem.errors import StratagemError
from stratagem.games.base import Game, Observation
from stratagem.games.magic.public_good import PublicGoodGame
from stratagem.games.matrix.cheap_talk import CheapTalkGame
from stratagem.games.mechanisms import MECHANISM_GAMES
from stratagem.games.openspiel import OpenSpielGame
from stratagem.games.openspiel.facts import RULES, game_facts
from stratagem.games.textarena import TextArenaGame
from stratagem.games.ultimatum import UltimatumGame


@dataclass(frozen=True)
class GamePrompts:
    folder: str
    """The template folder under `agents/game_templates/`."""
    amount: str = "amount"
    """What an integer reply is called in the JSON the model writes."""
    text: str = "message"
    """What a free-text reply is called in the instruction."""
    directory: Path | None = None
    """Where `folder` is, for a game whose templates are not the package's own; None: in
    `agents/game_templates/`."""
    overlay: Path | None = None
    """A prompt variant's folder (`prompt_variants`), searched first: its `<folder>/` files
    replace the game's."""
    includes: tuple[tuple[str, Path], ...] = ()
    """Folders of data files the templates include as `<folder>/<name>/<file>`, by name, after
    the variant's and the game's own files of that name."""
    facts: Callable[[Any], Mapping[str, Any]] | None = None
    """What the templates may read of the game besides the observation, computed once per
    game (OpenSpiel's parameters and game type)."""


GAME_PROMPTS: dict[type[Game], GamePrompts] = {}
"""The games the general LLM player has prompts for, by game class (`register_prompts`)."""


def register_prompts(game_type: type[Game], prompts: GamePrompts) -> None:
    """Give the general LLM player `prompts` for games of class `game_type` (exactly that class:
    a plugin's subclass of a built-in game registers its own). stratagem's games register here
    as `stratagem.register.game` does a plugin's; a class keeps the prompts it has (built-ins
    win), so registering other ones for it is refused."""
    known = GAME_PROMPTS.get(game_type)
    if known is not None and known != prompts:
        raise StratagemError(
            f"game prompts for {game_type.__module__}.{game_type.__qualname__}: already "
            f"registered (folder '{known.folder}'); a game of your own registers its own class"
        )
    GAME_PROMPTS[game_type] = prompts


def prompts_for(game: Game) -> GamePrompts | None:
    return GAME_PROMPTS.get(type(game))


register_prompts(UltimatumGame, GamePrompts("ultimatum", amount="offer"))
register_prompts(PublicGoodGame, GamePrompts("public-good", amount="contribution"))
register_prompts(CheapTalkGame, GamePrompts("cheap-talk"))
register_prompts(
    OpenSpielGame,
    GamePrompts("openspiel", amount="move", includes=(("rules", RULES),), facts=game_facts),
)
register_prompts(TextArenaGame, GamePrompts("textarena", text="move"))
for _mechanism in MECHANISM_GAMES:  # games/mechanisms: a folder per mechanism, named as it
    register_prompts(_mechanism, GamePrompts(_mechanism.mechanism))


@functools.lru_cache(maxsize=16)
def _environment(
    directory: Path | None = None,
    overlay: Path | None = None,
    folder: str = "",
    includes: tuple[tuple[str, Path], ...] = (),
) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = []
    if overlay is not None:
        loaders.append(jinja2.FileSystemLoader(overlay))
    if directory is not None:
        loaders.append(jinja2.FileSystemLoader(directory))
    else:
        loaders.append(jinja2.PackageLoader("stratagem.agents", "game_templates"))
    for name, path in includes:  # `<folder>/<name>/<file>` -> `<path>/<file>`
        inner = jinja2.PrefixLoader({name: jinja2.FileSystemLoader(path)})
        loaders.append(jinja2.PrefixLoader({folder: inner}))
    return prompt_environment(jinja2.ChoiceLoader(loaders))


@dataclass(frozen=True)
class Outcome:
    """One cell of a 2-player matrix game from the player's seat."""

    own: str
    other: str
    own_payoff: float
    other_payoff: float


class GamePrompter:
    """Renders one game's prompts for one seat."""

    def __init__(self, game: Game, prompts: GamePrompts) -> None:
        self.game = game
        self.prompts = prompts
        env = _environment(prompts.directory, prompts.overlay, prompts.folder, prompts.includes)
        try:
            self._system = env.get_template(f"{prompts.folder}/system.j2")
            self._turn = env.get_template(f"{prompts.folder}/turn.j2")
        except jinja2.TemplateNotFound as exc:
            raise StratagemError(f"game prompts '{prompts.folder}': no template {exc}") from None
        self._facts = dict(prompts.facts(game)) if prompts.facts is not None else {}

    def system(self, observation: Observation) -> str:
        return self._system.render(self._context(observation, reply=""))

    def turn(self, observation: Observation, reply: str) -> str:
        return self._turn.render(self._context(observation, reply=reply))

    def _context(self, observation: Observation, reply: str) -> dict[str, Any]:
        return {
            **self._facts,
            "obs": observation,
            "seat": observation.player,
            "n_players": self.game.n_players,
            "outcomes": self._outcomes(observation.player),
            "reply": reply,
        }

    def _outcomes(self, seat: int) -> list[Outcome]:
        stage = self.game.matrix()
        if stage is None or stage.n_players != 2:
            return []
        other = 1 - seat
        out = []
        for mine, own_label in enumerate(stage.labels[seat]):
            for theirs, other_label in enumerate(stage.labels[other]):
                profile = (mine, theirs) if seat == 0 else (theirs, mine)
                payoffs = stage.payoff(profile)
                out.append(Outcome(own_label, other_label, payoffs[seat], payoffs[other]))
        return out
