"""Issue 37 item 4: a seat whose moves are a fixed finite set (a matrix game's labels,
OpenSpiel's action ids, the ultimatum's offers and answers) acts by number, and its mask is
right: at every decision of a play, every masked-out action is refused by the engine with
nothing changed, and every masked-in one is accepted (by an environment replayed to the same
point). Both APIs, and PettingZoo's `seed_test` on the AEC one."""

from __future__ import annotations

import warnings
from importlib.util import find_spec
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import seed_test
from support.masks import NEVER, check_aec_masks, check_parallel_masks

import stratagem
from stratagem.api import parallel_env

OPENSPIEL = pytest.mark.skipif(find_spec("pyspiel") is None, reason="OpenSpiel not installed")


@pytest.mark.parametrize(
    ("game", "options", "seed"),
    [
        ("dilemma", {"rounds": 3}, 0),
        ("dilemma", {"rounds": 2, "bots": {1: "tit-for-tat"}}, 0),
        ("ultimatum", {}, 1),
        ("public-good/0", {"rounds": 1}, 2),
        pytest.param("openspiel:kuhn_poker", {}, 3, marks=OPENSPIEL),
        pytest.param("openspiel:tic_tac_toe", {}, 4, marks=OPENSPIEL),
        pytest.param("openspiel:goofspiel(num_cards=3)", {}, 5, marks=OPENSPIEL),
    ],
)
def test_every_aec_mask_is_what_the_engine_accepts(
    game: str, options: dict[str, Any], seed: int
) -> None:
    assert check_aec_masks(lambda: stratagem.env(game, max_illegal=NEVER, **options), seed) >= 2


@pytest.mark.parametrize(
    ("game", "options", "steps"),
    [
        ("dilemma", {"rounds": 3}, 3),
        ("npd3/0", {}, 2),
        ("public-good/0", {"rounds": 2}, 2),
        pytest.param("openspiel:matrix_pd", {}, 1, marks=OPENSPIEL),
        pytest.param("openspiel:goofspiel(num_cards=4)", {}, 3, marks=OPENSPIEL),
    ],
)
def test_every_parallel_mask_is_what_the_engine_accepts(
    game: str, options: dict[str, Any], steps: int
) -> None:
    make = lambda: parallel_env(game, max_illegal=NEVER, **options)  # noqa: E731
    assert check_parallel_masks(make, 0, steps) == steps


@OPENSPIEL
def test_openspiel_actions_are_numbered_by_their_action_ids() -> None:
    """Chess names a move by the position (its notation), so its Discrete action is
    OpenSpiel's action id, the mask the ids legal now; tic-tac-toe's ids are its squares."""
    env = stratagem.env("openspiel:chess")
    env.reset(seed=0)
    white = env.agent_selection  # OpenSpiel's player 1
    game = env.game.spiel_game  # type: ignore[attr-defined]
    assert env.action_space(white).n == game.num_distinct_actions() == 4674
    raw = env.table.state.raw  # type: ignore[attr-defined]
    mask = env.observe(white)["action_mask"]
    assert np.flatnonzero(mask).tolist() == sorted(raw.legal_actions())  # the 20 openings
    assert not env.observe("player_0")["action_mask"].any()  # black waits
    e4 = next(a for a in raw.legal_actions() if raw.action_to_string(1, a) == "e4")
    env.step(e4)
    assert env.table.state.raw.history() == [e4]  # type: ignore[attr-defined]
    assert env.agent_selection == "player_0" and env.observe("player_0")["action_mask"].sum() == 20
    board = stratagem.env("openspiel:tic_tac_toe")
    board.reset(seed=0)
    board.step(4)  # the centre
    assert board.table.numbered(1) == {i: f"o({i // 3},{i % 3})" for i in range(9) if i != 4}


@pytest.mark.parametrize(
    ("game", "options"),
    [
        ("dilemma", {"rounds": 5}),
        ("dilemma", {"rounds": 3, "bots": {0: "grim"}}),
        ("ultimatum", {}),
        ("chameleon/0", {}),
        ("cost-sharing/0", {}),
        pytest.param("openspiel:kuhn_poker", {}, marks=OPENSPIEL),
        pytest.param("openspiel:tic_tac_toe", {}, marks=OPENSPIEL),
        pytest.param("openspiel:leduc_poker", {}, marks=OPENSPIEL),
    ],
)
def test_pettingzoos_seed_test_passes(game: str, options: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice for numeric observations, not failures
        seed_test(lambda: stratagem.env(game, **options), num_cycles=50)


@OPENSPIEL
@pytest.mark.parametrize("game", ["openspiel:kuhn_poker", "openspiel:tic_tac_toe"])
def test_an_openspiel_game_passes_pettingzoos_api_test_with_masks(game: str) -> None:
    from pettingzoo.test import api_test

    env = stratagem.env(game)
    assert "action_mask" in env.observation_space("player_0").spaces
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=200)
