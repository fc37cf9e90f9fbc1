"""The PGM pipeline of the game-theory games (seed-004 §7.3, §8.1): Cost Sharing, the
three-player Prisoner's Dilemma and Public Good.

At the end of every round after which the game goes on (in Cost Sharing: after a vote that did
not agree), each PGM seat answers the game's PGM prompt in its chat. The answer is hidden; the
latest one goes back into the seat's next decisions (its proposals in Cost Sharing, not its
votes; every PD and PG move), as in the code. From round 2 on, a PGM seat's decision is asked
with the game's PGM Decision Prompt; before that with the PGM environment's normal command (PD
`You must reply with "Cooperate" or "Defect"`, PG `Now make a decision, you must answer with the
template "I contribute xx".`, Cost Sharing's proposal template). Nothing numeric is read from
these analyses (they forecast moves, not a spy): they are stored as answers only.

A PGM seat plays with the PGM role description of its game (`role_desc_pgm`, which the study's
runners give PGM seats) and 256 tokens for every call (§2).

`code_quirks` (§7.3): the code asks seats 2 and 3 with the PGM Decision Prompt already in round
1 (PD, PG), only seat 1 with it in Cost Sharing (seats 2 and 3 keep the proposal template, with
their analysis re-injected), and tells every PGM seat of the PD "You play as Player 1".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stratagem.agents.base import Decision
from stratagem.agents.magic import texts
from stratagem.agents.magic.chat import seat_name, system_message
from stratagem.agents.magic.pgm_pipeline import (
    PGM_MAX_TOKENS,
    PURPOSE,
    QUESTION_PREFIX,
    NonEmptyParser,
    Pipeline,
    analysis_answer,
    register,
    reply_text,
)
from stratagem.agents.magic.profiles import Turn
from stratagem.agents.magic.texts import Wording
from stratagem.agents.questions import Answer
from stratagem.games.base import Observation
from stratagem.games.magic.cost_sharing import PROPOSE, CostSharingGame, CostSharingObservation
from stratagem.games.magic.magic_dilemma import MagicDilemmaGame
from stratagem.games.magic.public_good import PublicGoodGame
from stratagem.games.spaces import Choice

if TYPE_CHECKING:
    from stratagem.agents.magic.pgm_player import PgmPlayer

N_SEATS = 3


@dataclass(frozen=True)
class TheoryGame:
    """What the pipeline needs to know of one game (its texts, and how to read its rounds)."""

    prefix: str
    """The prompts' name prefix: "<prefix>_pgm", "<prefix>_pgm_decision"."""
    system: Callable[[Any, Observation, Wording, bool], str]
    """The PGM seat's system prompt (game, observation, wording, code_quirks)."""
    ended: Callable[[Observation], int]
    """The round that has just ended with the game going on, else 0."""
    deciding: Callable[[Observation], bool]
    """Whether the seat's move is a decision (not a Cost Sharing vote)."""
    first_request: str | None
    """The PGM env's normal command, when it differs from the magic player's request."""
    quirk: Callable[[Observation], bool]
    """`code_quirks`: whether the code asks this decision with the PGM Decision Prompt."""


class TheoryPipeline(Pipeline):
    def __init__(self, player: PgmPlayer, game: TheoryGame) -> None:
        self.spec = game
        super().__init__(player)

    def reset(self) -> None:
        self.latest: str | None = None
        self.analysed: set[int] = set()

    def injected(self, observation: Observation, purpose: str) -> tuple[str, ...]:
        if self.latest is None or purpose != "decision" or not self.spec.deciding(observation):
            return ()
        return (self.latest,)

    async def debrief(self, observation: Observation) -> list[Answer]:
        ended = self.spec.ended(observation)
        if ended < 1 or ended in self.analysed:
            return []
        self.analysed.add(ended)
        return [await self._analyse(observation, ended)]

    async def _analyse(self, observation: Observation, ended: int) -> Answer:
        player = self.player
        seat = observation.player
        me = seat_name(seat)
        one, two = (seat_name(p) for p in range(N_SEATS) if p != seat)
        request = texts.render(
            f"{self.spec.prefix}_pgm", player.wording,
            player_name=me, oth_player1=one, oth_player2=two,
        )  # fmt: skip
        turn = Turn(
            self._system(observation),
            request,
            PGM_MAX_TOKENS,
            NonEmptyParser(strict=not player.options.code_compat),
        )
        decision = await player.ask(observation, turn, (), PURPOSE)
        self.latest = reply_text(decision, seat) or self.latest  # an empty reply is no message
        parsed = reply_text(decision, seat) if decision.valid else None
        return analysis_answer(f"{QUESTION_PREFIX}after_round:{ended}", request, decision, parsed)

    async def act(self, observation: Observation) -> Decision:
        """Every move of a PGM seat: its system prompt and token limit, and for a decision the
        PGM Decision Prompt once it applies (module docstring)."""
        player = self.player
        base = player.turn(observation)
        request = base.request
        if self.spec.deciding(observation):
            if self._pgm_decision(observation):
                request = texts.text(f"{self.spec.prefix}_pgm_decision", player.wording)
            elif self.spec.first_request is not None:
                request = self.spec.first_request
        turn = Turn(
            self._system(observation), request, PGM_MAX_TOKENS, base.parser, base.constraint
        )
        space = observation.legal
        labels = space.labels if isinstance(space, Choice) else ()
        decision = await player.ask(observation, turn, labels, "decision")
        return player.invalid.apply(decision, labels)

    def _pgm_decision(self, observation: Observation) -> bool:
        if self.player.options.code_quirks:
            return self.spec.quirk(observation)
        return _round(observation) >= 2

    def _system(self, observation: Observation) -> str:
        options = self.player.options
        return self.spec.system(self.player.game, observation, options.wording, options.code_quirks)


