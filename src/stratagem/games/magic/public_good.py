"""The repeated Public Good game of seed-004 (MAgIC) §3.5.

Each of n players holds an endowment for the whole game (not per round). In every round they all
contribute an integer at once; contributions are public once the round is over. At the end the pool
times a multiplier is shared equally, and each final score is what the player kept plus the share.

Numbers (seed-004 §3.5): 3 players, 100 points in total, 5 rounds. The multiplier defaults to 3.5,
the value of the only published setting (setting 0 of the code); the paper's figure lists the seven
multipliers of its other settings, `SEED004_MULTIPLIERS`, which are not in the code. Note that with
3.5 and 3 players each contributed point returns 3.5/3 > 1 to its giver, so contributing maximises a
player's own score; contributing less still wins more often, since the winner is the highest scorer.

A player whose reply stays invalid contributes nothing that round (a skipped turn): the spec gives
no rule, and 0 is the contribution that changes nobody else's position.

The highest final score wins; a tie for the top counts as a win for every tied seat (§3.5 [C]).

`moderated` adds MAgIC's chat (§2, `games/chat.py`): each contribution is an utterance ("I
contribute 20") that no player sees until the moderator's round report reveals it, and the
moderator's opening, reports and closing line are the code's, verbatim [C]
(`chatarena/environments/public_good.py`, typos kept). `magic_public_good` builds the game with
it, the code's unenforced budget, and the paper's settings (`games/data/public-good.json`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.bounds import MAX_ROUNDS, Bounds, Rounds, bounded
from stratagem.games.chat import DECIDE, HIDDEN, MOVE, moderator, seat_name, utterance
from stratagem.games.settings_data import setting as load_setting
from stratagem.games.spaces import Action, IllegalAction, IntegerRange

SEED004_MULTIPLIERS: tuple[float, ...] = (1.0, 1.2, 1.5, 1.8, 2.0, 2.5, 3.0)
"""The multipliers on the x-axis of seed-004's Public Good figure (§3.5)."""

SEED004_SETTING0_MULTIPLIER = 3.5
"""The multiplier of seed-004's setting 0, the one setting its code ships (§3.5)."""

# [C] chatarena/environments/public_good.py: the moderator's words, verbatim (typos included);
# the code writes 3 players, 100 points and its rounds, here they are the game's.
OPENING = (
    "Now the game starts! The background is: \n\nYou have {endowment} starting points to "
    "contribute to the communal pool each round. You need to remember how much money you still "
    "have after each round and avoid to exceed the all {endowment} points in {rounds} rounds.\n"
)
FIRST_CALL = "Now everyone gives your decisionWe will start with Player 1."
REPORT = (
    "Round {k} is over. \n {said} \n You can look around others' decisions and think your "
    "decision for next round. Now let us move to next round"
)
COMPLETED = "{rounds} rounds of decisions have been completed."


MAX_PLAYERS = 100
"""Most players of one game: the study plays 3 (§3.5). Every seat acts every round and sees
every contribution, so a round's work grows with the square of the players: 1,000 players took
21 s for the study's 5 rounds with no model, and 100,000 never finished."""
Players = Annotated[int, Bounds(2, MAX_PLAYERS)]
MAX_ENDOWMENT = 10_000
"""Most points a player may hold: a hundred times the study's 100. A MAgIC agent lists every
contribution as a choice (`agents/magic/theory_profiles.py`), as a PettingZoo seat's discrete
space does."""
Endowment = Annotated[int, Bounds(1, MAX_ENDOWMENT)]
MAX_CONTRIBUTIONS = 3 * MAX_ROUNDS
"""Most contributions one game may hold, players x rounds: every observation carries all of
them, so a game's work grows with the square of this (100 players x 100 rounds took two
minutes with no model). The study's 3 players may play the grid's every round count."""


