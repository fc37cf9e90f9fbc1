"""A repeated-game strategy in a game under a cooperation mechanism: its stage moves, and the
documented defaults at the mechanism's own decisions."""

from __future__ import annotations

import random

import pytest

from stratagem.errors import StratagemError
from stratagem.games.base import State
from stratagem.games.catalog import get_game
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.strategies.game_bots import GameBot
from stratagem.strategies.mechanism_bot import MechanismBot
from stratagem.strategies.registry import get_game_bot, get_strategy

C, D = "cooperate", "defect"


def bot(spec: str, game: str, seat: int = 1, **options: object) -> GameBot:
    found = get_game_bot(spec, get_game(game, **options))
    assert isinstance(found, MechanismBot)
    found.check(get_game(game, **options), seat)
    return found


def act(b: GameBot, state: State, seat: int) -> str:
    return str(b.act(state.observation(seat), random.Random(0)))


def test_a_strategy_is_a_mechanism_bot_only_in_a_mechanism_game() -> None:
    assert get_game_bot("TitForTat") is None
    assert get_game_bot("TitForTat", RepeatedGame(get_game("dilemma"), 3)) is None  # type: ignore[arg-type]
    assert bot("TFT", "contracting/sh").label == "TitForTat"
    assert bot("axl:Grudger", "mediation").label.startswith("axl:Grudger")
    with pytest.raises(StratagemError, match="unknown strategy 'Nobody'"):
        get_game_bot("Nobody", get_game("mediation"))
    with pytest.raises(StratagemError, match="plays repeated matrix games, not 'ultimatum'"):
        MechanismBot(lambda: get_strategy("TitForTat")).check(get_game("ultimatum"), 0)
    with pytest.raises(StratagemError):  # a 2-action strategy refuses rock-paper-scissors
        bot("TitForTat", "disarmament/eq1")


def test_its_defaults_propose_and_accept_the_cooperative_contract_and_keep_all() -> None:
    for stage, best in (("dilemma", "cooperate/cooperate"), ("sh", "stag/stag")):
        state = get_game("contracting", stage=stage, proposer=1).initial_state(0)
        assert act(bot("AlwaysDefect", f"contracting/{stage}"), state, 1) == best
    state = get_game("contracting", proposer=0).initial_state(0)
    responder = bot("AlwaysDefect", "contracting/dilemma")
    assert act(responder, state.apply({0: "cooperate/cooperate"})[0], 1) == "accept"
    assert act(responder, state.apply({0: "cooperate/defect"})[0], 1) == "reject"
    state = get_game("disarmament").initial_state(0)
    assert act(bot("AlwaysCooperate", "disarmament"), state, 1) == "keep all"


def test_a_signed_contract_does_not_change_its_moves() -> None:
    state = get_game("contracting", proposer=0).initial_state(0)
    state = state.apply({0: "cooperate/cooperate"})[0].apply({1: "accept"})[0]
    assert act(bot("AlwaysDefect", "contracting"), state, 1) == D


def test_under_mediation_it_plays_its_strategy_not_the_recommendation() -> None:
    state = get_game("mediation").initial_state(0)
    assert act(bot("AlwaysDefect", "mediation"), state, 1) == D
    tft = bot("TitForTat", "mediation")
    state = state.apply({0: D, 1: C})[0]
    assert act(tft, state, 1) == D  # answers seat 0's defection, recommended cooperation or not


def test_under_reputation_it_reciprocates_its_partners_record() -> None:
    """TitForTat plays what its current partner played last, against whomever."""
    game = get_game("reputation", rounds=3, members=2)
    state = game.initial_state(0)
    tft = bot("TitForTat", "reputation", members=2, rounds=3)
    moves = {"A1": C, "A2": D}
    for _ in range(2):  # round 1: A1 cooperates, A2 defects
        member = state.observation(0).member
        state = state.apply({0: moves[member], 1: act(tft, state, 1)})[0]
    for _ in range(2):  # round 2: each B member meets the other A member
        observation = state.observation(1)
        assert act(tft, state, 1) == moves[observation.partner]
        state = state.apply({0: C, 1: C})[0]
