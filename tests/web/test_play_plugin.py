"""`stratagem play --web` of a plugin's game (issue 34): the High Card guide's package
(docs/guides/new-game.md), installed into a folder of the test's as `pip install` would put it
in an environment, played by a person in the browser's API against two scripted seats; the
stored episode names the plugin version that supplied the game."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.guide_files import GUIDES, install, write_files
from support.web_play import web_play

from stratagem.experiments.store import ResultStore


def test_a_person_plays_a_plugin_s_game_in_the_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_files(GUIDES / "new-game.md", tmp_path)
    install(tmp_path / "highcard", tmp_path / "site")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    seats = ("--seat", "0=human", "--seat", "1=scripted:stay", "--seat", "2=scripted:fold")
    with web_play(tmp_path, "highcard:high-card", *seats) as played:
        state = played.wait_move(0)
        assert state["game"] == "highcard:high-card"
        assert state["move"]["form"] == {"kind": "choice", "labels": ["stay", "fold"]}
        assert any("Do you stay or fold?" in m for m in state["messages"])  # the plugin's prompts
        assert played.send(0, "raise", state["move"]["turn"])[0] == 200  # refused by the engine
        again = played.wait_move(0)
        assert any("not a legal move" in m for m in again["messages"])
        assert played.send(0, "stay", again["move"]["turn"])[0] == 200
        end = played.news(0, wait=5)
        while not end["end"]:
            end = played.news(0, after=end["next"], wait=5)
    assert played.rc == 0, played.err
    with ResultStore(tmp_path / "play" / "stratagem.db") as store:
        (episode,) = store.episodes()
    assert episode.status == "finished" and sum(episode.payoffs or ()) == 0
    assert episode.game == "highcard:high-card"
    assert episode.spec["plugins"] == [
        {"plugin": "highcard", "distribution": "highcard", "version": "0.1.0"}
    ]
