"""Chameleon, the first social deduction game of seed-004 (MAgIC) §3.1.

Three players; one is the chameleon. Everyone is told the topic, and only the two non-chameleons
are told the secret word (the "code"). Each player gives one clue, in seat order; then everyone
votes, privately and at once, for another player they think is the chameleon (or for any
player, themselves included, with `self_votes="count"`, the code's tally). A strict plurality
on the chameleon catches it, and it may then guess the code; anything else (even votes, or a
plurality on someone else) lets it go. Payoffs are the paper's credits (§3.1's table), not 1/0.

The chameleon's seat, the topic and the code come from a setting (`games/data/chameleon.json`,
made by `scripts/magic_social_settings.py`), as in the paper, where the chameleon is fixed per
setting and the challenger is seated on one side. Setting 0 is the only published one and carries
the clues recorded in GPT-4 self-play, which seed-004 §2's "fixed" defenders replay
(`ChameleonObservation.recorded_clue`).

Invalid replies (seed-004 is silent; §10.10 asks that parse failures be reported, which the engine
does by recording the invalid decision, so these rules only say how the game goes on):

- a missing clue is an empty clue (the player said nothing); an empty or blank clue given as a
  move is illegal, re-asked as any illegal move (a clue describes the secret word);
- a missing vote is an abstention: it counts for nobody;
- a missing guess is a wrong guess (the chameleon did not name the code).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from stratagem.errors import StratagemError
from stratagem.games import settings_data
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.bounds import Chars, bounded
from stratagem.games.magic.social_deduction import (
    CLUE,
    DEFAULT_MAX_CHARS,
    GUESS,
    N_SEATS,
    OVER,
    SEATS,
    VOTE,
    Clue,
    Outcome,
    Result,
    SeatOption,
    SelfVotes,
    ballots_of,
    cast_votes,
    check_seat,
    check_self_votes,
    check_text,
    clue_event,
    clues_by_round,
    credits_text,
    moderator,
    plurality,
    replay_clue,
    seat_name,
    seat_of,
    stored_clues,
    vote_event,
    vote_space,
)
from stratagem.games.spaces import Action, ActionSpace, FreeText, IllegalAction

SEED004_TOPIC_CODES: dict[str, tuple[str, ...]] = {
    # seed-004 §3.1 [C]: ChatArena's DEFAULT_TOPIC_CODES, which the MAgIC code draws from.
    "Fruits": (
        "Apple", "Banana", "Orange", "Grape", "Strawberry", "Pineapple", "Mango", "Watermelon",
    ),
    "Animals": (
        "Lion", "Elephant", "Giraffe", "Monkey", "Zebra", "Tiger", "Bear", "Kangaroo",
    ),
    "Sports": (
        "Soccer", "Basketball", "Tennis", "Baseball", "Swimming", "Cycling", "Volleyball", "Golf",
    ),
    "Countries": (
        "United States", "Canada", "Brazil", "United Kingdom", "France", "Germany", "Japan",
        "Australia",
    ),
}  # fmt: skip

# -- the moderator: seed-004 §3.1 [C], verbatim ---------------------------------------------------
START = "Now the game starts! The topic is: {topic}"
NOT_CHAMELEON = "You are not chameleon. The word is: {code}"
IS_CHAMELEON = "You are the chameleon!"
CLUE_START = (
    "Now everyone gives one clue (but never include the secret word). You cannot repeat what "
    "others has said. We will start with {first}."
)
VOTE_CALL = (
    "Now vote which of the other players (excluding yourself) is the chameleon. You cannot vote "
    'for yourself. You must use the template "I vote for Player xx."'
)
CAUGHT = (
    "The accusation is correct! {chameleon} is the chameleon! Now {chameleon} can guess the "
    'secret code. You should say: I guess the code is "..."'
)
# -- end-of-game announcements: NOT verbatim from the code. seed-004 quotes one announcement, the
# §9.5 case study's "The most-voted player is Player 1. The accusation is incorrect. Player 2 is the
# chameleon. Chameleon won 2 credits.", which WRONG_PLURALITY reproduces; the others are composed
# in its style. Each is followed by the credits sentence of `credits_text`.
WRONG_PLURALITY = (
    "The most-voted player is {accused}. The accusation is incorrect. {chameleon} is the chameleon."
)
EVEN_VOTES = "There are even votes. The accusation does not stand. {chameleon} is the chameleon."
RIGHT_GUESS = "{chameleon} guessed the code correctly! The secret word is {code}."
WRONG_GUESS = "{chameleon} guessed the code wrong! The secret word is {code}."
GUESS_TEXT = 'I guess the code is "{guess}"'
"""A guess as a chat shows it: the template the moderator asks for, around the guessed term."""

# -- the credit table: seed-004 §3.1, paper outcome labels (A.2) and the code's win_flag ---------
CAUGHT_WRONG_GUESS = Result(0, 0, "the non-chameleon won", 0, 2)
WRONG_ACCUSATION = Result(2, 1, "the chameleon won", 2, 0)
EVEN_VOTING = Result(3, 2, "even voting", 1, 1)
GUESSED_RIGHT = Result(1, 3, "the chameleon guessed right", 1, 1)
RESULTS: tuple[Result, ...] = (CAUGHT_WRONG_GUESS, WRONG_ACCUSATION, EVEN_VOTING, GUESSED_RIGHT)
"""In the paper's label order; "the total credits of all the completions are 2n" (§3.1)."""