class PublicGoodGame(Game):
    """n players, a total endowment each, `rounds` simultaneous contributions, one final payout.

    `enforce_budget` (default True here; False in the catalog's MAgIC game, `magic_public_good`)
    limits each contribution to what the player has left. seed-004's original code did not enforce
    the budget (§3.5: "scores can go negative"); with False, any contribution up to the endowment
    is legal in every round, so the kept amount can fall below 0.
    """

    @bounded("public good")
    def __init__(
        self,
        n_players: Players = 3,
        endowment: Endowment = 100,
        rounds: Rounds = 5,
        multiplier: float = SEED004_SETTING0_MULTIPLIER,
        enforce_budget: bool = True,
        name: str = "public-good",
        moderated: bool = False,
        challenger_seat: int | None = None,
    ) -> None:
        if n_players * rounds > MAX_CONTRIBUTIONS:
            raise StratagemError(
                f"public good: {n_players:,} players x {rounds:,} rounds = "
                f"{n_players * rounds:,} contributions, more than the {MAX_CONTRIBUTIONS:,} one "
                "game may hold; use fewer players or rounds"
            )
        self.n_players, self.endowment, self.rounds = n_players, endowment, rounds
        if (
            isinstance(multiplier, bool)
            or not isinstance(multiplier, int | float)
            or not math.isfinite(multiplier)
            or multiplier < 0
        ):
            raise StratagemError(
                f"public good: multiplier must be a finite number >= 0, got {multiplier!r}"
            )
        if not isinstance(enforce_budget, bool):
            raise StratagemError(
                f"public good: enforce_budget must be true or false, got {enforce_budget!r}"
            )
        if not isinstance(moderated, bool):
            raise StratagemError(f"public good: moderated must be true or false, got {moderated!r}")
        self.multiplier = float(multiplier)
        self.enforce_budget = enforce_budget
        self.name = name
        self.moderated = moderated
        self.challenger_seat = challenger_seat
        """The seat a setting names as the "test player" (§3.5), where it names one."""

    def description(self) -> str:
        return (
            f"Public good: {self.n_players} players with {self.endowment} points each contribute "
            f"over {self.rounds} rounds; the pool x {self.multiplier:g} is shared equally"
            + (", contributions revealed by a moderator after each round" if self.moderated else "")
        )

    def initial_state(self, seed: int = 0) -> PublicGoodState:
        return PublicGoodState(self, ())


@bounded("public good")
def magic_public_good(
    setting: int | None = None,
    n_players: Players = 3,
    endowment: Endowment = 100,
    rounds: Rounds = 5,
    multiplier: float | None = None,
    enforce_budget: bool = False,
    moderated: bool = True,
) -> PublicGoodGame:
    """The catalog's `public-good`: MAgIC's game with its chat (seed-004 §3.5).

    `setting` 0..6 takes the multiplier of the paper's figure (1, 1.2, 1.5, 1.8, 2, 2.5, 3, in
    that order); None (the default) takes the code's only setting, 3.5, which is not among them.
    An explicit `multiplier` overrides both.

    `enforce_budget` defaults to False, the code's rule (§3.5 [C]: "The budget is not enforced,
    so scores can go negative"): every round any contribution from 0 to the endowment is legal.
    True limits each contribution to what the player has left.
    """
    if setting is not None:
        data = load_setting("public-good", setting)
        value, challenger = data["multiplier"], data.get("challenger_seat")
    else:
        # The code's setting 0 names Player 1 as its test player (§3.5).
        value, challenger = SEED004_SETTING0_MULTIPLIER, 0
    return PublicGoodGame(
        n_players,
        endowment,
        rounds,
        value if multiplier is None else multiplier,
        enforce_budget,
        moderated=moderated,
        challenger_seat=challenger if multiplier is None else None,
    )


@dataclass(frozen=True)
class PublicGoodObservation(Observation):
    """A player's view: the rules, what they have left, and every past round's contributions."""

    round: int = 1
    """The round about to be played, from 1 (rounds + 1 once over)."""
    rounds: int = 1
    endowment: int = 0
    multiplier: float = 0.0
    remaining: int = 0
    """Points this player has kept so far."""
    history: tuple[tuple[int, ...], ...] = ()
    """Contributions of every player, one tuple per past round."""

    @property
    def pool(self) -> int:
        return sum(sum(r) for r in self.history)


