"""The gymnasium spaces of `stratagem.env` and `stratagem.parallel_env` (docs/pettingzoo.md):
each seat's fixed set of moves where its game has one (a Discrete action with a mask), bounded
text otherwise, and the structured part of an observation.

A PettingZoo seat keeps one action space for the whole game, while a stratagem seat may be asked
for a label now and an amount later (the ultimatum's proposer and responder), so a Discrete action
numbers the union of every move the seat can ever be asked for; the mask says which are legal now.
A game declares that set (`Game.moves`: the matrix games, OpenSpiel's); `VOCABULARIES` gives it
for the built-in games that do not declare it themselves. The others (free text: Chameleon's
clues, TradeCraft's proposals) take text.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from stratagem.errors import StratagemError
from stratagem.games.base import Game, Observation
from stratagem.games.magic.cost_sharing import CostSharingGame
from stratagem.games.magic.magic_dilemma import MagicDilemmaGame
from stratagem.games.magic.public_good import PublicGoodGame
from stratagem.games.matrix.repeated import RepeatedObservation
from stratagem.games.spaces import Action, Shares
from stratagem.games.ultimatum import RESPONSES, UltimatumGame

MAX_ROUND = 2**31 - 1
"""The bound of a round number in the structured observation (no game comes near it)."""
MAX_VIEW_CHARS = 10_000_000
"""The longest text observation: a bound for the space, far above any catalog game's view."""
SAMPLE_CHARS = 40
"""The longest line `Utterance.sample` writes unasked (a random move, not a random novel)."""
MAX_VOCABULARY = 100_000
"""Most moves a seat's Discrete space may index: every step checks each of them for the mask
(0.015 to 0.11 s per step at this bound), and the catalog's largest is 5,154 (cost sharing at
a stride of 1%). A game with more (an ultimatum's pie of a million) plays `actions="text"`."""


class Utterance(spaces.Text):
    """Any text of at most `max_length` characters. gymnasium's `Text` limits the characters too,
    but a seat is told (and may write) any text, so `contains` checks the length only; `sample`
    draws short printable lines."""

    def __init__(self, max_length: int, seed: int | None = None) -> None:
        charset = string.ascii_letters + string.digits + string.punctuation + " "
        super().__init__(max_length, min_length=0, charset=charset, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(
        self,
        mask: tuple[int | None, NDArray[np.int8] | None] | None = None,
        probability: tuple[int | None, NDArray[np.float64] | None] | None = None,
    ) -> str:
        if mask is None and probability is None:
            mask = (int(self.np_random.integers(1, min(self.max_length, SAMPLE_CHARS) + 1)), None)
        return super().sample(mask=mask, probability=probability)


# -- vocabularies --------------------------------------------------------------------------------


def _stage_labels(game: Game, seat: int) -> Iterable[Action]:
    stage = game.matrix()
    assert stage is not None
    return stage.labels[seat]


def _public_good(game: Game, seat: int) -> Iterable[Action]:
    assert isinstance(game, PublicGoodGame)
    return range(game.endowment + 1)


def _ultimatum(game: Game, seat: int) -> Iterable[Action]:
    # One vocabulary for both roles, so a seat's space does not depend on who proposes.
    assert isinstance(game, UltimatumGame)
    return itertools.chain(range(game.pie + 1), RESPONSES)


def _cost_sharing(game: Game, seat: int) -> Iterable[Action]:
    assert isinstance(game, CostSharingGame)
    return itertools.chain(splits(game.space), game.votes.labels)


def splits(space: Shares) -> tuple[str, ...]:
    """Every legal split of a `Shares` space, in its canonical form."""
    steps = space.total // space.step
    out = []
    for values in itertools.product(range(steps + 1), repeat=len(space.parties)):
        if sum(values) == steps:
            out.append(space.format([v * space.step for v in values]))
    return tuple(out)


VOCABULARIES: dict[type[Game], Callable[[Game, int], Iterable[Action]]] = {
    MagicDilemmaGame: _stage_labels,
    PublicGoodGame: _public_good,
    UltimatumGame: _ultimatum,
    CostSharingGame: _cost_sharing,
}
"""Every move a seat of these built-in games can be asked for, by game class, for the games that
do not declare it (`Game.moves`). Each gives its moves lazily, so `vocabulary` stops at
`MAX_VOCABULARY` instead of building them all first."""


def vocabulary(game: Game, seat: int) -> Sequence[Action] | None:
    """The moves a seat may ever make, where the game has a fixed finite set of them; a
    one-line error, after building at most `MAX_VOCABULARY` + 1 of them, where it has more."""
    bound = MAX_VOCABULARY
    words = game.moves(seat)
    if words is None:
        make = VOCABULARIES.get(type(game))
        if make is None:
            return None
        words = tuple(itertools.islice(make(game, seat), bound + 1))
    if len(words) > bound:
        raise StratagemError(
            f"game '{game.name}': player {seat} may make more than {bound:,} different moves, "
            "too many for a discrete action space (MAX_VOCABULARY); use actions='text'"
        )
    return words


# -- structured observations ---------------------------------------------------------------------


def structured_space(first: Observation) -> spaces.Dict:
    """The numbers a seat sees, from its first observation: the round, and in a repeated matrix
    game every seat's past moves (label indices, -1 not yet played or forfeited)."""
    fields: dict[str, spaces.Space[Any]] = {
        "round": spaces.Box(0, MAX_ROUND, shape=(1,), dtype=np.int64)
    }
    if isinstance(first, RepeatedObservation) and first.stage is not None:
        stage = first.stage
        fields["history"] = spaces.Box(
            -1, max(stage.sizes) - 1, shape=(first.rounds, stage.n_players), dtype=np.int64
        )
    return spaces.Dict(fields)


def structured(space: spaces.Space[Any], observation: Observation) -> dict[str, NDArray[np.int64]]:
    """An observation's numbers, in the shape of its `structured_space`."""
    assert isinstance(space, spaces.Dict)
    out = {"round": np.array([observation.moment()], dtype=np.int64)}
    history = space.spaces.get("history")
    if history is not None and isinstance(observation, RepeatedObservation):
        table = np.full(history.shape or (), -1, dtype=np.int64)
        for t, played in enumerate(observation.history[: table.shape[0]]):
            table[t] = played.actions
        out["history"] = table
    return out