_QUOTED = re.compile(r'"(.+?)"')


def guessed_term(text: str, code: str) -> str | None:
    """The part of a guess compared with the code (seed-004 §3.1 [C]): the first "..." span, else
    the last k words, k being the number of words of the code, without their periods (as the
    original compares them); None if the text has fewer words. Only straight double quotes
    delimit a quoted term."""
    quoted = _QUOTED.search(text)
    if quoted:
        return quoted.group(1)
    k = len(code.split())
    words = text.split()
    return " ".join(words[-k:]).replace(".", "") if len(words) >= k else None


def guess_is_right(text: str, code: str) -> bool:
    """Case- and space-insensitive comparison of the guessed term with the code (seed-004 §3.1).

    As in the original code, periods are ignored when the term is the last k words ("I guess the
    code is grape." is right) but not inside quotes ('"Grape."' is wrong).
    """
    term = guessed_term(text, code)
    if term is None:
        return False
    if _QUOTED.search(text):
        return _squash(term) == _squash(code)
    return _squash(term) == _squash(code).replace(".", "")


def _squash(text: str) -> str:
    return "".join(text.split()).lower()


class ChameleonGame(Game):
    """Chameleon with the roles of one setting; `topic`, `code` and `chameleon` (a seat, 0-based,
    or a name such as "Player 3") override the setting's. A setting's recorded clues belong to its
    exact roles, so any override drops them.

    `public_guess` (default True): the chameleon's guess is shown to every player. The original
    code shows it to the chameleon alone (seed-004 §3.1 [C]); the game ends right after it and the
    public announcement names the code either way, so only the transcript differs.

    `self_votes` (default "refuse"): "refuse" enforces the moderator's "You cannot vote for
    yourself" (the paper's rule); "count" lets a vote for oneself stand and count in the strict
    plurality, as the code's tally does (seed-004 §2, §3.1; `social_deduction.SelfVotes`).
    """

    n_players = N_SEATS

    @bounded("chameleon")
    def __init__(
        self,
        setting: int = 0,
        topic: str | None = None,
        code: str | None = None,
        chameleon: SeatOption = None,
        public_guess: bool = True,
        max_chars: Chars = DEFAULT_MAX_CHARS,
        name: str = "chameleon",
        self_votes: SelfVotes = "refuse",
    ) -> None:
        chosen = settings_data.setting("chameleon", setting)
        self.setting = setting
        self.topic = check_text("chameleon", "topic", chosen["topic"] if topic is None else topic)
        self.code = check_text("chameleon", "code", chosen["code"] if code is None else code)
        spy = seat_of(chosen["chameleon_name"]) if chameleon is None else chameleon
        self.chameleon = check_seat("chameleon", "chameleon", spy)
        overridden = topic is not None or code is not None or chameleon is not None
        self.recorded = None if overridden else stored_clues("chameleon", chosen.get("clues"))
        if not isinstance(public_guess, bool):
            raise StratagemError(
                f"chameleon: public_guess must be true or false, got {public_guess!r}"
            )
        self.public_guess = public_guess
        self.self_votes = check_self_votes("chameleon", self_votes)
        self.space = FreeText(max_chars)
        """The guess: any text (a blank one is a wrong guess, as a missing one)."""
        self.clue_space = FreeText(self.space.max_chars, nonblank="a clue")
        """A clue describes the secret word (seed-004 §3.1): saying nothing is no clue, so it is
        refused and asked again as any illegal move; only a clue that stays missing is empty."""
        self.name = name

    def description(self) -> str:
        return (
            "Chameleon: 3 players, one a chameleon who is not told the secret word; one clue "
            "each, a private vote, and the chameleon's guess if caught; paid in credits"
        )

    def sides(self) -> tuple[str, ...]:
        """The chameleon against the two others (seed-004 §4: the challenger plays each side)."""
        return tuple(
            "chameleon" if seat == self.chameleon else "non-chameleon" for seat in range(N_SEATS)
        )

    def initial_state(self, seed: int = 0) -> ChameleonState:
        """The roles come from the setting, so the seed changes nothing."""
        intro = [moderator(START.format(topic=self.topic))]
        for seat in range(N_SEATS):
            text = IS_CHAMELEON if seat == self.chameleon else NOT_CHAMELEON.format(code=self.code)
            intro.append(moderator(text, to=seat))
        intro.append(moderator(CLUE_START.format(first=SEATS[0])))
        return ChameleonState(self, log=tuple(intro), returned=len(intro))


