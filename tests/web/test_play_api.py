"""Browser play's server (issue 25 item 8) through the real `stratagem play --web` and its API:
each seat's link, moves checked by the engine as typed ones are, a seat that is not asked cannot
move, bad requests refused, the episode stored with the human seat marked, and a closed page
leaving the game unfinished with the store intact."""

from __future__ import annotations

import json
import sqlite3
import urllib.request
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support.play import play
from support.web_play import _answer, web_play

from stratagem.agents.human import MAX_LINE_CHARS
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_game
from stratagem.games.spaces import Choice, FreeText, IntegerRange, Shares
from stratagem.games.tradecraft.actions import CraftSpace, DecisionSpace, ProposalSpace
from stratagem.games.tradecraft.game import TradecraftGame
from stratagem.web.play.app import SEAT_HEADER
from stratagem.web.play.forms import move_form

ULTIMATUM = ("ultimatum", "--seat", "0=human", "--seat", "1=plain", "--model",
             "scripted/always:accept")  # fmt: skip


def form(space: Any, game: Any = None) -> dict[str, Any]:
    return move_form(game or get_game("dilemma"), SimpleNamespace(legal=space))  # type: ignore[arg-type]


def test_each_space_has_its_form_with_the_space_s_own_bounds() -> None:
    game = TradecraftGame(0)
    assert form(Choice(("cooperate", "defect"))) == {"kind": "choice",
                                                     "labels": ["cooperate", "defect"]}  # fmt: skip
    assert form(IntegerRange(0, 100)) == {"kind": "integer", "low": 0, "high": 100}
    assert form(Shares(("A", "B", "C"), 5, 100)) == {
        "kind": "shares", "parties": ["A", "B", "C"], "step": 5, "total": 100}  # fmt: skip
    assert form(FreeText(1000)) == {"kind": "text", "max_chars": 1000}
    proposal = form(ProposalSpace(own=(("coal", 1),), partner=(("raw_iron", 2),)), game)
    assert proposal["kind"] == "proposal"
    assert (proposal["own"], proposal["partner"]) == ([["coal", 1]], [["raw_iron", 2]])
    assert form(DecisionSpace(), game)["kind"] == "decision"
    craft = form(CraftSpace(hand=(("coal", 1),), rules=game.rules), game)
    assert craft["kind"] == "craft" and craft["hand"] == [["coal", 1]]
    assert "stick" in craft["items"] and craft["items"] == sorted(craft["items"])


def test_a_person_plays_ultimatum_through_the_seat_s_api(tmp_path: Path) -> None:
    with web_play(tmp_path, *ULTIMATUM) as played:
        state = played.wait_move(0)
        assert state["game"] == "ultimatum" and state["seat"] == 0
        assert "You are the proposer." in state["messages"][0]
        assert state["move"]["form"] == {"kind": "integer", "low": 0, "high": 100}
        turn = state["move"]["turn"]
        assert played.send(0, "150", turn) == (200, {"sent": True})  # sent; the engine refuses it
        again = played.wait_move(0)
        assert again["move"]["turn"] == turn  # the same move, asked again
        assert "not a legal move: illegal action 150: expected 0..100" in again["messages"]
        assert played.send(0, "40", turn)[0] == 200
        end = played.news(0, wait=5)
        while not end["end"]:
            end = played.news(0, after=end["next"], wait=5)
        assert end["end"]["payoffs"] == [60.0, 40.0]
    assert played.rc == 0, played.err
    assert "game over: seat 0: 60, seat 1: 40" in played.out
    with ResultStore(tmp_path / "play" / "stratagem.db") as store:
        (episode,) = store.episodes()
        assert episode.status == "finished" and episode.payoffs == (60.0, 40.0)
        assert episode.players[0]["kind"] == "human"  # the human seat marked
        assert episode.players[1]["model"] == "scripted/always:accept"


