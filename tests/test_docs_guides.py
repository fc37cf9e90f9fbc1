"""Every guide under docs/guides/ runs: its files written where the guide says (a block whose
first line is `# file: PATH` or `{# file: PATH #}`), its Python blocks in order in one namespace,
its `stratagem` commands through the CLI, in a fresh folder; so a guide cannot rot.

What a guide registers (a game, prompts, an architecture, a study, a script) is removed again
after it, so the registries the other tests see are the package's own. A guide's `pip install`
of its own package installs it (not editable) into a folder of the test's, put on `sys.path` for
the guide's commands, so the shared environment is never changed."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import cli
from support.guide_files import FILE, GUIDES, blocks, install
from support.llama_server import free_port, stop, wait_ready

import stratagem
from stratagem import plugins
from stratagem.agents import game_prompts, registry
from stratagem.analysis import report_registry
from stratagem.games import catalog
from stratagem.llm.providers import scripted
from stratagem.studies import registry as studies

REGISTRIES: list[Any] = [
    catalog.GAMES,
    game_prompts.GAME_PROMPTS,
    registry.ARCHITECTURES,
    studies.STUDIES,
    studies.IMPORTERS,
    studies.EXPORTERS,
    report_registry._REGISTRY,
    scripted._REGISTERED,
]


@pytest.fixture
def registries() -> Iterator[None]:
    saved = [r.snapshot() if isinstance(r, plugins.Registry) else dict(r) for r in REGISTRIES]
    path = list(sys.path)
    with plugins.isolated():
        yield
    sys.path[:] = path
    for live, before in zip(REGISTRIES, saved, strict=True):
        if isinstance(live, plugins.Registry):
            live.restore(before)
        else:
            live.clear()
            live.update(before)
    guide = ("guide_", *INSTALLED)
    for name in [m for m in sys.modules if m.startswith(guide)]:
        del sys.modules[name]
    INSTALLED.clear()
    plugins.rediscover()


INSTALLED: list[str] = []
"""The top-level modules of the packages a guide installed (forgotten after it)."""


def pip_install(line: str, site: Path) -> None:
    """`pip install [-e] DIR` of a guide: DIR installed into `site`, which goes on `sys.path`;
    stratagem then finds the package's entry point as a user's would."""
    folder = Path(shlex.split(line)[-1])
    install(folder, site)
    sys.path.insert(0, str(site))
    INSTALLED.extend(p.name for p in (folder / "src").iterdir() if p.is_dir())
    plugins.rediscover()


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
                if line.startswith("pip install "):
                    pip_install(line, Path.cwd() / ".site")
                elif line.startswith("stratagem "):
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
    _, printed = run_guide(GUIDES / "new-game.md", capsys)
    assert "highcard:high-card" in printed and "highcard:by-card" in printed  # the listings
    assert "8 finished" in printed or "finished: 8" in printed or "8 episodes" in printed
    # Each LLM seat was prompted with its own card, dealt by the engine and seen by that seat only.
    with stratagem.open("results/high-card") as results:
        calls, events, episodes = results.calls, results.events, results.episodes
    assert list(episodes["status"]) == ["finished"] * 8
    assert set(episodes["game"]) == {"highcard:high-card"}
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
    # Every episode names the distribution and version that supplied its game and model.
    for spec in episodes["spec"]:
        assert {"plugin": "highcard", "distribution": "highcard", "version": "0.1.0"} in (
            json.loads(spec)["plugins"]
        )
    assert next((tmp_path / "results" / "high-card").glob("report-*.html")).exists()
    assert (tmp_path / "site" / "index.html").exists()
    with stratagem.open("copy") as copied:  # imported through the engine: replayed, equal
        assert len(copied.episodes) == 8 and len(copied.events) == len(events)

    # The plugin's game as a PettingZoo environment, every seat staying.
    env = stratagem.env("highcard:high-card")
    env.reset(seed=3)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        _, reward, done, cut, _ = env.last()
        returns[agent] += reward
        env.step(None if done or cut else "stay")  # a text action space: the typed line
    assert len(returns) == 3 and sum(returns.values()) == 0

    # Uninstalled, the results say in one line what is missing, wherever they are read: what
    # reads them goes on with what was stored (the viewer's generic view, the report's general
    # sections); an import, which replays each episode with the plugin's rules, is refused.
    sys.path.remove(str(tmp_path / ".site"))
    for name in [m for m in sys.modules if m.startswith("highcard")]:
        del sys.modules[name]
    plugins.rediscover()
    install = "plugin 'highcard', not installed: pip install 'highcard==0.1.0'"
    for command in (["view", "results/high-card", "--export", "site2"],
                    ["show", "results/high-card"], ["report", "results/high-card"]):  # fmt: skip
        status, _, err = cli(capsys, *command)
        assert status == 0, (command, err)
        warnings = [line for line in err.splitlines() if install in line]
        assert len(warnings) == 1 and "Traceback" not in err, (command, err)
    assert (tmp_path / "site2" / "index.html").exists()
    status, _, err = cli(capsys, "import", "high-card.jsonl", "--store", "third")
    assert status == 2 and install in err and "Traceback" not in err, err
    assert not (tmp_path / "third").exists()


def test_the_new_architecture_guide_registers_and_plays(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    registries: None,
) -> None:
    monkeypatch.chdir(tmp_path)
    _, printed = run_guide(GUIDES / "new-architecture.md", capsys)
    assert "notes:scratchpad" in printed and "notes:thinker" in printed  # the listings
    assert "about 6 model calls" in printed  # the plan: two calls per decision, three decisions
    with stratagem.open("results/scratchpad") as results:
        calls, episodes = results.calls, results.episodes
    assert list(episodes["status"]) == ["finished"] * 2 and set(episodes["game"]) == {"ultimatum"}
    for spec in map(json.loads, episodes["spec"]):
        agents = [seat["agent"] for seat in spec["seats"] if "agent" in seat]
        assert {(a["kind"], a["options"]["note_tokens"]) for a in agents} == {
            ("notes:scratchpad", 60)
        }
        assert spec["plugins"] == [{"plugin": "notes", "distribution": "notes", "version": "0.1.0"}]
    assert set(calls["model"]) == {"notes:thinker/40"}
    # Each decision is a note (purpose `analysis`, the entry's note_tokens), then the move with
    # the note in the conversation: 3 decisions (the proposers' two, one LLM responder's).
    note = "The pie is 100 points; an even-handed split is likely to be accepted."
    ordered = calls.sort_values(["episode_id", "seq"])
    requests = [json.loads(r) for r in ordered["request"]]
    seats = list(ordered["seat"])
    assert [r["purpose"] for r in requests] == ["analysis", "decision"] * 3
    for first, then, seat, same in zip(
        requests[::2], requests[1::2], seats[::2], seats[1::2], strict=True
    ):
        assert seat == same and first["max_tokens"] == 60
        assert then["messages"][2]["role"] == "assistant"
        assert then["messages"][2]["content"] == note
    both = ordered["episode_id"][ordered["seat"] == 1].iloc[0]  # the one of two LLM seats
    status, shown, _ = cli(capsys, "show", "results/scratchpad", both)
    assert status == 0 and "seat 1: thinker:notes:thinker/40 (llm)" in shown
    steps = [
        "seat 0 was asked (analysis)",
        note,
        "seat 0 was asked (decision)",
        "seat 0 played 40",
        "seat 1 was asked (analysis)",
        "seat 1 was asked (decision)",
        "seat 1 played 'accept'",
    ]
    assert [shown.index(s) for s in steps] == sorted(shown.index(s) for s in steps)
    assert (tmp_path / "results" / "scratchpad" / "report-scratchpad.html").exists()
    assert (tmp_path / "site" / "index.html").exists()
    with stratagem.open("copy") as copied:  # imported through the engine: replayed, equal
        assert sorted(copied.episodes["episode_id"]) == sorted(episodes["episode_id"])
        assert set(copied.episodes["status"]) == {"finished"}


def test_the_new_study_guide_adds_a_report_section(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    registries: None,
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace, printed = run_guide(GUIDES / "new-study.md", capsys)
    assert "studies: fairness:offers" in printed  # the listing
    with stratagem.open("results/fairness") as results:
        episodes = results.episodes
        (experiment,) = results.experiment_ids
        record = results.store.experiment(experiment)
    assert record is not None and record.config is not None
    assert list(episodes["status"]) == ["finished"] * 4 and set(episodes["game"]) == {"ultimatum"}
    assert record.config["analysis"] == {"fairness:offers": {"fair_share": 0.4}}
    for spec in map(json.loads, episodes["spec"]):
        assert "plugins" not in spec  # a study changes no play: the episodes record no plugin
    assert len(namespace["games"]) == 4 and namespace["generous"]["fair"].all()
    html = (tmp_path / "results" / "fairness" / "report-fairness.html").read_text(encoding="utf-8")
    assert "Fairness in the Ultimatum game" in html and "Offers per proposer" in html
    assert "at least 30%" in html  # the --set of the command, said to differ from the default
    assert "fair_share = 0.3 (default 0.4)" in html
    # A report in a fresh process loads the plugin because the experiment file names its study.
    env = {**os.environ, "PYTHONPATH": str(tmp_path / ".site")}
    subprocess.run(
        [sys.executable, "-c", "import sys; from stratagem.cli import main; main(sys.argv[1:])",
         "report", "results/fairness", "--out", "fresh.html"],
        check=True, env=env, capture_output=True,
    )  # fmt: skip
    fresh = (tmp_path / "fresh.html").read_text(encoding="utf-8")
    assert "Fairness in the Ultimatum game" in fresh and "at least 40%" in fresh
    # An option the study does not have is one line naming the ones it has.
    status, _, err = cli(capsys, "report", "results/fairness", "--set", "fairness:offers.share=1")
    assert status == 2 and "valid: fairness:offers.fair_share" in err
    assert len(err.strip().splitlines()) == 1
    assert (tmp_path / "site" / "index.html").exists()
    with stratagem.open("copy") as copied:  # imported through the engine: replayed, equal
        assert sorted(copied.episodes["episode_id"]) == sorted(episodes["episode_id"])


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
