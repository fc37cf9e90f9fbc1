"""Replaying recorded moves through the engine (`games.replay`, issue 23 item 6): the same steps,
events and payoffs as the game played them, the game's own rule for a missing move, and each
move the engine would not take named by its index."""

from __future__ import annotations

import pytest

from stratagem.games.catalog import get_game
from stratagem.games.magic.public_good import magic_public_good
from stratagem.games.replay import ReplayError, replay
from stratagem.games.ultimatum import UltimatumGame


def test_replay_gives_the_steps_events_and_payoffs_of_play() -> None:
    game = UltimatumGame()
    state = game.initial_state(3)
    state, offered = state.apply({0: 30})
    state, answered = state.apply({1: "accept"})
    played = replay(game, 3, [(0, 30), (1, "accept")])
    assert [s.events for s in played.steps] == [tuple(offered), tuple(answered)]
    assert [list(s.moves) for s in played.steps] == [[0], [1]]
    assert played.state.is_terminal() and played.state.payoffs() == state.payoffs()


def test_a_missing_move_is_played_by_the_games_rule() -> None:
    played = replay(UltimatumGame(), 0, [(0, None)])  # no valid offer: no deal (its rule)
    assert played.state.is_terminal() and played.state.payoffs() == (0.0, 0.0)


def test_simultaneous_moves_form_one_step_with_the_loops_round() -> None:
    game = magic_public_good()
    moves = [(0, 5), (1, None), (2, 0)]
    played = replay(game, 0, moves)
    (step,) = played.steps
    assert list(step.moves) == [0, 1, 2] and step.moment == 1
    expected, _ = game.initial_state(0).forfeit({0: 5, 1: None, 2: 0})
    assert played.state.payoffs() == expected.payoffs()


@pytest.mark.parametrize(
    ("moves", "index", "why"),
    [
        ([(1, "accept")], 0, "player 1 moves where the engine asks players [0]"),
        ([(0, 101)], 0, "the engine refuses the move: illegal action 101: expected 0..100"),
        ([(0, 30), (1, "maybe")], 1, "the engine refuses the move: illegal action 'maybe'"),
        ([(0, 30), (1, "reject"), (0, 1)], 2, "the game is already over"),
    ],
)
def test_a_move_the_engine_would_not_take_is_named(
    moves: list[tuple[int, object]], index: int, why: str
) -> None:
    with pytest.raises(ReplayError) as info:
        replay(UltimatumGame(), 0, moves)  # type: ignore[arg-type]
    assert info.value.move == index and info.value.why.startswith(why)


def test_moves_that_stop_inside_a_step_are_refused() -> None:
    with pytest.raises(ReplayError) as info:
        replay(get_game("npd3"), 0, [(0, "cooperate"), (1, "defect")])
    assert info.value.move is None
    assert info.value.why == "the moves end in a step whose players [2] do not move"
