"""Every guide under docs/guides/ runs: its files written where the guide says (a block whose
first line is `# file: PATH` or `{# file: PATH #}`), its Python blocks in order in one namespace,
its `stratagem` commands through the CLI, in a fresh folder; so a guide cannot rot.

What a guide registers (a game, prompts, an architecture, a study, a script) is removed again
after it, so the registries the other tests see are the package's own."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import cli
from support.llama_server import free_port, stop, wait_ready

import stratagem
from stratagem.agents import game_prompts, registry
from stratagem.analysis import report_registry
from stratagem.games import catalog
from stratagem.llm.providers import scripted
from stratagem.studies import registry as studies

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ROOT / "docs" / "guides"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
FILE = re.compile(r"^(?:#|\{#) file: (\S+?)(?: #\})?\n")
REGISTRIES: list[dict[Any, Any]] = [
    catalog.GAMES,
    game_prompts.GAME_PROMPTS,
    registry.ARCHITECTURES,
    studies.STUDIES,
    studies.IMPORTERS,
    studies.EXPORTERS,
    report_registry._REGISTRY,
    scripted._REGISTERED,
]


def blocks(page: Path) -> list[tuple[str, str]]:
    """(language, code) of each fenced block, the code preceded by blank lines so that a
    traceback names the block's line in the page."""
    text = page.read_text(encoding="utf-8")
    return [(m[1], "\n" * text.count("\n", 0, m.start(2)) + m[2]) for m in BLOCK.finditer(text)]


@pytest.fixture
def registries() -> Iterator[None]:
    saved = [dict(r) for r in REGISTRIES]
    yield
    for live, before in zip(REGISTRIES, saved, strict=True):
        live.clear()
        live.update(before)
    for name in [m for m in sys.modules if m.startswith("guide_")]:
        del sys.modules[name]


def run_guide(
    page: Path, capsys: pytest.CaptureFixture[str], replace: dict[str, str] | None = None
) -> tuple[dict[str, Any], str]:
    """Run a guide's blocks in the current folder: (its Python namespace, what it printed).
    The blocks run as one module (dataclasses look their module up), as a user's file would;
    `replace` rewrites text in every block (a port)."""
    module = types.ModuleType(f"guide_{page.stem.replace('-', '_')}")
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    printed = ""
    for kind, code in blocks(page):
        for old, new in (replace or {}).items():
            code = code.replace(old, new)
        named = FILE.match(code.lstrip("\n"))
        if named:
            target = Path(named[1])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code.lstrip("\n")[named.end() :], encoding="utf-8")
        elif kind == "python":
            exec(compile(code, str(page), "exec"), namespace)
            printed += capsys.readouterr().out
        elif kind == "sh":
            for line in code.splitlines():
                if line.startswith("stratagem "):
                    status, out, err = cli(capsys, *shlex.split(line, comments=True)[1:])
                    assert status == 0, f"{page.name}: {line}: {err}"
                    printed += out
    return namespace, printed


def test_every_guide_is_tested() -> None:
    tested = {"new-game.md", "new-architecture.md", "new-study.md", "local-server.md"}
    assert {p.name for p in GUIDES.glob("*.md")} == tested


def test_the_new_game_guide_plays_and_reports(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    registries: None,
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace, printed = run_guide(GUIDES / "new-game.md", capsys)
    assert namespace["summary"].finished == 8 and "episodes finished" in printed
    assert (tmp_path / "results" / "high-card" / "stratagem.db").exists()
    # Each LLM seat was prompted with its own card, dealt by the engine and seen by that seat only.
    with stratagem.open("results/high-card") as results:
        calls, events = results.calls, results.events
    deals = events[events["kind"] == "deal"]
    cards = {(e, json.loads(d)["player"]): json.loads(d)["card"]
             for e, d in zip(deals["episode_id"], deals["data"], strict=True)}  # fmt: skip
    assert len(cards) == 24 and len(calls) == 16  # 8 games x 3 seats; 4 + 4 x 3 LLM seats
    for data, seen in zip(deals["data"], deals["visible_to"], strict=True):
        assert json.loads(seen) == [json.loads(data)["player"]]  # stored as private
    for episode, seat, request in zip(
        calls["episode_id"], calls["seat"], calls["request"], strict=True
    ):
        prompt = json.loads(request)["messages"][-1]["content"]
        assert f"Your card is {cards[episode, seat]}." in prompt


def test_the_new_architecture_guide_registers_and_plays(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    registries: None,
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace, printed = run_guide(GUIDES / "new-architecture.md", capsys)
    assert namespace["summary"].finished == 2
    assert "analysis" in printed and "decision" in printed  # a note before each move


def test_the_new_study_guide_adds_a_report_section(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    registries: None,
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace, _ = run_guide(GUIDES / "new-study.md", capsys)
    assert len(namespace["games"]) == 4
    report = next((tmp_path / "results" / "fairness").glob("report-*.html"))
    assert "at least 30%" in report.read_text(encoding="utf-8")  # the --set of the command


@pytest.fixture
def guide_server(tmp_path: Path) -> Iterator[int]:
    """The guide's own server command (its `bash` block), run as written on a free port."""
    (command,) = [
        code.strip() for kind, code in blocks(GUIDES / "local-server.md") if kind == "bash"
    ]
    port = free_port()
    command = command.replace("--port 8000", f"--port {port}")
    command = command.replace(".venv/bin/python", shlex.quote(sys.executable))
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            ["bash", "-c", f"exec {command}"], stdout=log, stderr=subprocess.STDOUT
        )
        try:
            wait_ready(process, f"http://127.0.0.1:{port}/v1/models", log_path)
            yield port
        finally:
            stop(process)


def test_the_local_server_guide_runs_a_study_on_the_server(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    guide_server: int,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run_guide(GUIDES / "local-server.md", capsys, {"127.0.0.1:8000": f"127.0.0.1:{guide_server}"})
    with stratagem.open("results/local-server") as results:
        assert list(results.episodes["status"]) == ["finished", "finished"]
        calls = results.calls
    assert len(calls) >= 6 and not calls["cached"].any()  # the second run asked nothing
    assert next((tmp_path / "results" / "local-server").glob("report-*.html")).exists()
