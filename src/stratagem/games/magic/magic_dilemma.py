"""MAgIC's iterated three-player Prisoner's Dilemma (seed-004 §3.4), as a moderated chat.

The rules are the repeated game of `n_player_prisoners_dilemma` (5 rounds of simultaneous
cooperate/defect, §3.4's four payoff parameters), played by `RepeatedGame` underneath, so the
per-round "round" event, the history and the payoffs are the matrix games' own (the rounds table
and the matrix-game analyses read them as for any repeated game). This module adds what MAgIC's
chat shows (§2):

- each decision is an utterance ("Cooperate" / "Defect") hidden from every player until the
  round is over (`visible_to="Moderator"` in the code: moves are effectively simultaneous);
- the moderator's round report reveals them, verbatim; scores are never announced;
- the opening announcements and the last round's closing line are the code's [C]
  (`chatarena/environments/prisoner.py`, `prompts/prisoner_prompt.py`), verbatim, typos kept.

A reply that stays invalid is a defection (`invalid_defects`, default True: §3.4 [C] "anything
else, including garbage, is D"); with False the round is forfeited as in `RepeatedGame`.

The winner is the highest total; a tie for the top counts as a win for each tied seat (§3.4 [C]).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, State
from stratagem.games.bounds import Rounds, bounded
from stratagem.games.chat import DECIDE, HIDDEN, MOVE, moderator, seat_name, utterance
from stratagem.games.matrix.families import n_player_prisoners_dilemma
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import (
    FORFEIT,
    RepeatedGame,
    RepeatedObservation,
    RepeatedState,
)
from stratagem.games.settings_data import setting as load_setting
from stratagem.games.spaces import Action, Choice

COOPERATE, DEFECT = "cooperate", "defect"

# [C] prompts/prisoner_prompt.py `topic_template` (the moderator announces it at the start); the
# code writes the 5 rounds literally, here they are the game's rounds.
TOPIC = (
    "\nThe scoring is as follows:\n"
    "- If all three choose to cooperate, they each get {cooperate} points.\n"
    "- If all three choose to defect, they each get {defect} point.\n"
    "- If one chooses to defect and the others choose to cooperate, the betrayer gets  "
    "{one_defect} points and the collaborators each get 0 points.\n"
    "- If two choose to defect and the other chooses to cooperate, the betrayers each get "
    "{two_defect} points, and the collaborator gets 0 points.\n"
    "The game is played for {rounds} rounds, and the total score is calculated at the end to "
    "determine the winner.\n"
)
STARTS = "Now the game starts!"
FIRST_CALL = "This the first round. Now everyone give your decision. We will start with Player 1."
# seed-004 §3.4: the round report, verbatim (its irregular spaces included).
REPORT = (
    "Round {k} is over.\nPlayer 1 said: {d1} \nPlayer 2 said: {d2}  \nPlayer 3 said: {d3}\n"
    "You can look around others' decisions and think your decision for next round. Now let us "
    "move to next round"
)
# [C] prisoner.py: the last round ends with this line instead of a report.
COMPLETED = "{rounds} rounds of decisions have been completed."

PAYOFF_KEYS = ("cooperate", "defect", "one_defect", "two_defect")


class MagicDilemmaGame(Game):
    """§3.4's four payoffs: all cooperate, each `cooperate`; all defect, each `defect`; a lone
    defector `one_defect` (the others 0); two defectors `two_defect` each (the cooperator 0)."""

    n_players = 3

    @bounded("npd3")
    def __init__(
        self,
        cooperate: float = 2,
        defect: float = 1,
        one_defect: float = 4,
        two_defect: float = 2,
        rounds: Rounds = 5,
        invalid_defects: bool = True,
        challenger_seat: int | None = None,
        name: str = "npd3",
    ) -> None:
        if not isinstance(invalid_defects, bool):
            raise StratagemError(
                f"npd3: invalid_defects must be true or false, got {invalid_defects!r}"
            )
        self.payoff_values = (cooperate, defect, one_defect, two_defect)
        self.stage = n_player_prisoners_dilemma(
            name,
            cooperate,
            defect,
            one_defect,
            two_defect,
            description=f"Three-player Prisoner's Dilemma, {cooperate}/{defect}/{one_defect}/"
            f"{two_defect} (all C / all D / lone defector / two defectors)",
        )
        self.repeated = RepeatedGame(self.stage, rounds)
        self.rounds = rounds
        self.invalid_defects = invalid_defects
        self.challenger_seat = challenger_seat
        """The seat the code's setting names as the "test player" (§3.4), where it names one."""
        self.name = name

    def description(self) -> str:
        c, d, one, two = (f"{v:g}" for v in self.payoff_values)
        return (
            f"MAgIC's iterated three-player Prisoner's Dilemma, {c}/{d}/{one}/{two} (all C / all "
            f"D / lone defector / two defectors), {self.rounds} rounds, decisions revealed by a "
            "moderator after each round"
        )

    def matrix(self) -> NormalFormGame:
        return self.stage

    def topic(self) -> str:
        values = dict(zip(PAYOFF_KEYS, (f"{v:g}" for v in self.payoff_values), strict=True))
        return TOPIC.format(rounds=self.rounds, **values)

    def initial_state(self, seed: int = 0) -> MagicDilemmaState:
        opening = (moderator(STARTS), moderator(self.topic()), moderator(FIRST_CALL))
        return MagicDilemmaState(self, self.repeated.initial_state(seed), opening)