def test_a_seat_cannot_move_for_another_and_bad_requests_are_refused(tmp_path: Path) -> None:
    both = ("ultimatum", "--seat", "0=human", "--seat", "1=human")
    with web_play(tmp_path, *both, humans=2) as played:
        assert played.links[0] != played.links[1]
        turn = played.wait_move(0)["move"]["turn"]
        assert played.send(1, "accept", 1) == (409, {"error": "it is not this seat's move"})
        for header in ({SEAT_HEADER: "nosuchtoken"}, {}):
            assert _answer(urllib.request.Request(played.api(0), headers=header))[0] == 404
        in_path = f"{played.api(0)}s/{played.token(0)[SEAT_HEADER]}"  # no token in a URL
        assert _answer(urllib.request.Request(in_path))[0] == 404
        for body, kind, status in [
            (b"40", "text/plain", 415),
            (b"not json", "application/json", 400),
            (b'{"line": 40}', "application/json", 400),
            (b'{"line": "40"}', "application/json", 400),  # no turn
            (b'{"line": "40", "turn": "1"}', "application/json", 400),
            (json.dumps({"line": "4" * (5 * MAX_LINE_CHARS)}).encode(), "application/json", 413),
        ]:
            headers = {**played.token(0), "content-type": kind}
            request = urllib.request.Request(played.api(0), data=body, method="POST",
                                             headers=headers)  # fmt: skip
            code, answer = _answer(request)
            assert code == status and set(answer) == {"error"}, (body[:20], code, answer)
        with urllib.request.urlopen(played.links[0].partition("#")[0]) as page:
            assert "default-src 'self'" in page.headers["content-security-policy"]
        rebound = urllib.request.Request(
            played.api(0), headers={**played.token(0), "host": "evil.example"}
        )
        assert _answer(rebound)[0] == 403  # DNS rebinding: only loopback names are answered
        # the seats' views differ: the responder is not shown the proposer's prompt
        assert played.send(0, "30", turn)[0] == 200
        responder = played.wait_move(1)
        assert responder["move"]["form"] == {"kind": "choice", "labels": ["accept", "reject"]}
        assert not any("You are the proposer" in m for m in responder["messages"])
        assert played.send(1, "reject", responder["move"]["turn"])[0] == 200
        for seat in (0, 1):  # each page is shown the end; then the server stops
            while not played.news(seat, wait=5)["end"]:
                pass
    assert played.rc == 0, played.err
    assert "game over: seat 0: 0, seat 1: 0" in played.out


def test_a_repeated_post_is_refused_never_played_as_the_next_move(tmp_path: Path) -> None:
    """A double click, a retry or a second tab sends a move twice: the second, for a turn the
    person has moved in already, is refused (409, a JSON line saying why) even once the next
    round is asked, so no round is played before the person has seen it."""
    dilemma = ("dilemma", "--seat", "0=human", "--seat", "1=TitForTat", "--rounds", "2")
    with web_play(tmp_path, *dilemma) as played:
        first = played.wait_move(0)["move"]
        cooperate, defect = first["form"]["labels"]
        assert played.send(0, cooperate, first["turn"]) == (200, {"sent": True})
        code, body = played.send(0, cooperate, first["turn"])  # the same POST at once
        assert code == 409 and set(body) == {"error"}
        second = played.wait_move(0, first["turn"])["move"]  # round 2 asked
        code, body = played.send(0, cooperate, first["turn"])  # the same POST, late
        assert code == 409
        assert body == {"error": f"turn {first['turn']} is not the move asked "
                                 f"(turn {second['turn']}); reload to see it"}  # fmt: skip
        assert played.news(0)["move"]["turn"] == second["turn"]  # still asked
        assert played.send(0, defect, second["turn"]) == (200, {"sent": True})
        while not played.news(0, wait=5)["end"]:
            pass
    assert played.rc == 0, played.err
    with ResultStore(tmp_path / "play" / "stratagem.db") as store:
        (episode,) = store.episodes()
        moves = [r.actions[0] for r in store.rounds(episode.id)]
    assert moves == [cooperate, defect]


def test_a_closed_page_leaves_the_game_unfinished_and_the_store_whole(tmp_path: Path) -> None:
    with web_play(tmp_path, *ULTIMATUM, "--idle", "1") as played:
        pass  # no page ever asks: as a tab closed before the first move
    assert played.rc == 2
    (line,) = played.err.strip().splitlines()
    assert line.startswith("error: the game did not finish: ")
    assert line.endswith("the input ended before the game did; it is left unfinished")
    db = tmp_path / "play" / "stratagem.db"
    with ResultStore(db) as store:
        (episode,) = store.episodes()
        assert episode.status != "finished" and store.rounds(episode.id) == []
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.parametrize("option", [["--port", "8000"], ["--open"], ["--idle", "5"]])
def test_web_options_need_web(tmp_path: Path, option: list[str]) -> None:
    done = play(tmp_path, "", "ultimatum", "--seat", "0=human", "--seat", "1=plain", *option)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {option[0]}: only with --web"
