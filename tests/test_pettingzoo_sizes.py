"""Issue 33: `stratagem.env` refuses a game too large to build in one line, at once: the game's
own option bounds (`games/bounds.py`) and the size of a seat's discrete vocabulary
(`pettingzoo_spaces.MAX_VOCABULARY`), checked before the vocabulary is built."""

from __future__ import annotations

import time

import pytest

import stratagem
from stratagem.errors import StratagemError
from stratagem.experiments import pettingzoo_spaces


@pytest.mark.parametrize(
    ("game", "options", "message"),
    [
        # took 7.2 s and ~1 GB at reset; 10**9 would have been ~100 GB
        ("ultimatum", {"pie": 10**7},
         "ultimatum: pie must be an integer from 1 to 1,000,000, got 10000000"),
        # did not finish within 100 s
        ("public-good/0", {"n_players": 10**5},
         "public good: n_players must be an integer from 2 to 100, got 100000"),
        ("cost-sharing/0", {"max_turns": 10**12},
         "cost sharing: max_turns must be an integer from 1 to 10,000"),
        ("chameleon/0", {"max_chars": 10**12},
         "chameleon: max_chars must be an integer from 1 to 10,000"),
        # an AmountBound (a ValueError) escaped as a traceback
        ("tradecraft/0", {"fuel_per_craft": 10**40},
         "tradecraft: fuel_per_craft must be an amount from 0 to 1,000,000,"),
        ("tradecraft/0", {"fuel_per_craft": "1e9"},
         "tradecraft: fuel_per_craft: not an amount: '1e9'"),
        ("tradecraft/0", {"fuel_per_craft": "-1/8"},
         "tradecraft: fuel_per_craft must be >= 0, got '-1/8'"),
    ],
)  # fmt: skip
def test_an_oversized_game_option_is_one_line_at_once(
    game: str, options: dict[str, object], message: str
) -> None:
    started = time.monotonic()
    with pytest.raises(StratagemError) as caught:
        stratagem.env(game, **options)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert time.monotonic() - started < 2


def test_a_vocabulary_past_its_bound_is_refused_before_it_is_built() -> None:
    """A pie within the game's bound may still give a seat more moves than a Discrete space
    should hold: one line that says how to play it (as text), after building at most the
    bound's worth of moves."""
    pie = 2 * pettingzoo_spaces.MAX_VOCABULARY
    started = time.monotonic()
    with pytest.raises(StratagemError) as caught:
        stratagem.env("ultimatum", pie=pie)
    assert str(caught.value) == (
        "game 'ultimatum': player 0 may make more than 100,000 different moves, too many for a "
        "discrete action space (MAX_VOCABULARY); use actions='text'"
    )
    assert time.monotonic() - started < 2
    env = stratagem.env("ultimatum", pie=pie, actions="text")  # as text, it plays
    env.reset(seed=0)
    env.step(str(pie // 2))
    assert env.infos["player_0"] == {} or "illegal" not in str(env.infos["player_0"])


def test_the_vocabulary_bound_is_read_when_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ultimatum's default 103 moves (0..100, accept, reject) against a lowered bound."""
    monkeypatch.setattr(pettingzoo_spaces, "MAX_VOCABULARY", 102)
    with pytest.raises(StratagemError, match="more than 102 different moves"):
        stratagem.env("ultimatum")
    monkeypatch.setattr(pettingzoo_spaces, "MAX_VOCABULARY", 103)
    env = stratagem.env("ultimatum")
    assert env.action_space("player_0").n == 103
