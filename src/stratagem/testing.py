"""Conformance checks for games and architectures, for a plugin author's own test suite.

In the spirit of PettingZoo's `api_test` and `seed_test`: plain functions that play a game (by
its registered name, `highcard:high-card`, or a `Game`) and raise `AssertionError` with a
message naming the game, seed, step and fault, so they work under pytest or any runner:

```python
from stratagem import testing

def test_high_card_conforms():
    testing.check_game("highcard:high-card")

def test_cautious_plays_high_card():
    testing.check_architecture("highcard:cautious", "highcard:high-card")
```

Every built-in game passes them (tests/test_conformance.py); docs/testing.md says what each
asserts and the rule by which private information is recognised. They run offline: random legal
players, or LLM seats on a scripted model. Call them from synchronous tests (the runner starts
its own event loop).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stratagem.agents.registry import get_architecture
from stratagem.errors import StratagemError
from stratagem.experiments import conformance as runs
from stratagem.experiments.conformance import Replier, answer
from stratagem.experiments.grid import build_game
from stratagem.games import conformance as engine
from stratagem.games.base import Game
from stratagem.games.catalog import GAMES, get_entry, get_game
from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.conformance import random_action
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.spaces import Action, ActionSpace, Choice, IllegalAction, IntegerRange

__all__ = [
    "answer",
    "check_architecture",
    "check_determinism",
    "check_game",
    "check_illegal_refused",
    "check_moves",
    "check_payoffs_finite",
    "check_private_information",
    "check_replay",
    "random_action",
]

GameLike = str | Game
"""A game by its registered name (a setting, `chameleon/3`, included) or a `Game` object."""
ROUNDS = 3
"""Rounds of a repeated game (or a game with a `rounds` option) the checks play: short."""
MAX_LISTED = 100_000
"""The widest integer range whose every value `check_moves` looks for among a seat's moves."""


def check_game(
    game: GameLike,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    rounds: int = ROUNDS,
    architecture: str | None = None,
    reply: Replier | None = None,
    public_words: Iterable[str] = (),
    **options: Any,
) -> None:
    """Every check of a game: determinism, illegal actions refused, finite payoffs, private
    information and declared moves (`check_moves`) on each seed; then one episode (the first
    seed) through the runner for the prompts' privacy and the export/import round trip.
    `architecture` seats that architecture (and checks its decisions are valid); by default the
    first that claims the game does (or random players where none does). `options` are the
    game's rule options."""
    with _resolved(game, rounds, options) as (name, label, make):
        engine.check_determinism(make, seeds, label)
        engine.check_illegal_refused(make, seeds[:1], label)
        engine.check_payoffs_finite(make, seeds, label)
        engine.check_observations_private(make, seeds, label, public_words)
        _check_moves(make, seeds, label)
        kind = architecture or runs.claiming(make())
        with _directory() as tmp:
            store = runs.play(
                name,
                tmp,
                seeds=seeds[:1],
                rounds=rounds,
                options=options,
                architecture=kind,
                reply=reply,
            )
            runs.check_prompts_private(store, label, public_words)
            runs.check_round_trip(store, tmp, label)
            if architecture is not None:
                runs.check_decisions(store, architecture, label)


def check_determinism(
    game: GameLike, *, seeds: Sequence[int] = (0, 1), rounds: int = ROUNDS, **options: Any
) -> None:
    """Two plays from the same seed (a fresh game each, the same seeded random legal policy)
    have the same seats to act, observations, events and payoffs at every step."""
    with _resolved(game, rounds, options) as (_, label, make):
        engine.check_determinism(make, seeds, label)


def check_illegal_refused(
    game: GameLike,
    *,
    seeds: Sequence[int] = (0,),
    rounds: int = ROUNDS,
    max_states: int = 25,
    **options: Any,
) -> None:
    """At the first `max_states` states of a random play, actions outside each acting seat's
    space (a wrong type; an unknown label, an integer out of range, an oversize or blank text, a
    split that does not add up), a missing or an extra seat, and any move after the end make
    `State.apply` raise `IllegalAction` and leave the state unchanged."""
    with _resolved(game, rounds, options) as (_, label, make):
        engine.check_illegal_refused(make, seeds, label, max_states)


def check_payoffs_finite(
    game: GameLike, *, seeds: Sequence[int] = (0, 1, 2), rounds: int = ROUNDS, **options: Any
) -> None:
    """One finite number per player at every state of a random play, the end included."""
    with _resolved(game, rounds, options) as (_, label, make):
        engine.check_payoffs_finite(make, seeds, label)


def check_moves(
    game: GameLike, *, seeds: Sequence[int] = (0, 1), rounds: int = ROUNDS, **options: Any
) -> None:
    """Where the game declares a seat's moves a fixed set (`Game.moves`), at every state of a
    random play the moves `State.numbered` gives that seat are numbers of the set, its space
    accepts each, and they are every move of the space where it can be listed (each label of a
    choice, each integer of a range): what a learner acting by number relies on (a PettingZoo
    seat's Discrete action and its mask). A game that declares no such set passes."""
    with _resolved(game, rounds, options) as (_, label, make):
        _check_moves(make, seeds, label)


def _check_moves(make: Callable[[], Game], seeds: Sequence[int], label: str) -> None:
    for seed in seeds:
        built = make()
        declared = {seat: built.moves(seat) for seat in range(built.n_players)}
        for moment in engine.play_random(built, seed, label):
            state = moment.state
            for seat in () if state.is_terminal() else state.to_act():
                moves = declared[seat]
                if moves is not None:
                    where = f"{label}, seed {seed}, step {moment.step}, seat {seat}"
                    _check_numbered(state.legal(seat), state.numbered(seat, moves), moves, where)


