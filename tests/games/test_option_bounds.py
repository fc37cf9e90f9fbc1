"""Issue 33: every integer option of every catalog game declares its bound where it is declared
(`games/bounds.py`), and a value beyond it is one line naming the game, the option and the range,
wherever the game is built: a catalog name, an experiment file's `game_options`, the class."""

from __future__ import annotations

import inspect
import time
import types
import typing
from typing import Any

import pytest

from stratagem.errors import StratagemError
from stratagem.games.catalog import GAMES, check_game_options, get_game


def _admits_int(hint: Any) -> bool:
    bare = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
    union = typing.get_origin(bare) in (typing.Union, types.UnionType)
    return int in (typing.get_args(bare) if union else (bare,))


def _int_options() -> list[tuple[str, str]]:
    """(game, option) of every catalog game's option whose annotation admits an integer."""
    out = []
    for name, entry in GAMES.items():
        function = entry.factory.__init__ if inspect.isclass(entry.factory) else entry.factory
        hints = typing.get_type_hints(function, include_extras=True)
        out += [(name, option) for option in entry.options() if _admits_int(hints[option])]
    return out


def _declared(game: str) -> dict[str, Any]:
    from stratagem.games.bounds import declared

    return declared(GAMES[game].factory)


def test_every_integer_option_of_every_catalog_game_declares_its_bound() -> None:
    """A `setting` is bounded by the settings file its entry names (`settings_data.setting`);
    every other integer option declares `Bounds` in its factory's signature."""
    found = _int_options()
    assert {("ultimatum", "pie"), ("public-good", "n_players"), ("cost-sharing", "max_turns"),
            ("chameleon", "max_chars"), ("undercover", "max_chars"), ("dilemma-talk", "max_chars"),
            ("tradecraft", "rounds"), ("npd3", "rounds")} <= set(found)  # fmt: skip
    unbounded = [
        f"{game}.{option}"
        for game, option in found
        if option not in _declared(game)
        and not (option == "setting" and GAMES[game].settings is not None)
    ]
    assert unbounded == []


@pytest.mark.parametrize(("game", "option"), _int_options())
def test_a_value_past_a_declared_bound_is_one_line_naming_it(game: str, option: str) -> None:
    if option == "setting":  # its file's size, checked by `settings_data`
        with pytest.raises(StratagemError, match=r"must be .*0\.\.") as caught:
            get_game(game, setting=10**9)
        assert "\n" not in str(caught.value)
        return
    bounds = _declared(game)[option]
    for value in (bounds.high + 1, bounds.low - 1, 10**40, True):
        with pytest.raises(StratagemError) as caught:
            get_game(game, **{option: value})
        message = str(caught.value)
        assert f"{option} must be" in message and f"{bounds.high:,}" in message, message
        assert "\n" not in message
    for value in (bounds.low, bounds.high):  # the bounds themselves are in range
        try:
            get_game(game, **{option: value})
        except StratagemError as exc:  # another rule (cost-sharing's step must divide a share)
            assert f"{option} must be" not in str(exc)


@pytest.mark.parametrize(
    ("game", "options", "message"),
    [
        ("ultimatum", {"pie": 10**7},
         "ultimatum: pie must be an integer from 1 to 1,000,000, got 10000000"),
        ("public-good", {"n_players": 10**5},
         "public good: n_players must be an integer from 2 to 100, got 100000"),
        ("public-good", {"endowment": 10**9},
         "public good: endowment must be an integer from 1 to 10,000, got 1000000000"),
        ("cost-sharing", {"max_turns": 10**9},
         "cost sharing: max_turns must be an integer from 1 to 10,000, got 1000000000"),
        ("chameleon", {"max_chars": 10**9},
         "chameleon: max_chars must be an integer from 1 to 10,000, got 1000000000"),
        ("undercover", {"max_chars": 10**9},
         "undercover: max_chars must be an integer from 1 to 10,000, got 1000000000"),
        ("dilemma-talk", {"max_chars": 10**9},
         "dilemma-talk: max_chars must be an integer from 1 to 10,000, got 1000000000"),
        ("dilemma-talk", {"max_chars": 0},
         "dilemma-talk: max_chars must be an integer from 1 to 10,000, got 0"),
    ],
)  # fmt: skip
def test_the_reported_sizes_are_refused_at_once(
    game: str, options: dict[str, int], message: str
) -> None:
    """What a colleague found (issue 33): each took seconds to minutes and gigabytes, or never
    finished; now an experiment file's `game_options` refuses it before anything is played."""
    started = time.monotonic()
    with pytest.raises(StratagemError) as caught:
        check_game_options(game, options)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert time.monotonic() - started < 1


def test_the_classes_check_their_bounds_too() -> None:
    """A game built in Python (a plugin, a notebook) is checked as a catalog name is."""
    from stratagem.games import PublicGoodGame, UltimatumGame

    with pytest.raises(StratagemError, match="pie must be an integer from 1 to 1,000,000"):
        UltimatumGame(pie=10**9)
    with pytest.raises(StratagemError, match="n_players must be an integer from 2 to 100"):
        PublicGoodGame(n_players=10**5)


def test_public_good_bounds_its_players_times_its_rounds() -> None:
    """Each observation holds every past contribution, so a game's work grows with the square
    of players x rounds: 100 players for 100 rounds took two minutes with no model at all."""
    from stratagem.games import PublicGoodGame

    assert PublicGoodGame(n_players=3, rounds=10_000).rounds == 10_000  # the grid's bound
    assert PublicGoodGame(n_players=100, rounds=300).n_players == 100
    with pytest.raises(StratagemError) as caught:
        PublicGoodGame(n_players=100, rounds=301)
    assert str(caught.value) == (
        "public good: 100 players x 301 rounds = 30,100 contributions, more than the 30,000 one "
        "game may hold; use fewer players or rounds"
    )