@dataclass(frozen=True)
class PublicGoodState(State):
    game: PublicGoodGame
    history: tuple[tuple[int, ...], ...]

    def remaining(self, player: int) -> int:
        return self.game.endowment - sum(r[player] for r in self.history)

    @property
    def pool(self) -> int:
        return sum(sum(r) for r in self.history)

    def share(self) -> float:
        """Each player's part of the multiplied pool (paid out at the end)."""
        return self.game.multiplier * self.pool / self.game.n_players

    def to_act(self) -> tuple[int, ...]:
        return () if self.is_terminal() else tuple(range(self.game.n_players))

    def legal(self, player: int) -> IntegerRange:
        if player not in self.to_act():
            raise IllegalAction(f"player {player} does not act now in the public good game")
        if self.game.enforce_budget:
            return IntegerRange(0, max(0, self.remaining(player)))
        return IntegerRange(0, self.game.endowment)

    def fallback(self, player: int) -> int:
        """A skipped turn contributes 0 (module docstring)."""
        return 0

    def winners(self) -> tuple[int, ...]:
        """The seats with the highest final score, all of them winning (§3.5 [C] ties). Compared
        on kept points, since everyone gets the same share: exact, with no float ties lost."""
        kept = [self.remaining(p) for p in range(self.game.n_players)]
        return tuple(p for p, x in enumerate(kept) if x == max(kept))

    def opening(self) -> tuple[Event, ...]:
        """The rules and the first call (seed-004 §3.5), in the moderated game."""
        return self.events() if not self.history else ()

    def events(self) -> tuple[Event, ...]:
        """Each round's contributions (public once the round is over), then the payout once the
        game is over; with `moderated`, the chat of §2 around them (module docstring)."""
        chat = self.game.moderated
        out: list[Event] = []
        if chat:
            out += [
                moderator(OPENING.format(endowment=self.game.endowment, rounds=self.game.rounds)),
                moderator(FIRST_CALL),
            ]
        for t, r in enumerate(self.history, start=1):
            said = [f"I contribute {x}" for x in r]
            if chat:
                out += [
                    utterance(MOVE, p, text, DECIDE, t, HIDDEN, contribution=r[p])
                    for p, text in enumerate(said)
                ]
            out.append(Event("contributions", {"round": t, "contributions": list(r)}))
            if chat:
                out.append(moderator(self._report(t, said)))
        if self.is_terminal():
            out.append(
                Event(
                    "payout",
                    {"pool": self.pool, "share": self.share(), "payoffs": list(self.payoffs())},
                )
            )
        return tuple(out)

    def _report(self, t: int, said: list[str]) -> str:
        if t >= self.game.rounds:
            return COMPLETED.format(rounds=self.game.rounds)
        lines = " \n".join(f"{seat_name(p)} said: {text}" for p, text in enumerate(said))
        return REPORT.format(k=t, said=lines)

    def observation(self, player: int) -> PublicGoodObservation:
        if not 0 <= player < self.game.n_players:
            raise StratagemError(
                f"the public good game has players 0..{self.game.n_players - 1}, got {player}"
            )
        return PublicGoodObservation(
            player=player,
            legal=None if self.is_terminal() else self.legal(player),
            events=tuple(e for e in self.events() if e.visible(player)),
            round=len(self.history) + 1,
            rounds=self.game.rounds,
            endowment=self.game.endowment,
            multiplier=self.game.multiplier,
            remaining=self.remaining(player),
            history=self.history,
        )

    def is_terminal(self) -> bool:
        return len(self.history) >= self.game.rounds

    def payoffs(self) -> tuple[float, ...]:
        """Final: kept points plus the share. Before the end: kept points only, since the pool is
        paid out only when the game is over (seed-004 §3.5)."""
        bonus = self.share() if self.is_terminal() else 0.0
        return tuple(float(self.remaining(p)) + bonus for p in range(self.game.n_players))

    def _next(self, actions: Mapping[int, Action]) -> tuple[PublicGoodState, list[Event]]:
        played = tuple(int(actions[p]) for p in range(self.game.n_players))
        nxt = PublicGoodState(self.game, (*self.history, played))
        new = nxt.events()[len(self.events()) :]
        return nxt, list(new)