def _round(observation: Observation) -> int:
    value = getattr(observation, "round", 1)
    return value if isinstance(value, int) else 1


# -- Cost Sharing (§3.3) ---------------------------------------------------------------------------


def _cost_sharing_system(
    game: CostSharingGame, obs: Observation, wording: Wording, quirks: bool
) -> str:
    assert isinstance(obs, CostSharingObservation)
    me = seat_name(obs.player)
    return system_message(
        texts.render("airport_fee_global", wording, max_turns=game.max_turns),
        me,
        texts.render("airport_fee_role_desc_pgm", player=me, airline=obs.airline),
    )


def _cost_sharing_ended(obs: Observation) -> int:
    """A new round is open after a vote that did not agree; a fully voted round ends the game."""
    assert isinstance(obs, CostSharingObservation)
    if obs.votes and len(obs.votes[-1]) == N_SEATS:
        return 0
    return obs.round - 1


def _cost_sharing_deciding(obs: Observation) -> bool:
    assert isinstance(obs, CostSharingObservation)
    return obs.phase == PROPOSE


# -- the Prisoner's Dilemma (§3.4) and Public Good (§3.5) ------------------------------------------


def _dilemma_system(
    game: MagicDilemmaGame, obs: Observation, wording: Wording, quirks: bool
) -> str:
    cooperate, defect, one_defect, two_defect = game.payoff_values
    me = seat_name(obs.player)
    role = texts.text("prisoner_role_desc_pgm")
    if not quirks:  # the code's text names "Player 1" whatever the seat
        role = role.replace("You play as Player 1.", f"You play as {me}.")
    return system_message(
        texts.render(
            "prisoner_global", wording, cooperate=cooperate, defect=defect,
            one_defect=one_defect, two_defect=two_defect,
        ),
        me,
        role,
    )  # fmt: skip


def _public_good_system(
    game: PublicGoodGame, obs: Observation, wording: Wording, quirks: bool
) -> str:
    me = seat_name(obs.player)
    return system_message(
        texts.render(
            "public_good_global", wording, game_round=game.rounds, multiplier=game.multiplier
        ),
        me,
        texts.render("public_good_role_desc_pgm", player_name=me),
    )


def _repeated_ended(obs: Observation) -> int:
    """The round just played, while rounds remain (no analysis after the last, as in the code)."""
    played = _round(obs) - 1
    rounds = getattr(obs, "rounds", 0)
    return played if isinstance(rounds, int) and played < rounds else 0


def _always(obs: Observation) -> bool:
    return True


def _quirk_seats_two_three(obs: Observation) -> bool:
    """The code: seats 2 and 3 get the PGM Decision Prompt from round 1, seat 1 from round 2."""
    return obs.player != 0 or _round(obs) >= 2


def _quirk_seat_one(obs: Observation) -> bool:
    """The code (Cost Sharing): only seat 1 gets the PGM Decision Prompt, from round 2."""
    return obs.player == 0 and _round(obs) >= 2


COST_SHARING = TheoryGame(
    "airport_fee",
    _cost_sharing_system,
    _cost_sharing_ended,
    _cost_sharing_deciding,
    None,
    _quirk_seat_one,
)
DILEMMA = TheoryGame(
    "prisoner", _dilemma_system, _repeated_ended, _always, None, _quirk_seats_two_three
)
PUBLIC_GOOD = TheoryGame(
    "public_good",
    _public_good_system,
    _repeated_ended,
    _always,
    texts.text("public_good_decision_command"),
    _quirk_seats_two_three,
)

register(CostSharingGame, lambda player: TheoryPipeline(player, COST_SHARING))
register(MagicDilemmaGame, lambda player: TheoryPipeline(player, DILEMMA))
register(PublicGoodGame, lambda player: TheoryPipeline(player, PUBLIC_GOOD))
