"""A game string with parameters out of bounds (issue 33 item 1) is one line naming the
parameter, the value and the game through every door a game string comes in by: `stratagem
play`, `stratagem run`, `stratagem.env`, `stratagem import` and the viewer's play page. Each
runs in a child process with bounded memory and time: the string once took 18.7 GB."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml
from support.cli import cli
from support.limited import python, stratagem

from stratagem.experiments.config import load_config
from stratagem.experiments.runner import Runner

pytest.importorskip("pyspiel")

HUGE = "openspiel:goofspiel(num_cards=100000000)"


def refused_in_one_line(stderr: str, game: str, parameter: str) -> None:
    (line,) = stderr.strip().splitlines()
    assert line.startswith("error: ") and f"game '{game}'" in line, line
    assert parameter in line, line


def experiment(tmp_path: Path, game: str) -> Path:
    data = {
        "name": "bounds",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/random"}],
        "agents": [{"name": "plain"}],
        "games": [game],
        "lineups": [["openspiel-random", "openspiel-random"]],
        "seeds": [0],
    }
    path = tmp_path / "bounds.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_play_refuses_it_in_one_line(tmp_path: Path) -> None:
    done = stratagem("play", HUGE, "--seat", "0=human", "--seat", "1=openspiel-random",
                     "--out", str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    refused_in_one_line(done.stderr, HUGE, "num_cards=100000000")


def test_run_refuses_it_in_one_line(tmp_path: Path) -> None:
    done = stratagem("run", str(experiment(tmp_path, HUGE)), "--no-progress", cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    refused_in_one_line(done.stderr, HUGE, "num_cards=100000000")


def test_the_api_raises_the_one_error_type(tmp_path: Path) -> None:
    code = (
        "import stratagem\n"
        "from stratagem.errors import StratagemError\n"
        "try:\n"
        f"    stratagem.env({HUGE!r})\n"
        "except StratagemError as exc:\n"
        "    print(exc)\n"
    )
    done = python(code, tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr[-2000:]
    assert f"game '{HUGE}'" in done.stdout and "num_cards=100000000" in done.stdout


def test_import_refuses_a_record_of_it_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = experiment(tmp_path, "openspiel:kuhn_poker")
    summary = asyncio.run(Runner(load_config(path), show_progress=False).run())
    assert summary.finished == 1, summary.errors
    jsonl = tmp_path / "ep.jsonl"
    assert cli(capsys, "export", str(jsonl), "--store", str(tmp_path / "out"))[0] == 0
    record = json.loads(jsonl.read_text(encoding="utf-8"))
    record["game"] = HUGE
    jsonl.write_text(json.dumps(record) + "\n", encoding="utf-8")
    done = stratagem("import", str(jsonl), "--store", str(tmp_path / "copy"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    refused_in_one_line(done.stderr, HUGE, "num_cards=100000000")


def test_the_viewer_s_play_page_refuses_it_with_the_same_line(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from stratagem.web.server import build_app

    game = "openspiel:goofspiel(num_cards=-5)"  # harmless to try in this process
    app = build_app([], token="tok", play=tmp_path / "out")
    try:
        with TestClient(app, base_url="http://192.0.2.1:8000") as client:
            body = {"game": game, "seats": ["human", "openspiel-random"]}
            for route in ("/api/play/plan?token=tok", "/api/play?token=tok"):
                answer = client.post(route, json=body)
                assert answer.status_code == 400, answer.text
                message = answer.json()["error"]
                assert "\n" not in message and f"game '{game}'" in message, message
                assert "num_cards=-5" in message, message
    finally:
        app.state.data.close()