def _check_numbered(
    space: ActionSpace, numbered: Mapping[int, Action], moves: Sequence[Action], where: str
) -> None:
    for number, move in numbered.items():
        if not 0 <= number < len(moves):
            raise AssertionError(f"{where}: move number {number} is not one of 0..{len(moves) - 1}")
        try:
            space.validate(move)
        except IllegalAction:
            raise AssertionError(
                f"{where}: move {number} ({move!r}) is numbered legal, yet its space refuses it"
            ) from None
    listed: set[Action] = set()
    if isinstance(space, Choice):
        listed = set(space.labels)
    elif isinstance(space, IntegerRange) and space.high - space.low < MAX_LISTED:
        listed = set(range(space.low, space.high + 1))
    missing = listed - set(numbered.values())
    if missing:
        raise AssertionError(
            f"{where}: legal moves {sorted(missing, key=str)} have no number in the game's "
            "moves, so a seat acting by number cannot make them"
        )


def check_private_information(
    game: GameLike,
    *,
    seeds: Sequence[int] = (0,),
    rounds: int = ROUNDS,
    architecture: str | None = None,
    reply: Replier | None = None,
    public_words: Iterable[str] = (),
    **options: Any,
) -> None:
    """No observation of seat k lists an event hidden from k or holds a word of one, and, where
    an architecture plays the game (`architecture`, or the first that claims it), no prompt
    rendered for k holds one before k may see it. The rule is in docs/testing.md;
    `public_words` are words the rules show every seat although a hidden event holds them."""
    with _resolved(game, rounds, options) as (name, label, make):
        engine.check_observations_private(make, seeds, label, public_words)
        kind = architecture or runs.claiming(make())
        if kind is None:
            return  # no seat renders prompts of this game
        with _directory() as tmp:
            store = runs.play(
                name,
                tmp,
                seeds=seeds,
                rounds=rounds,
                options=options,
                architecture=kind,
                reply=reply,
            )
            if runs.check_prompts_private(store, label, public_words) == 0:
                raise AssertionError(f"{label}: the {kind} agents rendered no prompt to check")


def check_replay(
    game: GameLike,
    *,
    seeds: Sequence[int] = (0,),
    rounds: int = ROUNDS,
    architecture: str | None = None,
    reply: Replier | None = None,
    **options: Any,
) -> None:
    """Episodes played through the runner (random players, or `architecture` on a scripted
    model) replay through the engine to the same events, rounds and payoffs; exported to JSONL,
    imported into a fresh store (replayed again there) and exported again, byte-equal."""
    with _resolved(game, rounds, options) as (name, label, _), _directory() as tmp:
        store = runs.play(
            name,
            tmp,
            seeds=seeds,
            rounds=rounds,
            options=options,
            architecture=architecture,
            reply=reply,
        )
        runs.check_round_trip(store, tmp, label)


def check_architecture(
    kind: str,
    game: GameLike,
    *,
    seeds: Sequence[int] = (0,),
    rounds: int = ROUNDS,
    reply: Replier | None = None,
    settings: Mapping[str, Any] | None = None,
    **options: Any,
) -> frozenset[str]:
    """An architecture that claims `game` (`plays(game) is None`), in every seat, on a scripted
    model answering with `reply` (by default `answer`: one of the request's choices, JSON its
    schema accepts, else a line of text), gives a valid decision at every step of the episodes
    played. `settings` are the agent entry's other fields (`{"attitude": "cooperate"}`, its
    `options`). Returns the kinds of action space it answered (`{"Choice", "IntegerRange"}`)."""
    architecture = get_architecture(kind)
    with _resolved(game, rounds, options) as (name, label, make):
        reason = architecture.plays(make())
        if reason is not None:
            raise AssertionError(f"a {kind} agent does not claim to play {label}: {reason}")
        with _directory() as tmp:
            store = runs.play(
                name,
                tmp,
                seeds=seeds,
                rounds=rounds,
                options=options,
                architecture=kind,
                settings=settings,
                reply=reply,
            )
            return frozenset(runs.check_decisions(store, kind, label))


@contextmanager
def _directory() -> Iterator[Path]:
    """A results directory for one check, removed after it."""
    with tempfile.TemporaryDirectory(prefix="stratagem-conformance-") as tmp:
        yield Path(tmp)


@contextmanager
def _resolved(
    game: GameLike, rounds: int, options: dict[str, Any]
) -> Iterator[tuple[str, str, Callable[[], Game]]]:
    """The game's registered name, the name messages give it, and a maker of it as an episode
    plays it; a `Game` object is registered under a name of its own while the check runs (the
    runner and the importer look games up by name)."""
    if isinstance(game, str):
        get_game(game, **options)  # an unknown name or option: its one-line error, now
        yield game, game, lambda: _build(game, rounds, options)
        return
    if not isinstance(game, Game):
        raise StratagemError(f"expected a game name or a Game, got {game!r}")
    if options:
        raise StratagemError(
            f"game options {sorted(options)}: name the game as registered to set its options"
        )
    name = f"conformance-{re.sub(r'[^A-Za-z0-9_.-]+', '-', game.name)}-{id(game):x}"
    GAMES.add(name, CatalogEntry(name, game.description(), "stratagem.testing", name, lambda: game))
    try:
        yield name, game.name, lambda: _build(name, rounds, {})
    finally:
        GAMES.remove(name)


def _build(name: str, rounds: int, options: dict[str, Any]) -> Game:
    """The game as the runner builds it: repeated for `rounds` when it is a matrix game, with
    `rounds` when it takes a round count."""
    takes = isinstance(get_game(name, **options), NormalFormGame) or "rounds" in (
        get_entry(name).options()
    )
    return build_game(name, None, rounds if takes else None, options)