@dataclass(frozen=True)
class ChameleonObservation(Observation):
    """One seat's view. Other seats' roles are never in it: only the seat's own."""

    name: str = ""
    """The seat's player name, "Player 1".."Player 3"."""
    phase: str = CLUE
    """"clue", "vote", "guess", or "over" once the game has ended."""
    round: int = 1
    """The clue round (Chameleon has one); votes and the guess belong to it too."""
    topic: str = ""
    word: str | None = None
    """The secret word; None for the chameleon, who is not told it."""
    is_chameleon: bool = False
    clues: tuple[Clue, ...] = ()
    """Every clue given so far, in speaking order."""
    recorded_clue: str | None = None
    """The setting's stored clue of this seat for this round, in the clue phase, if it has one:
    what seed-004 §2's fixed defenders replay."""


@dataclass(frozen=True)
class ChameleonState(State):
    game: ChameleonGame = field(repr=False)
    clues: tuple[str, ...] = ()
    """Clue texts in speaking order."""
    ballots: tuple[int | None, ...] | None = None
    """Each seat's vote once the vote is over (None: abstained)."""
    outcome: Outcome | None = None
    """How the game ended, once it has."""
    log: tuple[Event, ...] = field(default=(), repr=False)
    """Every event so far, oldest first, each with its visibility."""
    returned: int = 0
    """How many events of `log` are out already: the opening (`opening`, which the episode loop
    records before the first step) and what steps have returned."""

    def opening(self) -> tuple[Event, ...]:
        """The start, each seat's role or word, and the call for clues (seed-004 §3.1)."""
        return self.log if not self.clues else ()

    @property
    def phase(self) -> str:
        if self.outcome is not None:
            return OVER
        if len(self.clues) < N_SEATS:
            return CLUE
        return VOTE if self.ballots is None else GUESS

    def to_act(self) -> tuple[int, ...]:
        phase = self.phase
        if phase == CLUE:
            return (len(self.clues),)  # seed-004 §2: always Player 1 -> 2 -> 3
        if phase == VOTE:
            return tuple(range(N_SEATS))  # private ballots, cast at once
        return (self.game.chameleon,) if phase == GUESS else ()

    def legal(self, player: int) -> ActionSpace:
        if player not in self.to_act():
            raise IllegalAction(f"{seat_name(player)} does not act now in chameleon")
        if self.phase == VOTE:
            return vote_space(player, self.game.self_votes)
        return self.game.clue_space if self.phase == CLUE else self.game.space

    def observation(self, player: int) -> ChameleonObservation:
        seat_name(player)  # a one-line error for a seat that does not exist
        phase = self.phase
        spy = player == self.game.chameleon
        return ChameleonObservation(
            player=player,
            legal=self.legal(player) if player in self.to_act() else None,
            events=tuple(e for e in self.log if e.visible(player)),
            name=seat_name(player),
            phase=phase,
            round=1,
            topic=self.game.topic,
            word=None if spy else self.game.code,
            is_chameleon=spy,
            clues=clues_by_round(self.clues),
            recorded_clue=(
                replay_clue(self.game.recorded, self.clues, player) if phase == CLUE else None
            ),
        )

    def is_terminal(self) -> bool:
        return self.outcome is not None

    def payoffs(self) -> tuple[float, ...]:
        """Credits (seed-004 §3.1) once over; nothing before."""
        return self.outcome.credits if self.outcome is not None else (0.0,) * N_SEATS

    def fallback(self, player: int) -> Action:
        """A missing clue is an empty clue (module docstring); votes and guesses are handled by
        `forfeit`, since an abstention is no label and a missing guess is no text."""
        if self.phase == OVER:
            raise IllegalAction("the game is over: no further actions are accepted")
        if self.phase != CLUE:
            raise IllegalAction(f"chameleon: no default {self.phase} for {seat_name(player)}")
        return ""

    def forfeit(self, actions: Mapping[int, Action | None]) -> tuple[ChameleonState, list[Event]]:
        """A missing clue is empty, missing votes abstain and a missing guess is wrong (module
        docstring); the empty clue is the game's rule, not a move, so it skips the clue's
        space, which refuses an empty clue from a player."""
        phase = self.phase
        if phase == CLUE and actions == {len(self.clues): None}:
            return self._next({len(self.clues): self.fallback(len(self.clues))})
        if phase not in (VOTE, GUESS) or None not in actions.values():
            nxt, events = super().forfeit(actions)  # a clue's fallback, or plain `apply`
            assert isinstance(nxt, ChameleonState)
            return nxt, events
        votes = cast_votes(self, actions)  # in the guess phase: checks who acts, casts none
        return self._vote(votes) if phase == VOTE else self._guess(None)

    def _next(self, actions: Mapping[int, Action]) -> tuple[ChameleonState, list[Event]]:
        phase = self.phase
        if phase == CLUE:
            (speaker,) = self.to_act()
            text = str(actions[speaker])
            events = [clue_event(speaker, 1, text)]
            if len(self.clues) + 1 == N_SEATS:
                events.append(moderator(VOTE_CALL))
            return self._step(events, clues=(*self.clues, text))
        if phase == VOTE:
            return self._vote({p: seat_of(str(a)) for p, a in actions.items()})
        return self._guess(str(actions[self.game.chameleon]))

    def _vote(self, votes: Mapping[int, int]) -> tuple[ChameleonState, list[Event]]:
        """Resolve the accusation (seed-004 §3.1): caught only by a strict plurality."""
        ballots = ballots_of(votes)
        events = [vote_event(p, 1, target) for p, target in sorted(votes.items())]
        accused = plurality(ballots)
        spy = seat_name(self.game.chameleon)
        if accused == self.game.chameleon:
            events.append(moderator(CAUGHT.format(chameleon=spy)))
            return self._step(events, ballots=ballots)
        if accused is None:
            result, text = EVEN_VOTING, EVEN_VOTES.format(chameleon=spy)
        else:
            result = WRONG_ACCUSATION
            text = WRONG_PLURALITY.format(accused=seat_name(accused), chameleon=spy)
        return self._end(events, result, text, ballots, accused, None)

    def _guess(self, text: str | None) -> tuple[ChameleonState, list[Event]]:
        assert self.ballots is not None
        game = self.game
        events: list[Event] = []
        term = None
        if text is not None:
            term = guessed_term(text, game.code)
            said = GUESS_TEXT.format(guess=term or "")
            data = {"player": game.chameleon, "text": said, "phase": GUESS, "round": 1}
            visible = None if game.public_guess else frozenset({game.chameleon})
            events.append(Event("guess", {**data, "guess": term}, visible))
        right = text is not None and guess_is_right(text, game.code)
        result, template = (
            (GUESSED_RIGHT, RIGHT_GUESS) if right else (CAUGHT_WRONG_GUESS, WRONG_GUESS)
        )
        announcement = template.format(chameleon=seat_name(game.chameleon), code=game.code)
        return self._end(events, result, announcement, self.ballots, game.chameleon, term)

    def _end(
        self,
        events: list[Event],
        result: Result,
        announcement: str,
        ballots: tuple[int | None, ...],
        accused: int | None,
        guess: str | None,
    ) -> tuple[ChameleonState, list[Event]]:
        outcome = Outcome(result, self.game.chameleon, ballots, accused, guess)
        credits = credits_text("Chameleon", "Non-chameleons", result)
        events.append(moderator(f"{announcement} {credits}"))
        events.append(outcome.event())
        return self._step(events, ballots=ballots, outcome=outcome)

    def _step(self, events: list[Event], **changes: Any) -> tuple[ChameleonState, list[Event]]:
        log = (*self.log, *events)
        nxt = replace(self, log=log, returned=len(log), **changes)
        return nxt, list(log[self.returned :])
