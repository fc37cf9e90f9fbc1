"""`scripted:` seats: actions separated by commas, or a JSON list for actions that hold commas
(TradeCraft's JSON moves, issue 23 item 14). The engine checks every scripted action."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.lineups import script_actions
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore

# Seat 0 offers two items for two, with a message that has a comma; seat 1 accepts with one,
# crafts nothing, then passes (""); seat 0 accepts the empty proposal.
PROPOSAL = (
    '{"offer": {"coal": 1, "iron_ingot": 1}, "request": {"raw_iron": 2, "oak_planks": 1},'
    ' "message": "coal and iron, for your iron and planks"}'
)
SEATS = [
    f'scripted:[{PROPOSAL}, [], {{"decision": "accept"}}, []]',
    'scripted:[{"decision": "accept", "message": "yes, gladly"}, [], "", []]',
]


def test_a_json_list_scripts_moves_with_commas(tmp_path: Path) -> None:
    config = {
        "name": "scripted",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/cooperate"}],
        "games": ["tradecraft/0"],
        "rounds": [2],
        "lineups": [SEATS],
    }
    summary = asyncio.run(Runner(config_from_dict(config, "test"), show_progress=False).run())
    assert (summary.finished, summary.failed) == (1, 0), summary.errors
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        (episode,) = store.episodes()
        decisions = store.events(episode.id, "decision")
        assert all(d.data["valid"] for d in decisions)
        trade, empty = store.events(episode.id, "trade")  # turn 2: seat 1 passes ("")
        assert trade.data["offer"] == {"minecraft:coal": 1, "minecraft:iron_ingot": 1}
        assert trade.data["request"] == {"minecraft:oak_planks": 1, "minecraft:raw_iron": 2}
        assert (empty.data["offer"], empty.data["request"]) == ({}, {})
        (reply, _) = store.events(episode.id, "reply")
        assert reply.data["message"] == "yes, gladly"


def test_script_actions_read_both_forms() -> None:
    assert script_actions("C, D", "x") == ("C", "D")
    assert script_actions('[{"a": [1, 2]}, "accept", 3, ""]', "x") == (
        '{"a":[1,2]}', "accept", "3", "",
    )  # fmt: skip
    for bad, why in [
        ("C,,D", "needs actions"),
        ("[1, ", "is not a JSON list"),
        ("[]", "must list actions"),
        ("[true]", "must list actions"),
    ]:
        with pytest.raises(StratagemError, match=f"^lineups.0.1: .*{why}"):
            script_actions(bad, "lineups.0.1")
