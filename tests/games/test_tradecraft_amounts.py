"""TradeCraft's amounts (issue 24 items 12, 13): one parser for every amount the engine reads,
proposal amounts that are integral numbers read as whole counts (seed-002 §2.6: "each listed
amount > 0"), and the `fractional_amounts` option, off by default, under which the engine
trades fractions and floors them at the end of the craft phase (§2.3)."""

from __future__ import annotations

import json
from fractions import Fraction as F
from typing import Any

import pytest

from stratagem.errors import StratagemError
from stratagem.games.catalog import check_game_options, get_game
from stratagem.games.replay import replay
from stratagem.games.spaces import IllegalAction
from stratagem.games.tradecraft.game import CRAFT, PROPOSAL, TradecraftGame, TradecraftState
from stratagem.games.tradecraft.rules import MAX_AMOUNT, to_fraction

M = "minecraft:"


def offer(amount: Any, item: str = "coal") -> str:
    return json.dumps({"offer": {item: amount}, "request": {}})


def step(state: TradecraftState, actions: dict[int, str]) -> TradecraftState:
    nxt, _ = state.apply(actions)
    assert isinstance(nxt, TradecraftState)
    return nxt


@pytest.mark.parametrize("written", [1.0, "1.0", "1", " 1 ", "2/2", 1, "١"])
def test_an_integral_proposal_amount_is_a_whole_count(written: Any) -> None:
    state = TradecraftGame().initial_state()  # instance 0: seat 0 holds 1 coal
    space = state.legal(0)
    assert (
        space.validate(offer(written)) == '{"message":"","offer":{"minecraft:coal":1},"request":{}}'
    )
    traded = step(step(state, {0: offer(written)}), {1: "accept"})
    assert traded.hands[1][M + "coal"] == 1 and isinstance(traded.hands[1][M + "coal"], int)


@pytest.mark.parametrize("written", [1.5, "1/2", "0.5"])
def test_fractional_proposal_amounts_are_refused_by_default(written: Any) -> None:
    state = TradecraftGame().initial_state()
    with pytest.raises(IllegalAction, match=r"not a whole number .*fractional_amounts"):
        state.apply({0: offer(written)})


@pytest.mark.parametrize("bad", ["²", "Infinity", "1e3", True, None, [1], 0, "-1", 10**40])
def test_unreadable_proposal_amounts_are_refused_not_raised(bad: Any) -> None:
    # "²".isdigit() holds, yet int("²") raises: the old reading crashed on it.
    state = TradecraftGame().initial_state()
    text = offer(bad) if bad != "Infinity" else '{"offer": {"coal": Infinity}}'
    with pytest.raises(IllegalAction, match="illegal offer: minecraft:coal count"):
        state.apply({0: text})


def test_fractional_amounts_trade_fractions_that_the_craft_phase_floors() -> None:
    game = TradecraftGame(fractional_amounts=True)
    state = game.initial_state()
    space = state.legal(0)
    text = json.dumps({"offer": {"coal": "1/2"}, "request": {"raw_iron": 1.5}})
    assert space.validate(text) == (
        '{"message":"","offer":{"minecraft:coal":"1/2"},"request":{"minecraft:raw_iron":"3/2"}}'
    )
    proposed, events = state.apply({0: text})
    assert events[0].data["offer"] == {M + "coal": "1/2"}  # JSON-safe in the record
    after, events = proposed.apply({1: "accept"})
    assert isinstance(after, TradecraftState) and after.phase == CRAFT
    assert after.hands[0][M + "coal"] == F(1, 2) and after.hands[1][M + "coal"] == F(1, 2)
    assert after.hands[1][M + "raw_iron"] == F(7, 2)
    hands = next(e for e in events if e.kind == "hands").data["hands"]
    assert hands[0][M + "raw_iron"] == "3/2" and hands[1][M + "coal"] == "1/2"
    json.dumps([e.data for e in events])  # every event stays JSON
    # Seat 1 burns 1/8 of its 1/2 coal; both hands are floored at craft_done (§2.3).
    smelt = json.dumps([{"input": {"raw_iron": 1, "coal": "1/8"}, "output": {"iron_ingot": 1}}])
    end = step(after, {0: "[]", 1: smelt})
    assert end.phase == PROPOSAL
    assert end.hands[0][M + "raw_iron"] == 1 and M + "coal" not in end.hands[0]
    assert end.hands[1][M + "raw_iron"] == 2 and M + "coal" not in end.hands[1]
    assert all(isinstance(a, int) for h in end.hands for a in h.values())
    # The engine replays it (an imported record is checked this way).
    moves = [(0, text), (1, "accept"), (0, "[]"), (1, smelt)]
    assert replay(game, 0, moves).state.hands == end.hands


def test_the_option_reaches_the_game_through_the_catalog() -> None:
    game = get_game("tradecraft/0", fractional_amounts=True)
    assert isinstance(game, TradecraftGame) and game.fractional_amounts
    assert not TradecraftGame().fractional_amounts  # default as before: whole counts
    assert check_game_options("tradecraft", {"fractional_amounts": False}) == {}  # ids unchanged
    with pytest.raises(StratagemError, match="fractional_amounts must be true or false"):
        get_game("tradecraft", fractional_amounts="yes")


def test_one_parser_with_one_bound() -> None:
    # the agents' tool read at most 12 digits a part, the engine 30: one limit now
    assert to_fraction("0.1250000000000") == F(1, 8)  # 13 decimals
    assert to_fraction("1/" + "9" * 30) == F(1, 10**30 - 1)
    assert to_fraction(MAX_AMOUNT) == MAX_AMOUNT
    for bad in (float("inf"), float("nan"), MAX_AMOUNT + 1, F(1, MAX_AMOUNT + 1), "1" * 31, "²"):
        with pytest.raises(ValueError):
            to_fraction(bad)
