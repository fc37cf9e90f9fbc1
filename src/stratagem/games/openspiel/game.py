"""Any OpenSpiel game as a stratagem game: `openspiel:<game string>` (`openspiel:kuhn_poker`,
`openspiel:goofspiel(num_cards=5)`).

OpenSpiel's state stays inside the engine: each seat observes only OpenSpiel's own strings for
it (the board for perfect-information games; the seat's information state, else its observation
string, for the others; in the games of `DRAWN`, both), so another seat's private information (a
card) never reaches it. Actions are the legal actions' strings, a `Choice`, validated by the
engine as every action is. Chance outcomes are drawn from the episode's seed, one draw per
position in the history, so a seed replays exactly. Payoffs are OpenSpiel's returns.

Events: the moves and chance outcomes, and the board as OpenSpiel prints it after each step. In a
perfect-information (or one-shot) game they are public. In an imperfect-information game a move
or chance outcome is seen by exactly the seats whose own information shows it (`knowledge`: every
bet of a poker game, a card by the seat it is dealt to), and each seat's string by that seat
only; the full board and every seat's return are recorded for no seat (the transcript's and
replay's whole view), and each seat is told its own return.

A seat whose replies stay invalid plays a legal move drawn from the episode's seed: OpenSpiel has
no rule for a missing move, and a uniform draw favours no one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation, State, chance
from stratagem.games.openspiel.bounds import check_parameters
from stratagem.games.openspiel.knowledge import CHANCE, Knowledge, reader
from stratagem.games.openspiel.loader import PREFIX, pyspiel, quiet
from stratagem.games.openspiel.sandbox import trial_load
from stratagem.games.spaces import Action, Choice, IllegalAction

RECORD_ONLY: frozenset[int] = frozenset()
"""The visibility of what no seat may see: kept for the transcript and the replay."""
DRAWN: frozenset[str] = frozenset({"battleship"})
"""Games whose observation string draws the position a seat sees (battleship: its own grid
and its shots), shown beside the seat's information state, whose rules text
(`rules/<name>.md`) explains the drawing."""


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
        self.read = reader(self.spiel_game)
        """A seat's string in an imperfect-information game (`seat_string`)."""
        self.views = (
            not self.perfect
            and kind.short_name in DRAWN
            and kind.provides_information_state_string
            and kind.provides_observation_string
        )
        """Whether a seat is shown its observation string besides its information state
        (`seat_view`)."""

    def description(self) -> str:
        info = "perfect" if self.perfect else "imperfect"
        moves = "simultaneous" if self.simultaneous else "sequential"
        return f"OpenSpiel's {self.title}: {self.n_players} players, {moves}, {info} information"

    def initial_state(self, seed: int = 0) -> OpenSpielState:
        root = self.spiel_game.new_initial_state()
        known = None if self.perfect else Knowledge.start(self.read, seed, root)
        raw, known, events = _settle(self, root, seed, known)
        return OpenSpielState(self, raw, seed, tuple(events), known, tuple(events))

    def moves(self, seat: int) -> range:
        """OpenSpiel's action ids: a fixed set, whose names may change with the position
        (chess's), so a state names the legal ones (`OpenSpielState.numbered`)."""
        return range(self.spiel_game.num_distinct_actions())


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
    view: str = field(default="", repr=False)
    """This seat's observation string where `info` is its information state and the two differ:
    the position now as OpenSpiel draws it for the seat (battleship's two grids) beside the
    history of what it saw; empty otherwise. Prompts show it where the rules text explains it."""
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
    known: Knowledge | None
    """Each seat's information set, which says who sees the next step's events (`knowledge`);
    None in a perfect-information game, where every event is public."""
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
            view=seat_view(self.game, self.raw, player),
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

    def numbered(self, player: int, moves: Sequence[Action]) -> dict[int, Action]:
        """The legal moves by their OpenSpiel action id (`OpenSpielGame.moves`)."""
        return {number: label for label, number in self._labels(player).items()}

    def fallback(self, player: int) -> str:
        """A legal move drawn from the seed (module docstring)."""
        labels = list(self._labels(player))
        rng = chance(self.seed, "openspiel-fallback", len(self.raw.history()), player)
        return rng.choice(labels)

    def _next(self, actions: Mapping[int, Any]) -> tuple[OpenSpielState, list[Event]]:
        ids = {p: self._labels(p)[str(a)] for p, a in actions.items()}
        raw = self.raw.clone()
        if raw.is_simultaneous_node():
            raw.apply_actions([ids.get(p, 0) for p in range(self.game.n_players)])
        else:
            (p,) = ids
            raw.apply_action(ids[p])
        known, seen = _witness(self.game, self.known, ids, raw)
        moves = [
            Event("move", {"player": p, "move": str(a)}, seen[p])
            for p, a in sorted(actions.items())
        ]
        raw, known, events = _settle(self.game, raw, self.seed, known)
        events = moves + events
        history = self.history + tuple(events)
        return OpenSpielState(self.game, raw, self.seed, history, known), events


