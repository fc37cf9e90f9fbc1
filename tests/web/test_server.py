"""`stratagem view`'s server (issue 25 items 1 and 10): the JSON API over a real store played by a
scripted model whose replies are markup, the pages, the security headers, the token, read-only
browsing, and the real command started in a second process."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from support.cli import cli
from support.scripted_run import run_scripted

from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.web.server import CSP, build_app

COMMAND = str(Path(sys.executable).with_name("stratagem"))
XSS = "<script>alert(1)</script></script><img src=x onerror=alert(1)><a href='javascript:x'>"
SENTINEL = "sk-view-sentinel-5f1c0e"
LOCAL = "http://127.0.0.1"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A results directory with one PD episode whose model replies are `XSS` and a move."""
    tmp = tmp_path_factory.mktemp("view")
    reply = lambda request, sample: f"{XSS} {request.choices[0]}"  # noqa: E731
    summary = run_scripted(tmp / "out", "xss", reply, rounds=[2])
    assert summary.finished == 1, summary.errors
    yield tmp / "out"


@pytest.fixture
def client(results: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    app = build_app([results])
    try:
        yield TestClient(app, base_url=LOCAL)
    finally:
        app.state.data.close()


def every_route(client: TestClient) -> list[Any]:
    """Every page and API answer over the store (responses), walking from the experiments."""
    got = [client.get(url) for url in ("/", "/app.js", "/app.css", "/source.js")]
    sources = client.get("/api/sources")
    experiments = client.get("/api/experiments")
    got += [sources, experiments]
    for x in experiments.json():
        base = f"/api/experiments/{x['source']}/{x['id'].encode().hex()}"
        episodes = client.get(f"{base}/episodes")
        got += [client.get(f"{base}/cells"), episodes, client.get(f"/api/version/{x['source']}")]
        for item in episodes.json()["items"]:
            for perspective in ("all", "seat:0", "seat:1"):
                url = f"/api/episodes/{x['source']}/{item['id'].encode().hex()}"
                url += f"?perspective={perspective}"
                got.append(client.get(url))
    return got


def test_every_route_answers_with_the_security_headers(client: TestClient) -> None:
    answers = every_route(client)
    assert len(answers) == 6 + 3 + 3  # pages, lists, one experiment, one episode in 3 views
    for response in answers:
        assert response.status_code == 200, (response.url, response.text)
        assert response.headers["content-security-policy"] == CSP
        assert response.headers["x-content-type-options"] == "nosniff"
        assert SENTINEL not in response.text
        assert SENTINEL not in str(response.headers)
    assert answers[0].headers["content-type"].startswith("text/html")
    assert answers[1].headers["content-type"].startswith("text/javascript")
    assert answers[2].headers["content-type"].startswith("text/css")
    assert answers[3].headers["content-type"].startswith("text/javascript")
    (experiment,) = answers[5].json()
    assert experiment["name"] == "xss"


def test_stored_markup_comes_back_escaped_and_no_page_embeds_data(client: TestClient) -> None:
    [experiment] = client.get("/api/experiments").json()
    base = f"/api/experiments/{experiment['source']}/{experiment['id'].encode().hex()}"
    [item] = client.get(f"{base}/episodes").json()["items"]
    response = client.get(f"/api/episodes/{experiment['source']}/{item['id'].encode().hex()}")
    replies = [c["reply"] for step in response.json()["steps"] for c in step["calls"]]
    assert replies and all(XSS in reply for reply in replies)  # the markup is really there...
    raw = response.content
    assert b"<" not in raw and b">" not in raw  # ...and no byte of it reads as a tag
    assert b"\\u003c/script\\u003e" in raw
    index = client.get("/").text
    # Scripts only from files (the CSP refuses inline ones anyway), no inline styles, no data.
    assert re.findall(r"<script[^>]*>", index) == [
        '<script src="source.js" defer>',
        '<script src="views/kit.js" defer>',
        '<script src="views/matrix.js" data-views="[&quot;rounds&quot;]" defer>',
        '<script src="views/social.js" data-views="[&quot;chameleon&quot;,&quot;undercover&quot;]" '
        "defer>",
        '<script src="views/tradecraft.js" data-views="[&quot;tradecraft&quot;]" defer>',
        '<script src="views/ultimatum.js" data-views="[&quot;ultimatum&quot;]" defer>',
        '<script src="views/public_good.js" data-views="[&quot;public-good&quot;]" defer>',
        '<script src="views/cheap_talk.js" '
        'data-views="[&quot;dilemma-talk&quot;,&quot;cheap-talk&quot;]" defer>',
        '<script src="views/cost_sharing.js" data-views="[&quot;cost-sharing&quot;]" defer>',
        '<script src="compare.js" defer>',
        '<script src="cells.js" defer>',
        '<script src="diff.js" defer>',
        '<script src="vendor/d3/d3.min.js" defer>',
        '<script src="analysis.js" defer>',
        '<script src="charts.js" defer>',
        '<script src="launch.js" defer>',
        '<script src="calls.js" defer>',
        '<script src="links.js" defer>',
        '<script src="app.js" defer>',
    ]
    assert '<script src="app.js" defer></script>' in index
    assert "style=" not in index and "<style" not in index
    assert "xss" not in index and item["id"] not in index
    script = "".join(client.get(f"/{name}.js").text for name in ("app", "source", "analysis"))
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script.replace("never innerHTML", "")


@pytest.mark.parametrize(
    "path",
    [
        "/../stratagem.db",
        "/%2e%2e/stratagem.db",
        "/stratagem.db",
        "/app.js/../../stratagem.db",
        "/pages/app.js",
        "/index.html/..%2f..%2fserver.py",
        "/api/sources/../../stratagem.db",
    ],
)
def test_no_path_reaches_the_filesystem(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.json() == {"error": "not found"}
    assert b"SQLite format" not in response.content


def test_bad_requests_are_one_json_error(client: TestClient) -> None:
    [experiment] = client.get("/api/experiments").json()
    source, known = experiment["source"], experiment["id"].encode().hex()
    cases = {
        f"/api/episodes/{source}/{b'no-such-episode'.hex()}": 404,
        f"/api/experiments/{source}/{b'no-such-experiment'.hex()}/cells": 404,
        "/api/version/99": 404,
        f"/api/episodes/{source}/{b'x'.hex()}?perspective=seat:-1": 400,
        f"/api/experiments/{source}/{known}/episodes?page=two": 400,
        f"/api/experiments/{source}/{known}/episodes?status=done": 400,
        f"/api/experiments/{source}/{experiment['id']}x/cells": 400,  # an id not in hex
        f"/api/episodes/{source}/ff": 400,  # hex, but not of UTF-8
    }
    for url, status in cases.items():
        response = client.get(url)
        assert response.status_code == status, (url, response.text)
        (message,) = response.json().values()
        assert message and "\n" not in message and "Traceback" not in message


def test_browsing_never_changes_the_store(results: Path, client: TestClient) -> None:
    def snapshot() -> dict[str, str]:
        return {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(results.iterdir())
            if p.is_file()
        }

    before = snapshot()
    assert STORE_FILE in before
    every_route(client)
    assert snapshot() == before


def test_a_write_while_serving_shows_in_version_and_episodes(results: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(results, copy)
    app = build_app([copy])
    try:
        client = TestClient(app, base_url=LOCAL)
        [experiment] = client.get("/api/experiments").json()
        source = experiment["source"]
        episodes = f"/api/experiments/{source}/{experiment['id'].encode().hex()}/episodes"
        before = client.get(f"/api/version/{source}").json()["version"]
        assert client.get(episodes).json()["total"] == 1
        with ResultStore(copy / STORE_FILE) as store:  # a run adding an episode meanwhile
            store.add_episode("late", experiment["id"], "pd", ["TitForTat", "TitForTat"], seed=9)
        assert client.get(f"/api/version/{source}").json()["version"] != before
        assert "late" in [e["id"] for e in client.get(episodes).json()["items"]]
    finally:
        app.state.data.close()


def test_a_token_guards_every_request(results: Path) -> None:
    app = build_app([results], token="s3cret")
    try:
        client = TestClient(app, base_url="http://192.0.2.7:8000")
        for url in ("/", "/app.js", "/api/experiments", "/api/sources?token=wrong"):
            response = client.get(url)
            assert response.status_code == 403, url
            assert response.headers["content-security-policy"] == CSP
        opened = client.get("/?token=s3cret")
        assert opened.status_code == 200
        assert "httponly" in opened.headers["set-cookie"].lower()
        # The page's own later requests bring the cookie, not the token.
        assert client.get("/api/experiments").status_code == 200
        assert client.get("/app.js").status_code == 200
    finally:
        app.state.data.close()


def test_without_a_token_only_loopback_host_names_are_answered(client: TestClient) -> None:
    # A page elsewhere reaching 127.0.0.1 by DNS rebinding brings its own host name.
    assert client.get("http://attacker.example/api/experiments").status_code == 403
    assert client.get("http://localhost/api/experiments").status_code == 200


def test_a_bad_directory_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "view", str(tmp_path / "missing"))
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "missing" in line


def start(results: Path, *options: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "OPENAI_API_KEY": SENTINEL}
    proc = subprocess.Popen(
        [COMMAND, "view", str(results), *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out == "" and "Traceback" not in err


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_the_command_serves_the_url_it_prints_until_ctrl_c(results: Path) -> None:
    proc, url = start(results)
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url), url
        status, headers, body = fetch(url)
        assert status == 200 and headers["content-security-policy"] == CSP
        status, _, body = fetch(url + "api/experiments")
        assert status == 200 and json.loads(body)[0]["name"] == "xss"
        assert SENTINEL.encode() not in body
    finally:
        stop(proc)


def test_the_command_on_another_host_needs_its_token(results: Path) -> None:
    proc, url = start(results, "--host", "0.0.0.0")
    try:
        match = re.fullmatch(r"http://0\.0\.0\.0:(\d+)/\?token=([\w-]{20,})", url)
        assert match, url
        port, token = match.groups()
        assert fetch(f"http://127.0.0.1:{port}/api/experiments")[0] == 403
        assert fetch(f"http://127.0.0.1:{port}/")[0] == 403
        status, _, body = fetch(f"http://127.0.0.1:{port}/api/experiments?token={token}")
        assert status == 200 and SENTINEL.encode() not in body
    finally:
        stop(proc)
