"""`stratagem show`: an episode as a transcript in the terminal, as a user runs it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.scripted_run import run_scripted

from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

SNEAKY = "[bold red]I cooperate[/] \x1b[2J\x1b[31mred [/x]"
"""A message with console markup, a broken markup tag and terminal escape sequences."""


@pytest.fixture
def talk() -> Iterator[None]:
    def reply(request: Request, sample: int) -> str:
        return "defect" if request.choices else SNEAKY

    register_script("show-talk", reply)
    yield
    _REGISTERED.pop("show-talk", None)


def run(tmp_path: Path, **settings: Any) -> Path:
    data = {
        "name": "talk",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/show-talk"}],
        "agents": [{"name": "plain"}],
        "games": ["dilemma-talk"],
        "lineups": [["plain", "plain"]],
        "rounds": [2],
        **settings,
    }
    path = tmp_path / "talk.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    summary = asyncio.run(Runner(load_config(path), show_progress=False).run())
    assert summary.failed == 0
    return tmp_path / "out"


def test_show_lists_episodes_then_prints_one_round_by_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], talk: None
) -> None:
    out_dir = run(tmp_path)
    with ResultStore(out_dir / STORE_FILE) as store:
        (episode,) = store.episodes()

    code, listing, _ = cli(capsys, "show", str(out_dir))
    assert code == 0 and episode.id in listing and "dilemma-talk" in listing

    code, text, _ = cli(capsys, "show", str(out_dir), episode.id[:6])
    assert code == 0
    lines = text.splitlines()
    assert lines[0] == f"episode {episode.id}: dilemma-talk, finished, seed 0"
    assert "round 1" in lines and "round 2" in lines
    # Round 1 in the order it happened: both messages (each seat's prompt, reply, decision),
    # the messages everyone heard, then both moves and the round's result.
    first = text[text.index("round 1") : text.index("round 2")]
    order = [
        "seat 0 was asked", "seat 0 replied", "seat 0 played",
        "seat 1 was asked", "seat 1 replied", "seat 1 played",
        "messages:",
        "seat 0 played 'defect'", "seat 1 played 'defect'",
        "moves: seat 0: defect, seat 1: defect; scored 5, 5",
    ]  # fmt: skip
    positions = [first.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "[seen by no seat (record only)]" in first  # each seat's own decision is hidden
    assert text.rstrip().endswith("payoffs: 10, 10")
    # Model text is printed as written: markup is not interpreted, escapes are shown as codes.
    assert "[bold red]I cooperate[/]" in text and "[/x]" in text
    assert "\x1b" not in text and "\\x1b[2J" in text


def test_show_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], talk: None
) -> None:
    out_dir = run(tmp_path)
    code, _, err = cli(capsys, "show", str(out_dir), "zzzz")
    assert code == 2 and err.strip() == "error: no episode id starts with 'zzzz'"
    code, _, err = cli(capsys, "show", str(tmp_path / "nowhere"))
    assert code == 2 and "does not exist" in err and len(err.strip().splitlines()) == 1


def test_a_forfeited_round_reads_as_one_story(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PD forfeits a round whose reply stays invalid: `show` says the seat made no valid move,
    that no move was named in its place, and the round's missing move, in agreement (issue 33
    item 11)."""
    out = tmp_path / "out"
    summary = run_scripted(
        out, "forfeit", lambda r, s: "banana", rounds=[1], agents=[{"name": "a", "max_reasks": 0}]
    )
    assert summary.finished == 1, summary.errors
    with ResultStore(out / STORE_FILE) as store:
        (episode,) = store.episodes()
    code, text, err = cli(capsys, "show", str(out), episode.id)
    assert code == 0, err
    lines = [line.strip() for line in text.splitlines()]
    assert any(
        line.startswith("seat 0 made no valid move (invalid, 1 attempt(s), ") for line in lines
    )
    (invalid,) = [line for line in lines if line.startswith("seat 0 invalid: ")]
    assert invalid.endswith(
        "; the game's rule for a missing move applied [seen by no seat (record only)]"
    )
    assert (
        "moves: seat 0: (no valid move), seat 1: cooperation;" in text
        and "played nothing" not in text
    )
