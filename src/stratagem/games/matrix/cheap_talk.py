"""A repeated matrix game with cheap talk: before each move, every player sends one free-text
message that every player sees, then all move at once as in the repeated game.

Talk is "cheap" because it changes no payoff: only the moves do. Whether players keep their word is
exactly what such a game measures, and it is the smallest game in which free text an agent writes
reaches another agent, so it also tests that text can never change the state: a message is stored
and shown, never parsed for a move.

A player whose message stays invalid says nothing that round (an empty message); a missing move
forfeits the round as in `RepeatedGame`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stratagem.games.base import Event, Game, State
from stratagem.games.bounds import Chars, Rounds, bounded
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import RepeatedGame, RepeatedObservation, RepeatedState
from stratagem.games.spaces import Action, ActionSpace, FreeText

MESSAGE, MOVE = "message", "move"
DEFAULT_MAX_CHARS = 300
"""Longest message, in characters: a few sentences, enough for a promise or a threat."""


@dataclass(frozen=True)
class CheapTalkObservation(RepeatedObservation):
    """The repeated game's view plus the phase and every message sent so far."""

    phase: str = MESSAGE
    """"message" when the player must write its message, "move" when it must move."""
    messages: tuple[tuple[str, ...], ...] = ()
    """Every player's message, one tuple per round, the current round's once sent."""


class CheapTalkGame(Game):
    @bounded("cheap talk")
    def __init__(
        self,
        stage: NormalFormGame,
        rounds: Rounds,
        max_chars: Chars = DEFAULT_MAX_CHARS,
        name: str | None = None,
    ) -> None:
        self.repeated = RepeatedGame(stage, rounds)
        self.space = FreeText(max_chars)
        self.name = name or f"{stage.name}-talk"
        self.n_players = stage.n_players

    def description(self) -> str:
        return f"{self.repeated.description()}, a message from every player before each move"

    def matrix(self) -> NormalFormGame:
        return self.repeated.stage

    def initial_state(self, seed: int = 0) -> CheapTalkState:
        return CheapTalkState(self, self.repeated.initial_state(seed), ())


@dataclass(frozen=True)
class CheapTalkState(State):
    game: CheapTalkGame
    inner: RepeatedState
    messages: tuple[tuple[str, ...], ...]

    @property
    def phase(self) -> str:
        """Messages of the round about to be played are sent first, then the moves."""
        return MOVE if len(self.messages) > len(self.inner.history) else MESSAGE

    def to_act(self) -> tuple[int, ...]:
        return self.inner.to_act()

    def legal(self, player: int) -> ActionSpace:
        return self.game.space if self.phase == MESSAGE else self.inner.legal(player)

    def observation(self, player: int) -> CheapTalkObservation:
        inner = self.inner.observation(player)
        talk = tuple(
            Event("messages", {"round": t, "messages": list(said)})
            for t, said in enumerate(self.messages, start=1)
        )
        return CheapTalkObservation(
            player=player,
            legal=None if self.is_terminal() else self.legal(player),
            events=_interleave(inner.events, talk),
            stage=inner.stage,
            round=inner.round,
            rounds=inner.rounds,
            history=inner.history,
            phase=self.phase,
            messages=self.messages,
        )

    def is_terminal(self) -> bool:
        return self.inner.is_terminal()

    def payoffs(self) -> tuple[float, ...]:
        return self.inner.payoffs()

    def fallback(self, player: int) -> Action:
        """Silence for a missing message; moves are forfeited by `forfeit` instead."""
        return ""

    def forfeit(self, actions: Mapping[int, Action | None]) -> tuple[CheapTalkState, list[Event]]:
        if self.phase == MESSAGE:
            nxt, events = super().forfeit(actions)
            assert isinstance(nxt, CheapTalkState)
            return nxt, events
        inner, events = self.inner.forfeit(actions)
        return CheapTalkState(self.game, inner, self.messages), events

    def _next(self, actions: Mapping[int, Action]) -> tuple[CheapTalkState, list[Event]]:
        if self.phase == MESSAGE:
            said = tuple(str(actions[p]) for p in range(self.game.n_players))
            t = len(self.messages) + 1
            nxt = CheapTalkState(self.game, self.inner, (*self.messages, said))
            return nxt, [Event("messages", {"round": t, "messages": list(said)})]
        inner, events = self.inner.apply(actions)
        assert isinstance(inner, RepeatedState)
        return CheapTalkState(self.game, inner, self.messages), events


def _interleave(rounds: tuple[Event, ...], talk: tuple[Event, ...]) -> tuple[Event, ...]:
    """Round t's messages come before round t's moves, in the order they happened."""
    out: list[Event] = []
    for t, said in enumerate(talk):
        out.append(said)
        if t < len(rounds):
            out.append(rounds[t])
    return tuple(out)