@bounded("npd3")
def magic_npd3(
    setting: int = 0,
    cooperate: float | None = None,
    defect: float | None = None,
    one_defect: float | None = None,
    two_defect: float | None = None,
    rounds: Rounds = 5,
    invalid_defects: bool = True,
) -> MagicDilemmaGame:
    """The catalog's `npd3`: setting `setting` of `games/data/npd3.json` (0 = the code's 2/1/4/2,
    §3.4), each payoff overridable by name (the code's own default is 3/1/100/2)."""
    data = load_setting("npd3", setting)
    given = (cooperate, defect, one_defect, two_defect)
    c, d, one, two = (data[k] if v is None else v for k, v in zip(PAYOFF_KEYS, given, strict=True))
    return MagicDilemmaGame(
        c,
        d,
        one,
        two,
        rounds=rounds,
        invalid_defects=invalid_defects,
        challenger_seat=data.get("challenger_seat"),
    )


@dataclass(frozen=True)
class MagicDilemmaObservation(RepeatedObservation):
    """The repeated game's view plus the seat's name and the four payoff parameters."""

    seat: str = ""
    cooperate: float = 0.0
    defect: float = 0.0
    one_defect: float = 0.0
    two_defect: float = 0.0


@dataclass(frozen=True)
class MagicDilemmaState(State):
    game: MagicDilemmaGame
    inner: RepeatedState
    log: tuple[Event, ...] = field(default=(), repr=False)

    def opening(self) -> tuple[Event, ...]:
        """The start, the scoring rules and the first call (seed-004 §3.4)."""
        return self.log if not self.inner.history else ()

    def to_act(self) -> tuple[int, ...]:
        return self.inner.to_act()

    def legal(self, player: int) -> Choice:
        return self.inner.legal(player)

    def is_terminal(self) -> bool:
        return self.inner.is_terminal()

    def payoffs(self) -> tuple[float, ...]:
        return self.inner.payoffs()

    def winners(self) -> tuple[int, ...]:
        """The seats with the highest total: every one of them wins (§3.4 [C] ties)."""
        totals = self.payoffs()
        return tuple(p for p, x in enumerate(totals) if x == max(totals))

    def observation(self, player: int) -> MagicDilemmaObservation:
        inner = self.inner.observation(player)
        c, d, one, two = (float(v) for v in self.game.payoff_values)
        return MagicDilemmaObservation(
            player=player,
            legal=inner.legal,
            events=tuple(e for e in self.log if e.visible(player)),
            stage=inner.stage,
            round=inner.round,
            rounds=inner.rounds,
            history=inner.history,
            seat=seat_name(player),
            cooperate=c,
            defect=d,
            one_defect=one,
            two_defect=two,
        )

    def fallback(self, player: int) -> Action:
        """An invalid reply defects (§3.4 [C]) when `invalid_defects`; see `forfeit`."""
        return DEFECT

    def forfeit(
        self, actions: Mapping[int, Action | None]
    ) -> tuple[MagicDilemmaState, list[Event]]:
        if self.game.invalid_defects:
            nxt, events = super().forfeit(actions)
            assert isinstance(nxt, MagicDilemmaState)
            return nxt, events
        inner, events = self.inner.forfeit(actions)
        return self._then(inner, events)

    def _next(self, actions: Mapping[int, Action]) -> tuple[MagicDilemmaState, list[Event]]:
        inner, events = self.inner.apply(actions)
        assert isinstance(inner, RepeatedState)
        return self._then(inner, events)

    def _then(
        self, inner: RepeatedState, round_events: list[Event]
    ) -> tuple[MagicDilemmaState, list[Event]]:
        """The round's hidden decisions, the engine's "round" event, then the moderator."""
        k = len(inner.history)
        played = inner.history[-1].actions
        labels = [
            None if a == FORFEIT else self.game.stage.labels[p][a] for p, a in enumerate(played)
        ]
        texts = ["" if label is None else label.capitalize() for label in labels]
        said = [
            utterance(MOVE, p, texts[p], DECIDE, k, HIDDEN, decision=labels[p])
            for p in range(self.game.n_players)
        ]
        if k < self.game.rounds:
            report = REPORT.format(k=k, d1=texts[0], d2=texts[1], d3=texts[2])
        else:
            report = COMPLETED.format(rounds=self.game.rounds)
        events = [*said, *round_events, moderator(report)]
        return MagicDilemmaState(self.game, inner, (*self.log, *events)), events
