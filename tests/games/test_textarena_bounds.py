"""TextArena's games refuse what they cannot play in one line before playing (issue 33 item 1
and N8): data an environment would download (NLTK's word lists) that is not installed, and
option values out of bounds. Nothing is fetched and nothing else is printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagem.errors import StratagemError
from stratagem.games.catalog import get_game

pytest.importorskip("textarena")
nltk = pytest.importorskip("nltk")


def test_an_environment_needing_missing_nltk_data_is_one_line_before_playing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])  # no NLTK data anywhere
    capfd.readouterr()
    with pytest.raises(StratagemError) as caught:
        get_game("textarena:Hangman-v0")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("game 'textarena:Hangman-v0' needs the NLTK")
    assert "'words', which is not installed" in message
    assert "python -m nltk.downloader words" in message
    assert capfd.readouterr() == ("", "")  # no download tried, nothing printed


def test_nltk_data_that_is_installed_is_used_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    words = tmp_path / "corpora" / "words"
    words.mkdir(parents=True)
    (words / "en-basic").write_text("apple\nriver\nstone\n", encoding="utf-8")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    state = get_game("textarena:Hangman-v0").initial_state(3)
    assert state.env.state.game_state["target_word"] in {"apple", "river", "stone"}


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"players": -1}, "players=-1 must be 0 (the fewest the environment takes) or 1 to 15"),
        ({"players": 10**9}, "players=1000000000 must be 0"),
        ({"players": True}, "players=True must be 0"),
        ({"max_steps": 10**12}, "max_steps=1000000000000 must be 1 to 10000"),
        ({"max_steps": 0}, "max_steps=0 must be 1 to 10000"),
    ],
)
def test_options_out_of_bounds_are_one_line_naming_them(
    options: dict[str, object], said: str
) -> None:
    with pytest.raises(StratagemError) as caught:
        get_game("textarena:TicTacToe-v0", **options)
    message = str(caught.value)
    assert message.startswith("game 'textarena:TicTacToe-v0': ") and said in message, message
