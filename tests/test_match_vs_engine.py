"""The fast match loop and the generic game engine must agree move for move."""

from __future__ import annotations

import random

from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.strategies.match import play_match
from stratagem.strategies.registry import get_strategy

STAG_HUNT = NormalFormGame.symmetric("sh", ("stag", "hare"), [[6, 1], [4, 2]])


def test_play_match_equals_repeated_game_engine() -> None:
    names = ["TitForTat", "WinStayLoseShift", "Random(0.3)", "GrimTrigger2", "Alternator"]
    for a_name in names:
        for b_name in names:
            fast = play_match(
                get_strategy(a_name), get_strategy(b_name), STAG_HUNT, 30, random.Random(5)
            )
            # Replay the same strategies through the engine's states and observations.
            a, b = get_strategy(a_name), get_strategy(b_name)
            a.reset(STAG_HUNT, 0)
            b.reset(STAG_HUNT, 1)
            rng = random.Random(5)
            state = RepeatedGame(STAG_HUNT, 30).initial_state()
            while not state.is_terminal():
                obs = state.observation(0)
                own = [r.actions[0] for r in obs.history]
                other = [r.actions[1] for r in obs.history]
                move_a = a.act(own, other, rng)
                move_b = b.act(other, own, rng)
                labels = STAG_HUNT.labels[0]
                state, _ = state.apply({0: labels[move_a], 1: labels[move_b]})
            assert tuple(r.actions[0] for r in state.history) == fast.actions[0]
            assert tuple(r.actions[1] for r in state.history) == fast.actions[1]
            assert state.payoffs() == fast.scores
