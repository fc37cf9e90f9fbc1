"""Issue 37 item 4: a plugin's game plays by number in PettingZoo where it declares its moves a
fixed set (`Game.moves`), through the plugin door (`cards:<game>`): PettingZoo's `api_test` and
`seed_test` on the AEC environment, `parallel_api_test` and `parallel_seed_test` on the parallel
one, masks that are what the engine accepts, and `testing.check_moves` for the declaration."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from support.masks import NEVER, check_aec_masks, check_parallel_masks
from support.plugin_files import named_plugin

import stratagem
from stratagem import testing
from stratagem.api import parallel_env

PLUGIN = """from stratagem import register

from support.take_away import NumberedHighCard, TakeAway

register.game("take-away", TakeAway, source="tests/test_pettingzoo_plugin.py")
register.game("high-card", NumberedHighCard, source="tests/test_pettingzoo_plugin.py")
"""


@pytest.fixture
def cards(tmp_path: Path) -> Iterator[None]:
    """The plugin `cards`, found as `--plugin FILE` finds one, for the test's length."""
    (tmp_path / "cards.py").write_text(PLUGIN, encoding="utf-8")
    with named_plugin(tmp_path / "cards.py"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's advice for numeric observations
        yield


@pytest.mark.usefixtures("cards")
@pytest.mark.parametrize("game", ["cards:take-away", "cards:high-card"])
def test_a_plugins_game_passes_pettingzoos_api_and_seed_tests(game: str) -> None:
    env = stratagem.env(game)
    assert env.action_space("player_0").n == len(env.game.moves(0))  # type: ignore[arg-type]
    api_test(env, num_cycles=200)
    seed_test(lambda: stratagem.env(game), num_cycles=50)


@pytest.mark.usefixtures("cards")
def test_a_plugins_simultaneous_game_passes_the_parallel_tests() -> None:
    env = parallel_env("cards:high-card")
    parallel_api_test(env, num_cycles=200)
    parallel_seed_test(lambda: parallel_env("cards:high-card"), num_cycles=50)
    assert check_parallel_masks(lambda: parallel_env("cards:high-card", max_illegal=NEVER), 0, 1)


@pytest.mark.usefixtures("cards")
def test_a_plugins_masks_follow_its_legal_moves() -> None:
    """Take Away's last stones: `take 3` is masked out once two are left."""
    env = stratagem.env("cards:take-away", pile=2)
    env.reset(seed=0)
    assert env.observe("player_0")["action_mask"].tolist() == [1, 1, 0]
    env.step(2)
    assert "masked out now (legal: [0, 1])" in env.infos["player_0"]["illegal"]
    for seed in range(3):
        assert check_aec_masks(lambda: stratagem.env("cards:take-away", max_illegal=NEVER), seed)


@pytest.mark.usefixtures("cards")
def test_check_moves_holds_a_declaration_to_the_games_spaces() -> None:
    testing.check_moves("cards:take-away")
    testing.check_moves("cards:high-card")
    testing.check_game("cards:take-away", seeds=(0,))  # check_game runs it too
    with pytest.raises(AssertionError) as caught:
        testing.check_moves("cards:take-away", wrong=True)
    assert str(caught.value) == (
        "cards:take-away, seed 0, step 0, seat 0: legal moves ['take 3'] have no number in the "
        "game's moves, so a seat acting by number cannot make them"
    )
    with pytest.raises(AssertionError, match="legal moves"):
        testing.check_game("cards:take-away", seeds=(0,), wrong=True)
    with pytest.raises(AssertionError) as caught:
        testing.check_moves("cards:take-away", pile=2, loose=True)
    assert str(caught.value) == (
        "cards:take-away, seed 0, step 0, seat 0: move 2 ('take 3') is numbered legal, yet its "
        "space refuses it"
    )
