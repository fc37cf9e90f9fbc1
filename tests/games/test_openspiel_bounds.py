"""OpenSpiel game strings are checked before OpenSpiel sees them (issue 33 item 1 and N8): every
parameter by its kind and a bound relative to OpenSpiel's default, the game's sizes after a trial
load in a throwaway process, each refusal one line naming the game, the parameter and the value,
and none of OpenSpiel's own C++ messages on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.limited import python

from stratagem.errors import StratagemError
from stratagem.games.catalog import get_game
from stratagem.games.openspiel import OpenSpielGame, bounds

pytest.importorskip("pyspiel")


def refusal(name: str, capfd: pytest.CaptureFixture[str]) -> str:
    """The one line `name` is refused with; nothing reaches stdout or stderr meanwhile."""
    capfd.readouterr()
    with pytest.raises(StratagemError) as caught:
        get_game(name)
    message = str(caught.value)
    assert "\n" not in message and f"game '{name}'" in message, message
    assert capfd.readouterr() == ("", ""), "OpenSpiel printed to the terminal"
    return message


@pytest.mark.parametrize(
    ("string", "said"),
    [
        ("goofspiel(num_cards=-5)", "num_cards=-5 must be at least 1"),
        ("goofspiel(num_cards=0)", "num_cards=0 must be at least 1"),
        ("liars_dice(numdice=-1)", "numdice=-1 must be at least 1"),
        ("connect_four(rows=-2)", "rows=-2 must be at least 1"),
        ("goofspiel(num_cards=131)", "num_cards=131 is over the bound of 130 (10 x its default 13"),
        ("goofspiel(num_turns=-5)", "num_turns=-5 must be -1 (its default) or 0 to 10"),
        ("go(handicap=11)", "handicap=11 must be 0 (its default) or 0 to 10"),
        ("goofspiel(num_cards=abc)", "num_cards='abc' must be a whole number"),
        ("goofspiel(imp_info=3)", "imp_info=3 must be True or False"),
        ("kuhn_poker(players=11)", "players=11: OpenSpiel's kuhn_poker takes 2 to 10 players"),
        ("kuhn_poker(players=1)", "players=1: OpenSpiel's kuhn_poker takes 2 to 10 players"),
        ("tic_tac_toe(rows=3)", "OpenSpiel's tic_tac_toe has no parameter 'rows' (it takes none)"),
        ("goofspiel(cards=3)", "has no parameter 'cards' (parameters: egocentric, imp_info,"),
        ("efg_game(filename=/etc/passwd)", "parameter filename='/etc/passwd' names a file to read"),
        ("turn_based_simultaneous_game(game=goofspiel(num_cards=0))", "num_cards=0 must be at"),
        ("go(board_size=190)", "observation tensor of 144400 numbers is over the bound of 100000"),
    ],
)
def test_a_parameter_out_of_bounds_is_one_line_naming_it(
    string: str, said: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert said in refusal(f"openspiel:{string}", capfd)


def test_a_misspelt_game_is_one_line_with_the_closest_names(
    capfd: pytest.CaptureFixture[str],
) -> None:
    message = refusal("openspiel:tic_tac_tow", capfd)
    assert "OpenSpiel has no game 'tic_tac_tow': did you mean tic_tac_toe" in message
    assert "stratagem games" in refusal("openspiel:zzzzzzzzzzzz", capfd)


def test_a_string_openspiel_cannot_read_is_one_line(capfd: pytest.CaptureFixture[str]) -> None:
    assert "cannot be read" in refusal("openspiel:goofspiel(num_cards=5", capfd)
    assert "cannot be read" in refusal("openspiel:goofspiel(num_cards=99999999999999999999)", capfd)


def test_the_game_s_sizes_are_checked_against_the_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert OpenSpielGame("tic_tac_toe").n_players == 2
    monkeypatch.setattr(bounds, "MAX_ACTIONS", 5)
    with pytest.raises(StratagemError, match="9 distinct moves is over the bound of 5"):
        OpenSpielGame("tic_tac_toe")
    monkeypatch.setattr(bounds, "MAX_ACTIONS", 100)
    monkeypatch.setattr(bounds, "MAX_GAME_LENGTH", 3)
    with pytest.raises(StratagemError, match="9 moves long is over the bound of 3"):
        OpenSpielGame("tic_tac_toe")


def test_a_game_that_crashes_or_exhausts_openspiel_is_one_line(tmp_path: Path) -> None:
    """In bounds, yet OpenSpiel aborts (hanabi with 10 colours), segfaults (universal_poker) or
    runs out of memory (blotto: every split of 100 coins over 30 fields) loading them: the trial
    load in a throwaway process says so, and this process lives on."""
    code = (
        "from stratagem.errors import StratagemError\n"
        "from stratagem.games.catalog import get_game\n"
        "for s in ['hanabi(colors=10)', 'universal_poker(numPlayers=20)',\n"
        "          'blotto(coins=100,fields=30)']:\n"
        "    try:\n"
        "        get_game('openspiel:' + s)\n"
        "    except StratagemError as exc:\n"
        "        print(exc)\n"
    )
    done = python(code, tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr[-2000:]
    hanabi, poker, blotto = done.stdout.strip().splitlines()
    assert hanabi.startswith("game 'openspiel:hanabi(colors=10)': OpenSpiel crashed loading it")
    assert poker.startswith("game 'openspiel:universal_poker(numPlayers=20)': OpenSpiel crashed")
    assert blotto.startswith("game 'openspiel:blotto(coins=100,fields=30)': ") and (
        "memory" in blotto or "seconds" in blotto
    )
