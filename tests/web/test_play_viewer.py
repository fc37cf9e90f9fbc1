"""Games started from the viewer (issue 25 item 8, "From the viewer"): the real `stratagem view
DIR --play OUT` in a second process, a game requested through its API and played through the
seat's API to the end, stored in OUT and shown by the viewer; one game at a time, one writer per
directory, a seed played already refused, paid models only with a confirmation, bad requests
refused in one line (the line `stratagem play` prints), and no play at all without `--play`."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.browser import serving
from support.cli import cli

from stratagem.errors import StratagemError
from stratagem.experiments.lock import WriterLock
from stratagem.experiments.store import ResultStore
from stratagem.web.play.app import SEAT_HEADER

ULTIMATUM = {"game": "ultimatum", "seats": ["human", "plain"], "model": "scripted/always:accept"}


def call(
    url: str, body: Any = None, kind: str = "application/json", seat: str | None = None
) -> tuple[int, dict[str, Any]]:
    """(status, JSON answer) of a GET, or of a POST of `body` (bytes as they are, else JSON);
    `seat` a seat's token, sent as the seat API wants it (a header)."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    headers = {"content-type": kind, **({SEAT_HEADER: seat} if seat is not None else {})}
    request = urllib.request.Request(url, data=data, headers=headers,
                                     method="GET" if body is None else "POST")  # fmt: skip
    try:
        with urllib.request.urlopen(request) as r:
            return r.status, dict(json.load(r))
    except urllib.error.HTTPError as exc:
        return exc.code, dict(json.load(exc))


def seat_api(link: str) -> tuple[str, str]:
    """The seats' API URL and the seat's token (the link's fragment)."""
    page, _, token = link.partition("#")
    return page.removesuffix("play") + "api/seat", token


def wait_for(check: Any, what: str) -> Any:
    for _ in range(600):
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"never: {what}")


def empty_results(path: Path) -> Path:
    ResultStore(path / "stratagem.db").close()
    return path


def test_a_game_started_from_the_viewer_is_played_to_its_end_and_shown(tmp_path: Path) -> None:
    viewed, out = empty_results(tmp_path / "viewed"), tmp_path / "out"
    with serving(viewed, "--play", out) as url:
        status, info = call(f"{url}api/play")
        assert status == 200 and info["enabled"] and info["last"] is None
        assert info["out"] == str(out)
        assert {"name": "ultimatum", "seats": 2} in [
            {"name": g["name"], "seats": g["seats"]} for g in info["games"]
        ]
        assert "human" not in info["strategies"] and "plain" in info["architectures"]

        status, plan = call(f"{url}api/play/plan", {**ULTIMATUM, "seed": 7})
        assert status == 200 and plan["paid"] == [] and plan["seed"] == 7
        assert plan["plan"].startswith("1 episode to play (0 already finished), about 1 model")
        assert not list(out.glob("writer.lock"))  # a plan starts nothing

        status, started = call(f"{url}api/play", {**ULTIMATUM, "seed": 7})
        assert status == 200, started
        assert list(started["links"]) == ["0"] and started["running"] is True
        link = started["links"]["0"]
        assert link.startswith(f"{url}play#")
        episode = started["episode"]
        assert episode["source"] == "out"  # OUT is viewed, named by its folder

        # One game at a time in OUT: a second is refused in one line while the first runs.
        status, refused = call(f"{url}api/play", {**ULTIMATUM, "seed": 8})
        assert status == 409 and refused == {
            "error": f"a game (ultimatum, seed 7) is being played in {out}; wait for it to end, "
            "or abandon it, then start another"
        }
        assert call(f"{url}api/play")[1]["last"]["running"] is True
        assert "links" not in call(f"{url}api/play")[1]["last"]  # only its starter gets them

        api, token = seat_api(link)
        state = wait_for(lambda: call(f"{api}?after=0&wait=2", seat=token)[1]["move"],
                         "seat 0 asked")  # fmt: skip
        assert state["form"] == {"kind": "integer", "low": 0, "high": 100}
        # The game holds OUT's writer lock: a `stratagem run` there is refused meanwhile.
        with pytest.raises(StratagemError, match="another stratagem process"), WriterLock(out):
            pass
        assert call(api, {"line": "40", "turn": state["turn"]}, seat=token) == (200, {"sent": True})
        last = wait_for(
            lambda: (got := call(f"{url}api/play")[1]["last"])["running"] is False and got,
            "the game over",
        )
        assert last["end"]["payoffs"] == [60.0, 40.0]
        assert call(f"{api}?after=0", seat=token)[1]["end"]["scores"] == "seat 0: 60, seat 1: 40"

        status, shown = call(f"{url}api/episodes/out/{episode['id'].encode().hex()}")
        assert status == 200 and shown["status"] == "finished"

        # The seed is played there now: refused as `stratagem play --seed 7` refuses it.
        status, again = call(f"{url}api/play", {**ULTIMATUM, "seed": 7})
        assert status == 400 and again["error"].startswith(
            f"--seed 7: this game was played with this seed already in {out}"
        )
    with ResultStore(out / "stratagem.db") as store:
        (stored,) = store.episodes()
        assert stored.id == episode["id"] and stored.status == "finished"
        assert stored.payoffs == (60.0, 40.0)
        assert stored.players[0]["kind"] == "human"  # the human seat marked
        assert stored.players[1]["model"] == "scripted/always:accept"
    with ResultStore(viewed / "stratagem.db") as store:
        assert store.episodes() == []  # the viewed directory is only read


