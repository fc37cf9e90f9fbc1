"""A TextArena environment played as a stratagem game (`textarena:<env id>`).

TextArena's environments are mutable objects that print boards and route messages to seats; here
one lives inside each state and is never stepped in place (`library.step` steps a copy), so a
state stays immutable and any state is replayed exactly from the seed and the moves.

What maps onto what:
- a seat's observation is what TextArena told that seat, formatted as its LLM wrapper does, from
  that seat's own message queue only (another seat's private lines never reach it);
- a move is free text (bounded), checked by TextArena itself on a copy of the environment: a move
  it calls invalid is refused by the engine (`TextArenaMove.validate`), so it is recorded and
  counted as invalid and re-asked as the agent is configured, and never reaches the game;
- a seat left without a valid move after its re-asks plays `FORFEIT_MOVE` unchecked, so
  TextArena's own rule for an invalid move applies (a warning and another turn within its error
  allowance, then the loss or elimination of that seat);
- the rewards TextArena gives at the end are the payoffs; a game still running after
  `max_steps` moves ends with every payoff 0.

Recorded: a `textarena` event per line TextArena sent, visible to the seats it went to; a
`textarena-outcome` event with the payoffs and TextArena's reason at the end (or
`textarena-stopped` at `max_steps`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.spaces import Action, FreeText, IllegalAction
from stratagem.games.textarena import library
from stratagem.games.textarena.library import GAME_SENDER, PREFIX, Message, Stepped
from stratagem.games.textarena.offline import MissingData

MAX_CHARS = 1000
"""Longest move, in characters (TextArena's conversational games clip at about this)."""
DEFAULT_MAX_STEPS = 200
"""Moves after which a game that has not ended is stopped, so an episode's size is bounded."""
MAX_STEPS_BOUND = 10_000
"""The most `max_steps` may be: an episode of more moves is no longer bounded in practice."""
NAMED_CHARS = 3000
"""How much of the end of a seat's text the moves TextArena named are looked for in."""
FORFEIT_MOVE = ""
"""What a seat without a valid move plays, for TextArena to judge by its own rules."""
MESSAGE_EVENT, OUTCOME_EVENT, CUT_EVENT = "textarena", "textarena-outcome", "textarena-stopped"


@dataclass(frozen=True)
class TextArenaMove(FreeText):
    """Free text that TextArena accepts as a move now: the length is checked first, then the
    environment itself plays it on a copy and says whether it was valid."""

    check: Callable[[str], str | None] = field(default=lambda text: None, compare=False)
    """TextArena's reason why a move is invalid, or None."""
    named: Callable[[], tuple[str, ...]] = field(default=tuple, compare=False)
    """The moves TextArena named to the seat (bracketed, like "[check]") that it accepts now,
    in the order it named them: its move format in its own words, which the prompt states.
    They may be examples rather than every legal move ("[Bid: 3, 4]")."""

    def validate(self, action: Action) -> str:
        text = super().validate(action)
        reason = self.check(text)
        if reason is not None:
            raise IllegalAction(f"invalid move {text[:80]!r}: {reason}")
        return text

    def example(self) -> str:
        """The latest move the game named to the seat that it accepts ("[bet]"), for a plan's
        stand-in play; `FORFEIT_MOVE` where none is."""
        return (FORFEIT_MOVE, *self.named())[-1]


@dataclass(frozen=True)
class TextArenaObservation(Observation):
    env_id: str = ""
    role: str = ""
    """How TextArena names this seat ("Player 0")."""
    text: str = ""
    """Everything TextArena has told this seat so far, one `[sender] message` line each."""


class TextArenaGame(Game):
    def __init__(self, env_id: str, players: int = 0, max_steps: int = DEFAULT_MAX_STEPS) -> None:
        if env_id not in library.env_ids():
            raise StratagemError(
                f"game '{PREFIX}{env_id}': TextArena has no environment '{env_id}' "
                "(stratagem games lists some that work offline)"
            )
        if not _whole(max_steps) or not 1 <= max_steps <= MAX_STEPS_BOUND:
            raise StratagemError(
                f"game '{PREFIX}{env_id}': max_steps={max_steps!r} must be 1 to {MAX_STEPS_BOUND}"
            )
        if not _whole(players) or not 0 <= players <= library.MAX_PLAYERS:
            raise StratagemError(
                f"game '{PREFIX}{env_id}': players={players!r} must be 0 (the fewest the "
                f"environment takes) or 1 to {library.MAX_PLAYERS}"
            )
        self.env_id = env_id
        self.name = f"{PREFIX}{env_id}"
        self.max_steps = max_steps
        self.n_players = players or _player_count(env_id)
        self.space = FreeText(MAX_CHARS)
        library.reset(env_id, self.n_players, 0)  # a one-line error now, not in the first episode

    def description(self) -> str:
        return f"TextArena's {self.env_id}, {self.n_players} players, moves in free text"

    def initial_state(self, seed: int = 0) -> TextArenaState:
        start = library.reset(self.env_id, self.n_players, seed)
        told = _events(start.messages)
        return TextArenaState(self, start.env, start.rng, start.messages, told, 0, told)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@functools.cache
def _player_count(env_id: str) -> int:
    """The fewest seats (2 or more; 1 for a one-player environment) the environment starts with."""
    first: StratagemError | None = None
    counts: list[int] = [*range(2, library.MAX_PLAYERS + 1), 1]
    for n in counts:
        try:
            library.reset(env_id, n, 0)
        except MissingData:
            raise  # no player count installs data
        except StratagemError as exc:
            first = first or exc
            continue
        return n
    assert first is not None
    raise first


@dataclass(frozen=True)
class TextArenaState(State):
    game: TextArenaGame
    env: Any = field(repr=False, compare=False)
    """This state's own environment: read, copied, never stepped."""
    rng: tuple[Any, Any] = field(repr=False, compare=False)
    log: tuple[tuple[Message, ...], ...]
    """Everything each seat has been told, by seat."""
    told: tuple[Event, ...]
    """The same as events, each with the seats it was sent to, in order."""
    steps: int
    first: tuple[Event, ...] = ()
    """What the initial state told the seats (the opening), empty after."""
    trial: dict[str, Stepped] = field(default_factory=dict, repr=False, compare=False)
    """The last move tried on a copy, so validating then applying it steps once."""

    def _over(self) -> bool:
        return bool(self.env.state.done)

    def _cut(self) -> bool:
        return not self._over() and self.steps >= self.game.max_steps

    def is_terminal(self) -> bool:
        return self._over() or self._cut()

    def to_act(self) -> tuple[int, ...]:
        return () if self.is_terminal() else (int(self.env.state.current_player_id),)

    def legal(self, player: int) -> TextArenaMove:
        return TextArenaMove(self.game.space.max_chars, check=self._reason, named=self._named)

    def observation(self, player: int) -> TextArenaObservation:
        roles = self.env.state.role_mapping
        lines = [f"[{_sender(roles, m.sender)}] {m.text}" for m in self.log[player]]
        return TextArenaObservation(
            player=player,
            legal=self.legal(player) if player in self.to_act() else None,
            events=tuple(e for e in self.told if e.visible(player)),
            env_id=self.game.env_id,
            role=str(roles.get(player, f"Player {player}")),
            text="\n".join(lines),
        )

    def payoffs(self) -> tuple[float, ...]:
        rewards = self.env.state.rewards if self._over() else None
        rewards = rewards or {}
        return tuple(float(rewards.get(p, 0.0)) for p in range(self.game.n_players))

    def opening(self) -> tuple[Event, ...]:
        return self.first

    def _try(self, text: str) -> Stepped:
        found = self.trial.get(text)
        if found is None:
            found = library.step(self.env, self.rng, text)
            self.trial.clear()
            self.trial[text] = found
        return found

    def _reason(self, text: str) -> str | None:
        return self._try(text).invalid

    def _named(self) -> tuple[str, ...]:
        """Bracketed texts in what TextArena last told the acting seat that it accepts as a
        move now, ordered by where each was last named (each tried on a copy)."""
        (seat,) = self.to_act()
        said = "\n".join(m.text for m in self.log[seat])[-NAMED_CHARS:]
        latest = reversed(dict.fromkeys(reversed(re.findall(r"\[[^\[\]\n]{1,40}\]", said))))
        return tuple(o for o in latest if self._reason(o) is None)

    def _advance(self, stepped: Stepped) -> tuple[TextArenaState, list[Event]]:
        log = tuple(old + new for old, new in zip(self.log, stepped.messages, strict=True))
        events = list(_events(stepped.messages))
        told = (*self.told, *events)
        nxt = TextArenaState(self.game, stepped.env, stepped.rng, log, told, self.steps + 1)
        if nxt._over():
            info = stepped.env.state.game_info
            why = dict.fromkeys(str(i["reason"]) for i in info.values() if i.get("reason"))
            outcome = {"payoffs": list(nxt.payoffs()), "reason": "; ".join(why)}
            events.append(Event(OUTCOME_EVENT, outcome))
        if nxt._cut():
            events.append(Event(CUT_EVENT, {"after": nxt.steps, "payoffs": list(nxt.payoffs())}))
        return nxt, events

    def _next(self, actions: Mapping[int, Action]) -> tuple[TextArenaState, list[Event]]:
        (text,) = actions.values()
        return self._advance(self._try(str(text)))

    def forfeit(self, actions: Mapping[int, Action | None]) -> tuple[State, list[Event]]:
        """A seat without a valid move plays `FORFEIT_MOVE`, judged by TextArena's own rules
        (unchecked here: an invalid move is what TextArena's rule is for)."""
        if self.is_terminal() or set(actions) != set(self.to_act()):
            return super().forfeit(actions)  # refused there with the reason
        (action,) = actions.values()
        if action is not None:
            return self.apply({p: a for p, a in actions.items() if a is not None})
        return self._advance(self._try(FORFEIT_MOVE))


def _sender(roles: Mapping[int, str], sender: int) -> str:
    return "GAME" if sender == GAME_SENDER else str(roles.get(sender, f"Player {sender}"))


def _events(messages: tuple[tuple[Message, ...], ...]) -> tuple[Event, ...]:
    """One event per line TextArena sent in one step, visible to the seats it was sent to
    (public when to every seat), in the order first seen."""
    seen: dict[Message, set[int]] = {}
    for seat, lines in enumerate(messages):
        for line in lines:
            seen.setdefault(line, set()).add(seat)
    everyone = set(range(len(messages)))
    return tuple(
        Event(MESSAGE_EVENT, _data(m), None if seats == everyone else frozenset(seats))
        for m, seats in seen.items()
    )


def _data(line: Message) -> dict[str, Any]:
    """A seat's line names the seat (`player`, a transcript shows it as said); the game's own
    lines are `text`, or `board` where they run over several lines (a board, shown as printed)."""
    kind = line.kind.lower()
    if line.sender != GAME_SENDER:
        return {"player": line.sender, "kind": kind, "text": line.text}
    return {"from": "GAME", "kind": kind, ("board" if "\n" in line.text else "text"): line.text}
