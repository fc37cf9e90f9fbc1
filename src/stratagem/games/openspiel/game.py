"""Any OpenSpiel game as a stratagem game: `openspiel:<game string>` (`openspiel:kuhn_poker`,
`openspiel:goofspiel(num_cards=5)`).

OpenSpiel's state stays inside the engine: each seat observes only OpenSpiel's own string for it
(the board for perfect-information games; the seat's information state, else its observation
string, for the others), so another seat's private information (a card) never reaches it. Actions
are the legal actions' strings, a `Choice`, validated by the engine as every action is. Chance
outcomes are drawn from the episode's seed, one draw per position in the history, so a seed replays
exactly. Payoffs are OpenSpiel's returns.

Events: the moves and chance outcomes, and the board as OpenSpiel prints it after each step. In a
perfect-information (or one-shot) game they are public. In an imperfect-information game a seat
sees its own moves and its own string only; the full board and the chance outcomes are recorded
for no seat (the transcript's and replay's whole view).

A seat whose replies stay invalid plays a legal move drawn from the episode's seed: OpenSpiel has
no rule for a missing move, and a uniform draw favours no one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation, State, chance
from stratagem.games.openspiel.bounds import check_parameters
from stratagem.games.openspiel.loader import PREFIX, pyspiel, quiet
from stratagem.games.openspiel.sandbox import trial_load
from stratagem.games.spaces import Choice, IllegalAction

RECORD_ONLY: frozenset[int] = frozenset()
"""The visibility of what no seat may see: kept for the transcript and the replay."""


class OpenSpielGame(Game):
    """One OpenSpiel game string, loaded once."""

    def __init__(self, game_string: str) -> None:
        spiel = pyspiel()
        check_parameters(game_string)  # before OpenSpiel sees them (bounds)
        trial_load(game_string)  # in another process first: OpenSpiel may crash on them
        try:
            with quiet():
                self.spiel_game = spiel.load_game(game_string)
        except Exception as exc:  # pyspiel raises its own SpielError for an unknown game
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StratagemError(f"game '{PREFIX}{game_string}': OpenSpiel says: {first}") from None
        kind = self.spiel_game.get_type()
        if kind.chance_mode == spiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
            raise StratagemError(
                f"game '{PREFIX}{game_string}': its chance outcomes are sampled inside OpenSpiel, "
                "so the episode's seed cannot draw them; choose a game with explicit chance"
            )
        self.game_string = game_string
        self.name = f"{PREFIX}{game_string}"
        self.n_players = self.spiel_game.num_players()
        self.perfect = kind.information != spiel.GameType.Information.IMPERFECT_INFORMATION
        """Whether every seat may see the whole state (one-shot games reveal it once played)."""
        self.simultaneous = kind.dynamics == spiel.GameType.Dynamics.SIMULTANEOUS
        self.title = kind.long_name

    def description(self) -> str:
        info = "perfect" if self.perfect else "imperfect"
        moves = "simultaneous" if self.simultaneous else "sequential"
        return f"OpenSpiel's {self.title}: {self.n_players} players, {moves}, {info} information"

    def initial_state(self, seed: int = 0) -> OpenSpielState:
        raw, events = _settle(self, self.spiel_game.new_initial_state(), seed)
        return OpenSpielState(self, raw, seed, tuple(events), tuple(events))


@dataclass(frozen=True)
class OpenSpielObservation(Observation):
    """A seat's view: OpenSpiel's string for this seat and the game's name."""

    game: str = ""
    title: str = ""
    """OpenSpiel's long name of the game ("Kuhn Poker")."""
    perfect: bool = True
    """Whether the seat sees the whole state (a perfect-information or one-shot game)."""
    info: str = ""
    """The board (perfect information) or this seat's information state (else its observation
    string), as OpenSpiel prints it."""
    world: Callable[[random.Random], Any] | None = field(default=None, repr=False, compare=False)
    """A pyspiel state consistent with what this seat knows (the true one in a perfect-information
    game, one resampled from the seat's information state otherwise), for OpenSpiel's own bots."""


