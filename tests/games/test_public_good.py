"""The seed-004 §3.5 Public Good game: budget, public contributions, final payout."""

from __future__ import annotations

import pytest

from stratagem.errors import StratagemError
from stratagem.games import (
    IllegalAction,
    IntegerRange,
    PublicGoodGame,
    PublicGoodObservation,
    PublicGoodState,
    play,
)


def run(game: PublicGoodGame, rounds: list[tuple[int, ...]]) -> PublicGoodState:
    state = game.initial_state()
    for contributions in rounds:
        state, _ = state.apply(dict(enumerate(contributions)))
    return state


def test_defaults_follow_seed004_setting_0() -> None:
    game = PublicGoodGame()
    assert (game.n_players, game.endowment, game.rounds, game.multiplier) == (3, 100, 5, 3.5)
    assert game.enforce_budget
    assert game.name == "public-good"


def test_final_score_is_remaining_plus_equal_share() -> None:
    game = PublicGoodGame(multiplier=1.5)
    state = run(game, [(10, 0, 20), (10, 0, 20), (0, 0, 20), (0, 0, 20), (0, 0, 20)])
    assert state.is_terminal()
    pool = 20 + 0 + 100
    share = 1.5 * pool / 3
    assert state.payoffs() == pytest.approx((80 + share, 100 + share, 0 + share))


def test_payoffs_before_the_end_are_the_kept_points() -> None:
    state = run(PublicGoodGame(), [(10, 20, 30)])
    assert not state.is_terminal()
    assert state.payoffs() == (90.0, 80.0, 70.0)


def test_everyone_contributing_all_gets_the_multiplied_endowment() -> None:
    game = PublicGoodGame(rounds=1)
    state = run(game, [(100, 100, 100)])
    assert state.payoffs() == pytest.approx((350.0, 350.0, 350.0))


def test_budget_enforced_by_default() -> None:
    game = PublicGoodGame(rounds=3)
    state = run(game, [(60, 0, 0)])
    assert state.legal(0) == IntegerRange(0, 40)
    with pytest.raises(IllegalAction, match=r"expected 0\.\.40"):
        state.apply({0: 41, 1: 0, 2: 0})
    state, _ = state.apply({0: 40, 1: 0, 2: 0})
    assert state.legal(0) == IntegerRange(0, 0)  # nothing left: only 0 is legal


def test_budget_not_enforced_reproduces_the_original() -> None:
    # seed-004 §3.5: the original did not enforce the budget, so scores can go negative.
    game = PublicGoodGame(rounds=2, multiplier=1.0, enforce_budget=False)
    state = run(game, [(80, 0, 0)])
    assert state.legal(0) == IntegerRange(0, 100)
    state, _ = state.apply({0: 80, 1: 0, 2: 0})
    assert state.observation(0).remaining == -60
    assert state.payoffs()[0] == pytest.approx(-60 + 160 / 3)


def test_contributions_are_public_after_each_round() -> None:
    game = PublicGoodGame(rounds=2)
    start = game.initial_state()
    assert start.to_act() == (0, 1, 2)  # simultaneous
    state, events = start.apply({0: 1, 1: 2, 2: 3})
    assert [e.kind for e in events] == ["contributions"]
    assert events[0].visible_to is None
    assert events[0].data == {"round": 1, "contributions": [1, 2, 3]}
    for p in range(3):
        obs = state.observation(p)
        assert isinstance(obs, PublicGoodObservation)
        assert obs.history == ((1, 2, 3),)
        assert obs.round == 2
        assert obs.pool == 6
        assert obs.remaining == 100 - (p + 1)
        assert obs.legal == IntegerRange(0, 100 - (p + 1))
    state, events = state.apply({0: 0, 1: 0, 2: 0})
    assert [e.kind for e in events] == ["contributions", "payout"]
    assert events[1].data["pool"] == 6
    assert events[1].data["share"] == pytest.approx(3.5 * 6 / 3)
    assert state.observation(0).legal is None
    assert [e.kind for e in state.observation(1).events] == [
        "contributions",
        "contributions",
        "payout",
    ]


def test_terminal_refuses_actions_and_illegal_amounts() -> None:
    state = run(PublicGoodGame(rounds=1), [(0, 0, 0)])
    with pytest.raises(IllegalAction, match="the game is over"):
        state.apply({0: 0, 1: 0, 2: 0})
    start = PublicGoodGame().initial_state()
    with pytest.raises(IllegalAction):
        start.apply({0: -1, 1: 0, 2: 0})
    with pytest.raises(IllegalAction):
        start.apply({0: "5", 1: 0, 2: 0})
    with pytest.raises(IllegalAction, match="expected actions from players"):
        start.apply({0: 1, 1: 0})


def test_n_players_and_play() -> None:
    game = PublicGoodGame(n_players=5, endowment=10, rounds=2, multiplier=2)
    final = play(game, lambda obs: 1)
    assert final.payoffs() == pytest.approx((8 + 2 * 10 / 5,) * 5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_players": 1}, "n_players must be an integer from 2"),
        ({"endowment": 0}, "endowment must be an integer from 1"),
        ({"rounds": 0}, "rounds must be an integer from 1"),
        ({"rounds": 2.0}, "rounds must be an integer from 1"),
        ({"multiplier": -1}, "multiplier must be a finite number >= 0"),
        ({"multiplier": float("nan")}, "multiplier must be a finite number >= 0"),
        ({"multiplier": "2"}, "multiplier must be a finite number >= 0"),
        ({"enforce_budget": "no"}, "enforce_budget must be true or false"),
    ],
)
def test_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(StratagemError, match=message):
        PublicGoodGame(**kwargs)  # type: ignore[arg-type]