def test_bad_requests_are_refused_in_one_line_and_nothing_is_played(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-play-viewer-test-0123456789")  # the paid model's
    out = tmp_path / "out"
    bad_seat = {**ULTIMATUM, "seats": ["human", "nosuch"]}
    seat = ("--seat", "0=human", "--seat", "1=nosuch", "--model", "scripted/always:accept")
    cli_lines = {
        "game": cli(capsys, "play", "nope", "--seat", "0=human", "--out", str(out)),
        "seat": cli(capsys, "play", "ultimatum", *seat, "--out", str(out)),
    }
    assert all(code == 2 for code, _, _ in cli_lines.values())
    with serving(out, "--play", out) as url:
        play, plan = f"{url}api/play", f"{url}api/play/plan"
        for name, request in (("game", {**ULTIMATUM, "game": "nope"}), ("seat", bad_seat)):
            status, answer = call(play, request)
            assert status == 400
            assert cli_lines[name][2] == f"error: {answer['error']}\n"  # the CLI's very line
        # A model string never opens a file (issue 33 item 11).
        status, answer = call(plan, {**ULTIMATUM, "model": "local//etc/passwd"})
        assert status == 400 and "a local model is named, never a path" in answer["error"]
        assert call(play, b"{}", "text/plain") == (
            415, {"error": "a game request is sent as application/json"})  # fmt: skip
        assert call(play, b"{not json") == (400, {"error": "the request is not JSON"})
        assert call(plan, b"[1]")[0] == 400
        assert call(play, {**ULTIMATUM, "seed": -1}) == (
            400, {"error": "'seed': a whole number >= 0, or null"})  # fmt: skip
        assert call(play, {**ULTIMATUM, "pad": "x" * 20_000})[0] == 413

        # A paid model: the plan says so, and the game starts only with a confirmation.
        paid = {**ULTIMATUM, "model": "openai/gpt-4o-mini", "seed": 1}
        status, answer = call(plan, paid)
        assert status == 200 and answer["paid"] == ["openai/gpt-4o-mini"]
        status, answer = call(play, paid)
        assert status == 400 and answer["error"].startswith(
            "this game calls paid models (openai/gpt-4o-mini): 1 episode to play"
        )
        assert answer["error"].endswith('send "confirm": true to start it')

        # Another process writing OUT: refused, never a second writer.
        with WriterLock(out):
            status, answer = call(play, {**ULTIMATUM, "seed": 2})
        assert status == 409 and "another stratagem process is writing" in answer["error"]
        assert call(play)[1]["last"] is None  # nothing was started
    with ResultStore(out / "stratagem.db") as store:
        assert store.episodes() == []


def test_without_play_the_viewer_starts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    viewed = empty_results(tmp_path / "viewed")
    code, _, err = cli(capsys, "view", str(viewed), "--export", str(tmp_path / "site"),
                       "--play", str(tmp_path / "out"))  # fmt: skip
    assert (code, err) == (2, "error: --play: not with --export (a static site plays nothing)\n")
    assert not (tmp_path / "out").exists()
    with serving(viewed) as url:
        assert call(f"{url}api/play") == (200, {"enabled": False})
        assert call(f"{url}api/play", ULTIMATUM) == (405, {"error": "method not allowed"})
        assert call(f"{url}api/play/plan", ULTIMATUM)[0] == 404
        with pytest.raises(urllib.error.HTTPError) as page:
            urllib.request.urlopen(f"{url}play")
        assert page.value.code == 404
    assert sorted(p.name for p in viewed.iterdir()) == ["stratagem.db"]


@pytest.mark.parametrize("with_results", [False, True])
def test_play_without_a_directory_views_out_and_results_where_it_exists(
    tmp_path: Path, with_results: bool
) -> None:
    """`stratagem view --play OUT` alone: OUT is viewed (it is played into), and `results`, the
    directory every command reads by default, too where it exists."""
    if with_results:
        empty_results(tmp_path / "results")
    with serving("--play", "out", cwd=tmp_path) as url:
        status, info = call(f"{url}api/play")
        assert status == 200 and info["enabled"] and info["out"] == "out"
        with urllib.request.urlopen(f"{url}api/sources") as answer:
            paths = [Path(s["path"]) for s in json.load(answer)]
    expected = [Path("results/stratagem.db")] * with_results + [Path("out/stratagem.db")]
    assert paths == expected


def test_with_a_token_each_seat_s_link_carries_it_and_lets_its_person_in(tmp_path: Path) -> None:
    """`--host` other than the loopback: every request needs the viewer's token, so the link
    sent to a second person must carry it (and is then enough: the page gets the cookie)."""
    from starlette.testclient import TestClient

    from stratagem.web.server import build_app

    out = tmp_path / "out"
    app = build_app([], token="tok", play=out)
    try:
        # One client (one event loop, as the server has); its cookies cleared between people.
        with TestClient(app, base_url="http://192.0.2.1:8000") as client:
            assert client.get("/api/play").status_code == 403
            started = client.post("/api/play?token=tok", json={**ULTIMATUM, "seed": 3}).json()
            link = started["links"]["0"]
            assert link.startswith("http://192.0.2.1:8000/play?token=tok#")
            page, _, seat = link.partition("#")
            api, header = "/api/seat", {SEAT_HEADER: seat}
            client.cookies.clear()  # the second person, who has only the link
            assert client.get(api, headers=header).status_code == 403
            assert client.get(page).status_code == 200  # the link: its cookie set
            move = wait_for(lambda: client.get(f"{api}?wait=1", headers=header).json()["move"],
                            "seat 0 asked")  # fmt: skip
            sent = client.post(api, json={"line": "40", "turn": move["turn"]}, headers=header)
            assert sent.json() == {"sent": True}
            wait_for(lambda: client.get(api, headers=header).json()["end"], "the game over")
            assert client.get("/api/play").json()["last"]["end"]["payoffs"] == [60.0, 40.0]
    finally:
        app.state.data.close()
