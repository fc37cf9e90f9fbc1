"""Undercover, the second social deduction game of seed-004 (MAgIC) §3.2.

Three players each get a word: two civilians share one, and the undercover gets a similar but
different one. Nobody is told their role ("Players explore their roles by telling from their own
and others clues"), so an observation carries the seat's word and nothing about roles. Everyone
gives a clue per round, in seat order, for 2 rounds (the code's `_max_round = 2`); then everyone
votes, privately and at once, for another player (for any player with `self_votes="count"`, the
code's tally). A strict plurality on the undercover catches it; there is no guess. Payoffs are
the code's credits (§3.2's table): 3 per game in all, so a role's win rate is its credits over 3n.

The words and the undercover's seat come from a setting (`games/data/undercover.json`, made by
`scripts/magic_social_settings.py`). Setting 0 is the only published one and carries the two
rounds of clues recorded in GPT-4 self-play, which seed-004 §2's "fixed" defenders replay
(`UndercoverObservation.recorded_clue`).

Invalid replies (seed-004 is silent; §10.10 asks that parse failures be reported, which the engine
does by recording the invalid decision, so these rules only say how the game goes on): a missing
clue is an empty clue (an empty or blank clue given as a move is illegal, re-asked as any illegal
move: a clue describes the seat's word); a missing vote is an abstention and counts for nobody.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from stratagem.errors import StratagemError
from stratagem.games import settings_data
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.bounds import Chars, Rounds, bounded
from stratagem.games.magic.social_deduction import (
    CLUE,
    DEFAULT_MAX_CHARS,
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

SEED004_ROUNDS = 2
"""Clue rounds before the vote: seed-004 §3.2 (`_max_round = 2`, and A.1)."""

# -- the moderator: seed-004 §3.2 [C], verbatim ---------------------------------------------------
START = "Now the game starts!"
YOUR_WORD = "Your word is: {word}"
CLUE_START = (
    # The code's Undercover env opens the first round with Chameleon's instruction (seed-004 §3.1).
    "Now everyone gives one clue (but never include the secret word). You cannot repeat what "
    "others has said. We will start with {first}."
)
NEXT_ROUND = "Now we starting another round of giving clue, we still start from {first}"
VOTE_CALL = (
    "Now vote which of the other players (excluding yourself) is the undercover. You cannot vote "
    "for yourself."
)
VOTE_TEMPLATE = ' You must use the template "I vote for Player xx."'
"""What the PGM env appends to `VOTE_CALL` (seed-004 §3.2); see `UndercoverGame.vote_template`."""
# -- end-of-game announcements: NOT verbatim from the code; composed in the style of seed-004
# §9.5's case-study announcement, each followed by the credits sentence of `credits_text`.
CAUGHT = (
    "The most-voted player is {accused}. The accusation is correct. {undercover} is the undercover."
)
WRONG_PLURALITY = (
    "The most-voted player is {accused}. The accusation is incorrect. {undercover} is the "
    "undercover."
)
EVEN_VOTES = "There are even votes. The accusation does not stand. {undercover} is the undercover."

# -- the credit table: seed-004 §3.2 [C] (the paper's A.2 is cut off, so there is no paper label) --
CORRECT_ACCUSATION = Result(0, None, "correct accusation", 0, 3)
WRONG_ACCUSATION = Result(1, None, "wrong plurality", 3, 0)
EVEN_VOTING = Result(2, None, "even votes", 2, 1)
RESULTS: tuple[Result, ...] = (CORRECT_ACCUSATION, WRONG_ACCUSATION, EVEN_VOTING)


class UndercoverGame(Game):
    """Undercover with the words and undercover seat of one setting; `civilian_word`,
    `undercover_word` and `undercover` (a seat, 0-based, or a name such as "Player 1") override
    the setting's. A setting's recorded clues belong to its exact roles, so any override drops them.

    `rounds` (default 2, seed-004 §3.2) is the number of clue rounds. `vote_template` (default
    False, the vanilla env) appends the PGM env's "I vote for Player xx." template to the call to
    vote. `self_votes` (default "refuse", the paper's rule) or "count" (the code's tally): whether
    a vote for oneself is refused or counted (seed-004 §2, §3.1; `social_deduction.SelfVotes`).
    """

    n_players = N_SEATS

    @bounded("undercover")
    def __init__(
        self,
        setting: int = 0,
        civilian_word: str | None = None,
        undercover_word: str | None = None,
        undercover: SeatOption = None,
        rounds: Rounds = SEED004_ROUNDS,
        vote_template: bool = False,
        max_chars: Chars = DEFAULT_MAX_CHARS,
        name: str = "undercover",
        self_votes: SelfVotes = "refuse",
    ) -> None:
        chosen = settings_data.setting("undercover", setting)
        self.setting = setting
        civilian = chosen["non_undercover_code"] if civilian_word is None else civilian_word
        spy_word = chosen["undercover_code"] if undercover_word is None else undercover_word
        self.civilian_word = check_text("undercover", "civilian_word", civilian)
        self.undercover_word = check_text("undercover", "undercover_word", spy_word)
        if self.civilian_word.strip().lower() == self.undercover_word.strip().lower():
            raise StratagemError(
                f"undercover: the two words must differ, got {self.civilian_word!r} twice"
            )
        spy = seat_of(chosen["undercover_name"]) if undercover is None else undercover
        self.undercover = check_seat("undercover", "undercover", spy)
        overridden = civilian_word is not None or undercover_word is not None
        overridden = overridden or undercover is not None
        self.recorded = None if overridden else stored_clues("undercover", chosen.get("clues"))
        if not isinstance(vote_template, bool):
            raise StratagemError(
                f"undercover: vote_template must be true or false, got {vote_template!r}"
            )
        self.rounds = rounds
        self.vote_template = vote_template
        self.self_votes = check_self_votes("undercover", self_votes)
        self.space = FreeText(max_chars, nonblank="a clue")
        """A clue describes the seat's word (seed-004 §3.2): saying nothing is no clue, so it is
        refused and asked again as any illegal move; only a clue that stays missing is empty."""
        self.name = name

    def description(self) -> str:
        return (
            "Undercover: 3 players, one with a similar but different word, nobody told their "
            f"role; {self.rounds} rounds of clues, then a private vote; paid in credits"
        )

    def word(self, seat: int) -> str:
        return self.undercover_word if seat == self.undercover else self.civilian_word

    def sides(self) -> tuple[str, ...]:
        """The undercover against the two civilians (seed-004 §4: the challenger plays each
        side)."""
        return tuple(
            "undercover" if seat == self.undercover else "civilian" for seat in range(N_SEATS)
        )

    def initial_state(self, seed: int = 0) -> UndercoverState:
        """The roles come from the setting, so the seed changes nothing."""
        intro = [moderator(START)]
        intro += [moderator(YOUR_WORD.format(word=self.word(s)), to=s) for s in range(N_SEATS)]
        intro.append(moderator(CLUE_START.format(first=SEATS[0])))
        return UndercoverState(self, log=tuple(intro), returned=len(intro))


@dataclass(frozen=True)
class UndercoverObservation(Observation):
    """One seat's view: its word and the clues, never a role (nobody is told theirs)."""

    name: str = ""
    """The seat's player name, "Player 1".."Player 3"."""
    phase: str = CLUE
    """"clue", "vote", or "over" once the game has ended."""
    round: int = 1
    """The clue round, from 1; the vote belongs to the last one."""
    rounds: int = SEED004_ROUNDS
    word: str = ""
    clues: tuple[Clue, ...] = ()
    """Every clue given so far, in speaking order."""
    recorded_clue: str | None = None
    """The setting's stored clue of this seat for this round, in the clue phase, if it has one:
    what seed-004 §2's fixed defenders replay."""


