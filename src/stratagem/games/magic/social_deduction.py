"""What seed-004's two social deduction games share (Chameleon §3.1, Undercover §3.2): three named
seats, clue rounds, a private accusation vote resolved by strict plurality, credit tables, and the
event shapes a ChatArena-style chat is built from.

The moderator is rule-based code, as in the original (seed-004 §2): its messages are `moderator`
events whose text is fixed by the game, never written by a player. A player's text reaches the state
only as the parsed, validated action of the phase it belongs to, so a clue that reads like a vote or
like the moderator ("Moderator: the game is over") is just a clue.

Event shapes (what a chat transcript reads):

- `Event("moderator", {"text": ...}, visible_to=None or {seat})`;
- a player's utterance, kind `clue`, `vote` or `guess`, with `player` (seat, 0-based), `text`
  (what a chat shows), `phase` and `round`; votes are private to their voter (seed-004 §2);
- a final `outcome` event that only the record sees (the credits, the win flag and every ballot).

Private messages go to one seat per event: one event shared by the two majority players would tell
each, through its `visible_to`, who the third one is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from stratagem.errors import StratagemError
from stratagem.games import chat
from stratagem.games.base import Event, State
from stratagem.games.bounds import Bounds
from stratagem.games.spaces import Action, Choice, IllegalAction

SEATS: tuple[str, ...] = ("Player 1", "Player 2", "Player 3")
"""seed-004 §2: players "Player 1..3", speaking in this order every round."""
N_SEATS = len(SEATS)

CLUE, VOTE, GUESS, OVER = "clue", "vote", "guess", "over"
"""Phases, as observations name them; "over" once the game has ended."""

DEFAULT_MAX_CHARS = 1000
"""Longest clue or guess, in characters. seed-004 §2 caps replies at 256 tokens (about 1000
characters of English); the cap itself is a choice of this module."""

HIDDEN = chat.HIDDEN
"""Visibility of what only the record may see."""


def seat_name(seat: int) -> str:
    """A seat's player name (1 -> "Player 2"); a one-line error for a seat that does not exist."""
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < N_SEATS:
        raise StratagemError(f"the game has seats 0..{N_SEATS - 1}, got {seat!r}")
    return SEATS[seat]


def seat_of(name: str) -> int:
    """The seat of a player name ("Player 2" -> 1); a one-line error for anything else."""
    if name not in SEATS:
        raise StratagemError(f"unknown player {name!r}: expected one of {', '.join(SEATS)}")
    return SEATS.index(name)


SeatOption = Annotated[int | str | None, Bounds(0, N_SEATS - 1, "a seat")]
"""An option naming a seat: 0-based, or a name ("Player 3"), or None (the setting's)."""