@dataclass(frozen=True)
class OpenSpielState(State):
    game: OpenSpielGame
    raw: Any
    """The pyspiel state: never changed after construction (`_next` clones it)."""
    seed: int
    history: tuple[Event, ...]
    """Every event so far, with its visibility."""
    opened: tuple[Event, ...] = ()

    def to_act(self) -> tuple[int, ...]:
        if self.raw.is_terminal():
            return ()
        if self.raw.is_simultaneous_node():
            return tuple(p for p in range(self.game.n_players) if self.raw.legal_actions(p))
        return (int(self.raw.current_player()),)

    def legal(self, player: int) -> Choice:
        if player not in self.to_act():
            raise IllegalAction(f"player {player} does not act now in {self.game.name}")
        return Choice(tuple(self._labels(player)))

    def _labels(self, player: int) -> dict[str, int]:
        return action_labels(self.raw, player)

    def observation(self, player: int) -> OpenSpielObservation:
        if not 0 <= player < self.game.n_players:
            raise StratagemError(
                f"{self.game.name} has players 0 to {self.game.n_players - 1}, got {player}"
            )
        return OpenSpielObservation(
            player=player,
            legal=self.legal(player) if player in self.to_act() else None,
            events=tuple(e for e in self.history if e.visible_to is None or player in e.visible_to),
            game=self.game.name,
            title=self.game.title,
            perfect=self.game.perfect,
            info=seat_string(self.game, self.raw, player),
            world=lambda rng: self._world(player, rng),
        )

    def _world(self, player: int, rng: random.Random) -> Any:
        if self.game.perfect:
            return self.raw.clone()
        return self.raw.resample_from_infostate(player, rng.random)

    def is_terminal(self) -> bool:
        return bool(self.raw.is_terminal())

    def payoffs(self) -> tuple[float, ...]:
        return tuple(float(r) for r in self.raw.returns())

    def opening(self) -> tuple[Event, ...]:
        return self.opened

    def fallback(self, player: int) -> str:
        """A legal move drawn from the seed (module docstring)."""
        labels = list(self._labels(player))
        rng = chance(self.seed, "openspiel-fallback", len(self.raw.history()), player)
        return rng.choice(labels)

    def _next(self, actions: Mapping[int, Any]) -> tuple[OpenSpielState, list[Event]]:
        raw = self.raw.clone()
        ids = {p: self._labels(p)[str(a)] for p, a in actions.items()}
        seen = (lambda p: None) if self.game.perfect else (lambda p: frozenset({p}))
        moves = [
            Event("move", {"player": p, "move": str(a)}, seen(p))
            for p, a in sorted(actions.items())
        ]
        if raw.is_simultaneous_node():
            raw.apply_actions([ids.get(p, 0) for p in range(self.game.n_players)])
        else:
            (p,) = ids
            raw.apply_action(ids[p])
        raw, events = _settle(self.game, raw, self.seed)
        events = moves + events
        return OpenSpielState(self.game, raw, self.seed, self.history + tuple(events)), events


def action_labels(raw: Any, player: int) -> dict[str, int]:
    """A seat's legal moves: label -> OpenSpiel action id, in OpenSpiel's order; a label
    OpenSpiel prints twice gets its id appended."""
    ids = raw.legal_actions(player)
    texts = [raw.action_to_string(player, a) for a in ids]
    return {(t if texts.count(t) == 1 else f"{t} #{a}"): a for t, a in zip(texts, ids, strict=True)}


def seat_string(game: OpenSpielGame, raw: Any, player: int) -> str:
    """What `player` is shown: never another seat's private information (module docstring)."""
    if game.perfect:
        return str(raw)
    kind = game.spiel_game.get_type()
    if kind.provides_information_state_string:
        return str(raw.information_state_string(player))
    if kind.provides_observation_string:
        return str(raw.observation_string(player))
    return ""


def _settle(game: OpenSpielGame, raw: Any, seed: int) -> tuple[Any, list[Event]]:
    """Resolve chance nodes from the seed, then the boards of the new state (module docstring).
    `raw` is a fresh clone, changed in place."""
    events: list[Event] = []
    hidden = None if game.perfect else RECORD_ONLY
    while raw.is_chance_node():
        outcomes = raw.chance_outcomes()
        draw = chance(seed, "openspiel", len(raw.history())).random()
        action = _pick(outcomes, draw)
        text = raw.action_to_string(pyspiel().PlayerId.CHANCE, action)
        events.append(Event("chance", {"outcome": text}, hidden))
        raw.apply_action(action)
    if game.perfect:
        events.append(Event("board", {"board": str(raw)}))
    else:
        events.append(Event("board", {"board": str(raw)}, RECORD_ONLY))
        events.extend(
            Event("board", {"player": p, "board": seat_string(game, raw, p)}, frozenset({p}))
            for p in range(game.n_players)
        )
    if raw.is_terminal():
        returns = [float(r) for r in raw.returns()]
        events.append(Event("result", {"returns": returns}))
    return raw, events


def _pick(outcomes: list[tuple[int, float]], draw: float) -> int:
    """The outcome a uniform draw in [0, 1) lands on, by OpenSpiel's probabilities."""
    total = 0.0
    for action, probability in outcomes:
        total += probability
        if draw < total:
            return int(action)
    return int(outcomes[-1][0])