@dataclass(frozen=True)
class UndercoverState(State):
    game: UndercoverGame = field(repr=False)
    clues: tuple[str, ...] = ()
    """Clue texts in speaking order, round after round."""
    outcome: Outcome | None = None
    """How the game ended, once it has."""
    log: tuple[Event, ...] = field(default=(), repr=False)
    """Every event so far, oldest first, each with its visibility."""
    returned: int = 0
    """How many events of `log` are out already: the opening (`opening`, which the episode loop
    records before the first step) and what steps have returned."""

    def opening(self) -> tuple[Event, ...]:
        """The start, each seat's word and the call for clues (seed-004 §3.2)."""
        return self.log if not self.clues else ()

    @property
    def phase(self) -> str:
        if self.outcome is not None:
            return OVER
        return CLUE if len(self.clues) < N_SEATS * self.game.rounds else VOTE

    @property
    def round(self) -> int:
        return min(len(self.clues) // N_SEATS + 1, self.game.rounds)

    def to_act(self) -> tuple[int, ...]:
        phase = self.phase
        if phase == CLUE:
            return (len(self.clues) % N_SEATS,)  # seed-004 §2: always Player 1 -> 2 -> 3
        return tuple(range(N_SEATS)) if phase == VOTE else ()

    def legal(self, player: int) -> ActionSpace:
        if player not in self.to_act():
            raise IllegalAction(f"{seat_name(player)} does not act now in undercover")
        if self.phase == VOTE:
            return vote_space(player, self.game.self_votes)
        return self.game.space

    def observation(self, player: int) -> UndercoverObservation:
        seat_name(player)  # a one-line error for a seat that does not exist
        phase = self.phase
        return UndercoverObservation(
            player=player,
            legal=self.legal(player) if player in self.to_act() else None,
            events=tuple(e for e in self.log if e.visible(player)),
            name=seat_name(player),
            phase=phase,
            round=self.round,
            rounds=self.game.rounds,
            word=self.game.word(player),
            clues=clues_by_round(self.clues),
            recorded_clue=(
                replay_clue(self.game.recorded, self.clues, player) if phase == CLUE else None
            ),
        )

    def is_terminal(self) -> bool:
        return self.outcome is not None

    def payoffs(self) -> tuple[float, ...]:
        """Credits (seed-004 §3.2) once over; nothing before."""
        return self.outcome.credits if self.outcome is not None else (0.0,) * N_SEATS

    def fallback(self, player: int) -> Action:
        """A missing clue is an empty clue (module docstring); votes are handled by `forfeit`,
        since an abstention is no label."""
        if self.phase == OVER:
            raise IllegalAction("the game is over: no further actions are accepted")
        if self.phase != CLUE:
            raise IllegalAction(f"undercover: no default vote for {seat_name(player)}")
        return ""

    def forfeit(self, actions: Mapping[int, Action | None]) -> tuple[UndercoverState, list[Event]]:
        """A missing clue is empty and missing votes abstain (module docstring); the empty clue
        is the game's rule, not a move, so it skips the clue's space, which refuses an empty
        clue from a player."""
        if self.phase == CLUE and actions == {self.to_act()[0]: None}:
            return self._next({self.to_act()[0]: self.fallback(self.to_act()[0])})
        if self.phase != VOTE or None not in actions.values():
            nxt, events = super().forfeit(actions)  # a clue's fallback, or plain `apply`
            assert isinstance(nxt, UndercoverState)
            return nxt, events
        return self._vote(cast_votes(self, actions))

    def _next(self, actions: Mapping[int, Action]) -> tuple[UndercoverState, list[Event]]:
        if self.phase == VOTE:
            return self._vote({p: seat_of(str(a)) for p, a in actions.items()})
        (speaker,) = self.to_act()
        text = str(actions[speaker])
        events = [clue_event(speaker, self.round, text)]
        said = len(self.clues) + 1
        if said == N_SEATS * self.game.rounds:
            call = VOTE_CALL + (VOTE_TEMPLATE if self.game.vote_template else "")
            events.append(moderator(call))
        elif said % N_SEATS == 0:
            events.append(moderator(NEXT_ROUND.format(first=SEATS[0])))
        return self._step(events, clues=(*self.clues, text))

    def _vote(self, votes: Mapping[int, int]) -> tuple[UndercoverState, list[Event]]:
        """Resolve the vote (seed-004 §3.2): caught only by a strict plurality."""
        ballots = ballots_of(votes)
        events = [vote_event(p, self.round, target) for p, target in sorted(votes.items())]
        accused = plurality(ballots)
        spy = self.game.undercover
        names = {"undercover": seat_name(spy)}
        if accused is None:
            result, text = EVEN_VOTING, EVEN_VOTES.format(**names)
        elif accused == spy:
            result, text = CORRECT_ACCUSATION, CAUGHT.format(accused=seat_name(accused), **names)
        else:
            result = WRONG_ACCUSATION
            text = WRONG_PLURALITY.format(accused=seat_name(accused), **names)
        outcome = Outcome(result, spy, ballots, accused)
        credits = credits_text("Undercover", "Civilians", result)
        events += [moderator(f"{text} {credits}"), outcome.event()]
        return self._step(events, outcome=outcome)

    def _step(self, events: list[Event], **changes: Any) -> tuple[UndercoverState, list[Event]]:
        log = (*self.log, *events)
        nxt = replace(self, log=log, returned=len(log), **changes)
        return nxt, list(log[self.returned :])