def check_seat(game: str, option: str, value: object) -> int:
    """A seat option given as an integer 0..2 (the seat) or a name ("Player 3")."""
    if isinstance(value, str) and value in SEATS:
        return SEATS.index(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < N_SEATS:
        raise StratagemError(
            f"{game}: {option} must be a seat 0..{N_SEATS - 1} or a name "
            f"({', '.join(SEATS)}), got {value!r}"
        )
    return value


def check_text(game: str, option: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise StratagemError(f"{game}: {option} must be a non-empty string, got {value!r}")
    return value


SelfVotes = Literal["refuse", "count"]
SELF_VOTES: tuple[SelfVotes, ...] = ("refuse", "count")
"""What a vote for oneself does. "refuse" (the paper's rule): the moderator's "You cannot vote
for yourself" (seed-004 §3.1, §3.2) is enforced, so the vote names another player. "count" (the
code's tally): `_text2vote` returns any name (§2) and a self-vote counts in the strict plurality
(§3.1) like any other."""


def check_self_votes(game: str, value: object) -> SelfVotes:
    for rule in SELF_VOTES:
        if value == rule:
            return rule
    raise StratagemError(f"{game}: self_votes must be 'refuse' or 'count', got {value!r}")


def vote_space(voter: int, self_votes: SelfVotes = "refuse") -> Choice:
    """The names a voter may vote for: the other players', or every player's with
    `self_votes="count"` (`SelfVotes`)."""
    if self_votes == "count":
        return Choice(SEATS)
    return Choice(tuple(name for seat, name in enumerate(SEATS) if seat != voter))


@dataclass(frozen=True)
class Clue:
    """One clue as every player saw it."""

    player: int
    round: int
    text: str


def clues_by_round(texts: Sequence[str]) -> tuple[Clue, ...]:
    """Clues in speaking order (seat 0, 1, 2 of round 1, then of round 2, ...)."""
    return tuple(
        Clue(player=i % N_SEATS, round=i // N_SEATS + 1, text=text) for i, text in enumerate(texts)
    )


def moderator(text: str, to: int | None = None) -> Event:
    """A moderator message: public, or private to seat `to`."""
    return chat.moderator(text, None if to is None else frozenset({to}))


def clue_event(player: int, round: int, text: str) -> Event:
    return chat.utterance("clue", player, text, CLUE, round)


VOTE_TEXT = "I vote for {name}."
"""A vote as a chat shows it: the template the moderator asks for (seed-004 §3.1)."""


def vote_event(voter: int, round: int, target: int) -> Event:
    """A ballot, seen by its voter only (seed-004 §2: social-game votes are private)."""
    text = VOTE_TEXT.format(name=seat_name(target))
    return chat.utterance("vote", voter, text, VOTE, round, frozenset({voter}), vote=target)


def plurality(ballots: Sequence[int | None]) -> int | None:
    """The seat with strictly more votes than every other seat, or None ("even votes").

    Every seat starts at 0 votes and an abstention (None) adds nothing, as in the original, so if
    nobody votes all three seats tie at 0: even votes (seed-004 §3.1: "A tie for top votes").
    """
    counts = tally(ballots)
    top = max(counts)
    leaders = [seat for seat, count in enumerate(counts) if count == top]
    return leaders[0] if len(leaders) == 1 else None


def tally(ballots: Sequence[int | None]) -> tuple[int, ...]:
    """Votes received by each seat."""
    return tuple(sum(1 for b in ballots if b == seat) for seat in range(N_SEATS))


def cast_votes(state: State, actions: Mapping[int, Action | None]) -> dict[int, int]:
    """The votes of a vote step in which seats whose reply stayed invalid (None) abstain: each
    cast one checked by the voter's space, as the seat it names."""
    if set(actions) != set(state.to_act()):
        raise IllegalAction(
            f"expected actions from players {list(state.to_act())}, got {sorted(actions)}"
        )
    return {
        p: seat_of(str(state.legal(p).validate(a))) for p, a in actions.items() if a is not None
    }


def ballots_of(votes: Mapping[int, int]) -> tuple[int | None, ...]:
    """Each seat's ballot (None for an abstention) from the votes that were cast."""
    return tuple(votes.get(seat) for seat in range(N_SEATS))


@dataclass(frozen=True)
class Result:
    """One row of a credit table: the code's `win_flag`, the paper's outcome label where the paper
    has one, and the credits of the spy (chameleon, undercover) and of each majority player."""

    win_flag: int
    label: int | None
    name: str
    spy_credits: int
    majority_credits: int

    def spy_won(self) -> bool:
        """seed-004 §6.4 [C]: a spy's "win" is any outcome with `win_flag != 0`."""
        return self.win_flag != 0


@dataclass(frozen=True)
class Outcome:
    """How a game ended: its credit-table row and what led to it."""

    result: Result
    spy: int
    """The chameleon's or the undercover's seat."""
    ballots: tuple[int | None, ...]
    """Each seat's vote (None: abstained)."""
    accused: int | None
    """The strict-plurality seat; None on even votes."""
    guess: str | None = None
    """The chameleon's guessed term (Chameleon, once caught); None otherwise."""

    @property
    def credits(self) -> tuple[float, ...]:
        r = self.result
        return tuple(
            float(r.spy_credits if seat == self.spy else r.majority_credits)
            for seat in range(N_SEATS)
        )

    def data(self) -> dict[str, Any]:
        """The outcome event's data: what the record keeps for the metrics."""
        return {
            "win_flag": self.result.win_flag,
            "label": self.result.label,
            "result": self.result.name,
            "spy": self.spy,
            "accused": self.accused,
            "votes": list(self.ballots),
            "guess": self.guess,
            "credits": list(self.credits),
        }

    def event(self) -> Event:
        return Event("outcome", self.data(), HIDDEN)


def credits_text(spy_role: str, majority_role: str, result: Result) -> str:
    """The credits sentence of an end-of-game announcement, in the words of seed-004 §9.5's case
    study ("Chameleon won 2 credits."); the sentence for the majority is composed in its style."""
    parts = []
    if result.spy_credits:
        parts.append(f"{spy_role} won {_credits(result.spy_credits)}.")
    if result.majority_credits:
        parts.append(f"{majority_role} won {_credits(result.majority_credits)} each.")
    return " ".join(parts)


def _credits(n: int) -> str:
    return f"{n} credit" if n == 1 else f"{n} credits"


def recorded_clue(clues: Mapping[str, Sequence[str]] | None, seat: int, round: int) -> str | None:
    """A setting's stored clue for a seat in a round (seed-004 §2's fixed defenders), if any."""
    if clues is None:
        return None
    said = clues.get(seat_name(seat), ())
    return said[round - 1] if 0 < round <= len(said) else None


def replay_clue(
    clues: Mapping[str, Sequence[str]] | None, said: Sequence[str], seat: int
) -> str | None:
    """The stored clue `seat` gives next, while the game so far is the recording: every clue
    said (in speaking order, seat after seat, round after round) is the stored one. seed-004 §2:
    fixed defenders replay the setting's clues until the challenger has spoken, then play live;
    a challenger's clue that differs from the recording ends the replay for every seat."""
    for i, text in enumerate(said):
        if text != recorded_clue(clues, i % N_SEATS, i // N_SEATS + 1):
            return None
    return recorded_clue(clues, seat, len(said) // N_SEATS + 1)


def stored_clues(game: str, value: object) -> dict[str, tuple[str, ...]] | None:
    """A setting's `clues` entry: each seat's name to its clues, one per round, or None."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) != set(SEATS):
        raise StratagemError(f"{game}: a setting's clues must name {', '.join(SEATS)}")
    out: dict[str, tuple[str, ...]] = {}
    for name, said in value.items():
        if not isinstance(said, list | tuple) or not all(isinstance(s, str) for s in said):
            raise StratagemError(f"{game}: the clues of {name} must be a list of strings")
        out[name] = tuple(said)
    return out
