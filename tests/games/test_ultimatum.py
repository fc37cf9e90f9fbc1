"""The Ultimatum game: turn order, structured actions, what each player sees, payoffs."""

from __future__ import annotations

import pytest

from stratagem.errors import StratagemError
from stratagem.games import (
    Choice,
    IllegalAction,
    IntegerRange,
    UltimatumGame,
    UltimatumObservation,
    UltimatumState,
)


def test_turn_order_and_action_spaces() -> None:
    state = UltimatumGame(pie=10).initial_state()
    assert state.to_act() == (0,)
    assert state.legal(0) == IntegerRange(0, 10)
    state, events = state.apply({0: 3})
    assert [e.kind for e in events] == ["offer"]
    assert events[0].data == {"offer": 3, "proposer_keeps": 7}
    assert state.to_act() == (1,)
    assert state.legal(1) == Choice(("accept", "reject"))
    assert not state.is_terminal()
    assert state.payoffs() == (0.0, 0.0)


@pytest.mark.parametrize(
    ("offer", "expected"), [(0, (10.0, 0.0)), (4, (6.0, 4.0)), (10, (0.0, 10.0))]
)
def test_accept_splits_as_offered(offer: int, expected: tuple[float, float]) -> None:
    state, _ = UltimatumGame(pie=10).initial_state().apply({0: offer})
    state, events = state.apply({1: "accept"})
    assert state.is_terminal()
    assert state.to_act() == ()
    assert state.payoffs() == expected
    assert events[0].kind == "response"
    assert events[0].data == {"response": "accept", "payoffs": list(expected)}


def test_reject_leaves_both_with_nothing() -> None:
    state, _ = UltimatumGame(pie=10).initial_state().apply({0: 5})
    state, _ = state.apply({1: "reject"})
    assert state.is_terminal()
    assert state.payoffs() == (0.0, 0.0)


def test_observations() -> None:
    game = UltimatumGame(pie=20)
    start = game.initial_state()
    proposer = start.observation(0)
    assert isinstance(proposer, UltimatumObservation)
    assert (proposer.role, proposer.pie, proposer.offer, proposer.response) == (
        "proposer",
        20,
        None,
        None,
    )
    assert proposer.legal == IntegerRange(0, 20)
    assert start.observation(1).legal is None  # the responder waits
    offered, _ = start.apply({0: 8})
    responder = offered.observation(1)
    assert responder.role == "responder"
    assert responder.offer == 8  # the responder sees the offer
    assert responder.legal == Choice(("accept", "reject"))
    assert [e.kind for e in responder.events] == ["offer"]
    assert offered.observation(0).legal is None
    done, _ = offered.apply({1: "accept"})
    after = done.observation(0)
    assert after.response == "accept"  # the proposer sees the response after the fact
    assert [e.kind for e in after.events] == ["offer", "response"]
    assert after.legal is None


def test_illegal_actions() -> None:
    state = UltimatumGame(pie=10).initial_state()
    for bad in (11, -1, "5", True, 2.5):
        with pytest.raises(IllegalAction):
            state.apply({0: bad})  # type: ignore[dict-item]
    with pytest.raises(IllegalAction, match="expected actions from players \\[0\\]"):
        state.apply({1: "accept"})
    with pytest.raises(IllegalAction, match="does not act now"):
        state.legal(1)
    offered, _ = state.apply({0: 5})
    with pytest.raises(IllegalAction, match="expected one of"):
        offered.apply({1: "maybe"})
    done, _ = offered.apply({1: "reject"})
    with pytest.raises(IllegalAction, match="the game is over"):
        done.apply({})
    with pytest.raises(IllegalAction):
        done.apply({1: "accept"})


def test_states_are_immutable_and_replayable() -> None:
    start = UltimatumGame(pie=10).initial_state()
    a, _ = start.apply({0: 5})
    b, _ = start.apply({0: 5})
    assert a == b
    assert start.offer is None  # apply did not change the state it was called on
    with pytest.raises(AttributeError):
        a.offer = 3  # type: ignore[misc]
    assert isinstance(a, UltimatumState)


@pytest.mark.parametrize("pie", [0, -3, 2.5, True, "10"])
def test_pie_validation(pie: object) -> None:
    with pytest.raises(StratagemError, match="pie must be an integer from 1"):
        UltimatumGame(pie=pie)  # type: ignore[arg-type]


def test_pie_of_one_and_unknown_player() -> None:
    state = UltimatumGame(pie=1).initial_state()
    assert state.legal(0) == IntegerRange(0, 1)
    with pytest.raises(StratagemError, match="players 0 and 1"):
        state.observation(2)