def action_labels(raw: Any, player: int) -> dict[str, int]:
    """A seat's legal moves: label -> OpenSpiel action id, in OpenSpiel's order; a label
    OpenSpiel prints twice gets its id appended."""
    ids = raw.legal_actions(player)
    texts = [raw.action_to_string(player, a) for a in ids]
    return {(t if texts.count(t) == 1 else f"{t} #{a}"): a for t, a in zip(texts, ids, strict=True)}


def seat_string(game: OpenSpielGame, raw: Any, player: int) -> str:
    """What `player` is shown: never another seat's private information (module docstring)."""
    return str(raw) if game.perfect else game.read(raw, player)


def seat_view(game: OpenSpielGame, raw: Any, player: int) -> str:
    """`player`'s observation string beside its information state (`OpenSpielObservation.view`):
    by OpenSpiel's contract what that seat observes, so never another seat's private
    information either."""
    if not game.views:
        return ""
    view = str(raw.observation_string(player))
    return "" if view == game.read(raw, player) else view


def _witness(
    game: OpenSpielGame, known: Knowledge | None, acts: Mapping[int, int], after: Any
) -> tuple[Knowledge | None, dict[int, frozenset[int] | None]]:
    """Who sees each actor's action of a step (actor -> action id): everyone in a
    perfect-information game, else the seats whose own information shows it (`knowledge`)."""
    if known is None:
        return None, dict.fromkeys(acts)
    known, seen = known.step(acts, after)
    everyone = set(range(game.n_players))
    return known, {a: None if s == everyone else frozenset(s) for a, s in seen.items()}


def _settle(
    game: OpenSpielGame, raw: Any, seed: int, known: Knowledge | None
) -> tuple[Any, Knowledge | None, list[Event]]:
    """Resolve chance nodes from the seed, then the boards of the new state and, at the end,
    the returns (module docstring). `raw` is never changed: `known` may hold it."""
    events: list[Event] = []
    while raw.is_chance_node():
        draw = chance(seed, "openspiel", len(raw.history())).random()
        action = _pick(raw.chance_outcomes(), draw)
        text = raw.action_to_string(CHANCE, action)
        after = raw.clone()
        after.apply_action(action)
        known, seen = _witness(game, known, {CHANCE: action}, after)
        events.append(Event("chance", {"outcome": text}, seen[CHANCE]))
        raw = after
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
        if game.perfect:
            events.append(Event("result", {"returns": returns}))
        else:  # a seat learns its own return, not how the others fared
            events.append(Event("result", {"returns": returns}, RECORD_ONLY))
            events.extend(
                Event("return", {"player": p, "return": r}, frozenset({p}))
                for p, r in enumerate(returns)
            )
    return raw, known, events


def _pick(outcomes: list[tuple[int, float]], draw: float) -> int:
    """The outcome a uniform draw in [0, 1) lands on, by OpenSpiel's probabilities."""
    total = 0.0
    for action, probability in outcomes:
        total += probability
        if draw < total:
            return int(action)
    return int(outcomes[-1][0])
