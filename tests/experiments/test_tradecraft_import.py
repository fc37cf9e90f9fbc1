"""A TradeCraft export imported back is checked by the engine (issue 23 item 6): games played by
the runner (a trade, an invalid proposal played as the game's pass, a timeout) come back whole,
and a line with one field damaged (a proposal of items not held, a craft of "1/0", forged hands,
a forged outcome, the payoffs, the instance) is refused with `file:line: field: why`, nothing
imported; `--no-strict` lists it and imports the other game."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import cli

from stratagem.experiments.config import config_from_dict
from stratagem.experiments.episode_io import export_episodes
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore

Line = dict[str, Any]

# Seat 0 gives its coal, crafts nothing, accepts, crafts nothing; seat 1 accepts, crafts nothing,
# then proposes a diamond it does not hold (invalid: the game plays an empty proposal).
SEATS = [
    'scripted:{"offer":{"coal":1}},[],accept,[]',
    'scripted:accept,[],{"offer":{"diamond":1}},[]',
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tradecraft")
    config = {
        "name": "trade",
        "output": str(folder / "out"),
        "models": [{"model": "scripted/cooperate"}],
        "agents": [{"name": "plain"}],
        "games": ["tradecraft/0", "tradecraft/1"],
        "rounds": [2],
        "lineups": [SEATS],
    }
    summary = asyncio.run(Runner(config_from_dict(config, "test"), show_progress=False).run())
    assert summary.failed == 0, summary.errors
    path = folder / "trade.jsonl"
    with ResultStore(folder / "out" / STORE_FILE) as store:
        assert export_episodes(store, path) == 2
        first = next(ep for ep in store.episodes() if ep.game == "tradecraft/0")
        kinds = {e.kind for e in store.events(first.id)}
        assert {"trade", "hands", "invalid", "outcome"} <= kinds  # what the cases damage
    return path


def lines_of(path: Path) -> list[Line]:
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]


def test_an_honest_tradecraft_export_imports_whole(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "import", str(exported), "--store", str(tmp_path / "copy"))
    assert code == 0, err
    assert "imported 2 episodes" in out
    again = tmp_path / "again.jsonl"
    with ResultStore(tmp_path / "copy" / STORE_FILE) as copy:
        export_episodes(copy, again)
    assert again.read_text(encoding="utf-8") == exported.read_text(encoding="utf-8")


def _first(line: Line, match: Callable[[dict[str, Any]], bool]) -> int:
    return next(i for i, e in enumerate(line["events"]) if match(e))


def _decision(line: Line, action: Callable[[Any], bool]) -> int:
    return _first(line, lambda e: e["kind"] == "decision" and action(e["data"]["action"]))


def proposal_of_99_diamonds(line: Line) -> str:
    i = _decision(line, lambda a: isinstance(a, str) and "offer" in a)
    line["events"][i]["data"]["action"] = '{"offer": {"diamond": 99}}'
    return (
        f"events[{i}].data.action: the engine refuses the move: illegal proposal: you hold 0 "
        "minecraft:diamond, not 99"
    )


def craft_of_1_over_0(line: Line) -> str:
    i = _decision(line, lambda a: a == "[]")
    line["events"][i]["data"]["action"] = '[{"input": {"coal": "1/0"}, "output": {"torch": 4}}]'
    return (
        f"events[{i}].data.action: the engine refuses the move: illegal craft: minecraft:coal "
        "amount '1/0' is not a number"
    )


def forged_hands(line: Line) -> str:
    i = _first(line, lambda e: e["kind"] == "hands")
    line["events"][i]["data"]["hands"][0]["minecraft:diamond"] = 64
    return f"events[{i}].data.hands[0].minecraft:diamond: the engine computes no such field"


def forged_outcome(line: Line) -> str:
    i = _first(line, lambda e: e["kind"] == "outcome")
    outcome = line["events"][i]["data"]
    outcome.update(outcome="win", winners=[0], payoffs=[3.0, 0.0])
    line["payoffs"] = [3.0, 0.0]
    return f'events[{i}].data.outcome: expected "timeout" as the engine computes it, got "win"'


def payoffs_of_1000(line: Line) -> str:
    line["payoffs"] = [1000, 0]
    return "payoffs: expected [0.0, 0.0] as the engine computes it, got [1000.0, 0.0]"


def instance_999(line: Line) -> str:
    line["game"]["name"] = "tradecraft/999"
    return "game.name: tradecraft-instances: setting must be an integer in 0..39, got 999"


CASES = [
    proposal_of_99_diamonds,
    craft_of_1_over_0,
    forged_hands,
    forged_outcome,
    payoffs_of_1000,
    instance_999,
]


@pytest.mark.parametrize("damage", CASES, ids=[d.__name__ for d in CASES])
def test_a_damaged_line_is_refused_by_the_engine(
    exported: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[Line], str],
) -> None:
    lines = lines_of(exported)
    k = next(k for k, line in enumerate(lines) if line["game"]["name"] == "tradecraft/0")
    why = damage(lines[k])
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    store = tmp_path / "store"
    code, _, err = cli(capsys, "import", str(path), "--store", str(store))
    assert code == 2
    assert err.startswith(f"error: {path}:{k + 1}: {why}"), err
    assert err.rstrip().endswith("(nothing imported)") and len(err.strip().splitlines()) == 1
    if (store / STORE_FILE).exists():
        with ResultStore(store / STORE_FILE) as db:
            assert db.episodes() == []
    code, out, _ = cli(capsys, "import", str(path), "--store", str(store), "--no-strict")
    assert code == 0 and "imported 1 episodes" in out
    assert f"not imported: {path}:{k + 1}: {why}" in out
    with ResultStore(store / STORE_FILE) as db:
        assert [ep.game for ep in db.episodes()] == ["tradecraft/1"]
