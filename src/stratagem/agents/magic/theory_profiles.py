"""The MAgIC chat profiles of the three game-theory games (seed-004 §3.3-§3.5, §8): Cost
Sharing, the three-player Prisoner's Dilemma and Public Good.

Requests follow the study's code: a Cost Sharing proposal is asked with the proposal template
(`negotiate_template`) and a vote by the moderator's own call (in the chat); a PD move with the
normal command (`You must reply with "Cooperate" or "Defect"`); Public Good sends none, so the
default "Now you speak" applies (§7.3).
"""

from __future__ import annotations

from stratagem.agents.magic import texts
from stratagem.agents.magic.chat import seat_name, system_message
from stratagem.agents.magic.profiles import MagicProfile, Turn, register, vote_choices
from stratagem.agents.magic.texts import Wording
from stratagem.agents.magic.vote_parse import (
    ContributionParser,
    CooperateDefectParser,
    VoteParser,
)
from stratagem.agents.parsing import Parser
from stratagem.agents.replies import reply_format
from stratagem.games.base import Observation
from stratagem.games.magic.cost_sharing import CostSharingGame
from stratagem.games.magic.magic_dilemma import MagicDilemmaGame
from stratagem.games.magic.public_good import PublicGoodGame
from stratagem.games.spaces import Choice, IntegerRange, Shares

COST_SHARING_MAX_TOKENS = 256
PD_MAX_TOKENS = 128
PG_MAX_TOKENS = 40
"""seed-004 §2: max_tokens per game."""


def _cost_sharing_system(game: CostSharingGame, observation: Observation, wording: Wording) -> str:
    me = seat_name(observation.player)
    return system_message(
        texts.render("airport_fee_global", wording, max_turns=game.max_turns),
        me,
        texts.text(f"cost_sharing_role_desc_player{observation.player + 1}"),
    )


def _cost_sharing_turn(
    game: CostSharingGame, observation: Observation, wording: Wording, code_compat: bool
) -> Turn:
    space = observation.legal
    parser: Parser
    if isinstance(space, Shares):
        request: str | None = texts.text("airport_fee_negotiate")
        proposal = reply_format(space, "proposal")
        parser, constraint = proposal, proposal.constraint
    else:
        assert isinstance(space, Choice)
        request = None  # the moderator's vote call is the last message of the chat
        parser = VoteParser(code_compat=code_compat, rule="cost_sharing")
        constraint = vote_choices(observation, "I vote for {}'s proposal")
    system = _cost_sharing_system(game, observation, wording)
    return Turn(system, request, COST_SHARING_MAX_TOKENS, parser, constraint)


def _dilemma_system(game: MagicDilemmaGame, observation: Observation, wording: Wording) -> str:
    cooperate, defect, one_defect, two_defect = game.payoff_values
    example = "Defect" if observation.player == 0 else "Cooperate"  # §8.2
    me = seat_name(observation.player)
    return system_message(
        texts.render(
            "prisoner_global", wording, cooperate=cooperate, defect=defect,
            one_defect=one_defect, two_defect=two_defect,
        ),
        me,
        texts.render("prisoner_role_desc", player=me, example=example),
    )  # fmt: skip


def _dilemma_turn(
    game: MagicDilemmaGame, observation: Observation, wording: Wording, code_compat: bool
) -> Turn:
    return Turn(
        _dilemma_system(game, observation, wording),
        texts.text("prisoner_decision_command"),
        PD_MAX_TOKENS,
        CooperateDefectParser(code_compat=code_compat),
        {"choices": ("Cooperate", "Defect")},
    )


def _public_good_system(game: PublicGoodGame, observation: Observation, wording: Wording) -> str:
    return system_message(
        texts.render(
            "public_good_global", wording, game_round=game.rounds, multiplier=game.multiplier
        ),
        seat_name(observation.player),
        texts.text(f"public_good_role_desc_player{min(observation.player, 2) + 1}"),
    )


def _public_good_turn(
    game: PublicGoodGame, observation: Observation, wording: Wording, code_compat: bool
) -> Turn:
    space = observation.legal
    assert isinstance(space, IntegerRange)
    return Turn(
        _public_good_system(game, observation, wording),
        None,
        PG_MAX_TOKENS,
        ContributionParser(space.low, space.high, code_compat=code_compat),
        {"choices": tuple(f"I contribute {n}" for n in range(space.low, space.high + 1))},
    )


register(CostSharingGame, MagicProfile("cost-sharing", _cost_sharing_turn, _cost_sharing_system))
register(MagicDilemmaGame, MagicProfile("npd3", _dilemma_turn, _dilemma_system))
register(PublicGoodGame, MagicProfile("public-good", _public_good_turn, _public_good_system))
