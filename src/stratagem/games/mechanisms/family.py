"""The mechanisms by name, each over any 2-player matrix game of the catalog: `contracting` (its
`stage` option, the Dilemma by default) and `contracting/sh` (the stage named after the slash,
so that one experiment file plays several stages, each with its own `game_options`).

`entries` registers the mechanisms as catalog games; `games.libraries` resolves the
`<mechanism>/<stage>` names, as it resolves other families' game strings, with `staged_entry`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from stratagem.errors import StratagemError
from stratagem.games.bounds import Bounds, Rounds, bounded
from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.mechanisms.base import MechanismGame
from stratagem.games.mechanisms.contracting import ContractingGame
from stratagem.games.mechanisms.disarmament import DisarmamentGame
from stratagem.games.mechanisms.mediation import MediationGame
from stratagem.games.mechanisms.repetition import RepetitionGame
from stratagem.games.mechanisms.reputation import ReputationGame
from stratagem.games.registry import GAMES

FAMILY = "mechanisms"
SOURCE = "not from a seed study: cooperation mechanisms after CoopEval (ICML 2026), issue 37"
DEFAULT_STAGE = "dilemma"
"""seed-001 §4.1's Prisoner's Dilemma, the catalog's first social dilemma."""
DEFAULT_ROUNDS = 10
"""One default for every mechanism, so that `rounds: [study]` compares them at one length."""
MAX_MEMBERS = 100
"""Members of each reputation group: far above a population anyone pays a model to play."""
Members = Annotated[int, Bounds(2, MAX_MEMBERS)]
Seat = Annotated[int | None, Bounds(0, 1, "a seat")]


def stage_game(name: str) -> NormalFormGame:
    """The catalog's 2-player matrix game `name`, or a one-line error listing them."""
    entry = GAMES.get(name) if isinstance(name, str) else None
    game = entry.factory() if entry is not None else None
    if isinstance(game, NormalFormGame) and game.n_players == 2:
        return game
    stages = [n for n, e in GAMES.items() if _is_stage(e)]
    what = "not a 2-player matrix game" if entry is not None else "not a catalog game"
    raise StratagemError(f"stage game {name!r}: {what}; stage games: {', '.join(stages)}")


def _is_stage(entry: CatalogEntry) -> bool:
    try:
        game = entry.factory()
    except StratagemError:
        return False
    return isinstance(game, NormalFormGame) and game.n_players == 2


@bounded("repetition")
def repetition(
    stage: str = DEFAULT_STAGE, rounds: Rounds = DEFAULT_ROUNDS, continuation: float = 0.8
) -> RepetitionGame:
    # 0.8: five rounds expected, and above the 0.5 the Dilemma's T15 R10 P5 needs for a grim
    # trigger to sustain cooperation ((T - R) / (T - P), seed-001 §4.1's payoffs).
    return RepetitionGame(stage_game(stage), rounds, continuation)


@bounded("reputation")
def reputation(
    stage: str = DEFAULT_STAGE, rounds: Rounds = DEFAULT_ROUNDS, members: Members = 3
) -> ReputationGame:
    return ReputationGame(stage_game(stage), rounds, members)


@bounded("mediation")
def mediation(
    stage: str = DEFAULT_STAGE, rounds: Rounds = DEFAULT_ROUNDS, mediator: str = "welfare"
) -> MediationGame:
    return MediationGame(stage_game(stage), rounds, mediator)


@bounded("contracting")
def contracting(
    stage: str = DEFAULT_STAGE,
    rounds: Rounds = DEFAULT_ROUNDS,
    penalty: float | None = None,
    proposer: Seat = None,
) -> ContractingGame:
    return ContractingGame(stage_game(stage), rounds, penalty, proposer)


@bounded("disarmament")
def disarmament(stage: str = DEFAULT_STAGE, rounds: Rounds = DEFAULT_ROUNDS) -> DisarmamentGame:
    return DisarmamentGame(stage_game(stage), rounds)


MECHANISMS: dict[str, tuple[Callable[..., MechanismGame], str]] = {
    "repetition": (
        repetition,
        "the stage game played again after each round with probability `continuation`; "
        "players are told the probability, never the horizon",
    ),
    "reputation": (
        reputation,
        "two groups meeting in rotating pairs, every member's past moves with other partners "
        "public",
    ),
    "mediation": (
        mediation,
        "a mediator of the engine recommends a profile before each round; players may follow it",
    ),
    "contracting": (
        contracting,
        "a contract (a profile, a penalty for deviating) proposed and accepted before play, "
        "enforced by the engine",
    ),
    "disarmament": (
        disarmament,
        "each player may commit to remove one of its actions before play; the engine enforces it",
    ),
}
"""Each mechanism's factory (its options) and what it does, in listing order."""


def description(name: str) -> str:
    return f"Cooperation mechanism: {MECHANISMS[name][1]} (its stage game: `{name}/<stage>`)"


@dataclass(frozen=True)
class Staged:
    """A mechanism's factory with its stage bound by the game's name: the mechanism's other
    options, which `CatalogEntry.options` reads from the signature."""

    factory: Callable[..., MechanismGame]
    stage: str

    def __call__(self, **options: Any) -> MechanismGame:
        return self.factory(stage=self.stage, **options)

    @property
    def __signature__(self) -> inspect.Signature:
        signature = inspect.signature(self.factory)
        others = [p for p in signature.parameters.values() if p.name != "stage"]
        return signature.replace(parameters=others)


def staged_entry(name: str) -> CatalogEntry:
    """The entry of `<mechanism>/<stage>` (`contracting/sh`): the mechanism over that stage."""
    mechanism, _, stage = name.partition("/")
    factory = Staged(MECHANISMS[mechanism][0], stage)
    try:
        built = factory()
    except StratagemError as exc:
        raise StratagemError(f"game '{name}': {exc}") from None
    return CatalogEntry(name, built.description(), SOURCE, FAMILY, factory)
