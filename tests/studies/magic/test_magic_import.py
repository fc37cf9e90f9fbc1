"""A MAgIC export imported back is checked by the engine (issue 23 item 6): the 26 scripted games
of the five seed-004 games (invalid replies included) come back whole, and a line with one field
damaged (a move, an outcome, the payoffs, the setting) is refused with `file:line: field: why`,
nothing imported; `--no-strict` lists it and imports the others."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import GAMES
from support.cli import cli

from stratagem.experiments.episode_io import export_episodes
from stratagem.experiments.store import ResultStore

Line = dict[str, Any]


@pytest.fixture(scope="module")
def exported(magic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("magic-export") / "magic.jsonl"
    with ResultStore(magic_store) as store:
        assert export_episodes(store, path) == 26
    return path


def lines_of(path: Path) -> list[Line]:
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]


def test_an_honest_export_of_the_five_games_imports_whole(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "import", str(exported), "--store", str(tmp_path / "copy"))
    assert code == 0, err
    assert "imported 26 episodes" in out
    with ResultStore(tmp_path / "copy" / "stratagem.db") as copy:
        games = Counter(ep.game.partition("/")[0] for ep in copy.episodes())
        assert games == {"chameleon": 4, "undercover": 4, **{g: 6 for g in GAMES[2:]}}
        again = tmp_path / "again.jsonl"
        export_episodes(copy, again)
    assert again.read_text(encoding="utf-8") == exported.read_text(encoding="utf-8")


def _first(line: Line, match: Callable[[dict[str, Any]], bool]) -> int:
    return next(i for i, e in enumerate(line["events"]) if match(e))


def vote_for_player_9(line: Line) -> str:
    i = _first(
        line, lambda e: e["kind"] == "decision" and str(e["data"]["action"]).startswith("Player")
    )
    line["events"][i]["data"]["action"] = "Player 9"
    return f"events[{i}].data.action: the engine refuses the move: illegal action 'Player 9'"


def payoffs_of_1000(line: Line) -> str:
    honest = line["payoffs"]
    line["payoffs"] = [1000, 0, 0]
    return (
        f"payoffs: expected {json.dumps(honest)} as the engine computes it, got [1000.0, 0.0, 0.0]"
    )


def forged_outcome(line: Line) -> str:
    """Another ending (more credits to seat 0), forged in the outcome and the payoffs alike."""
    i = _first(line, lambda e: e["kind"] == "outcome")
    outcome = line["events"][i]["data"]
    honest = list(outcome["credits"])
    outcome["credits"][0] = line["payoffs"][0] = honest[0] + 2
    outcome["win_flag"], outcome["result"] = 1, "forged"
    return (
        f"events[{i}].data.credits: expected {json.dumps(honest)} as the engine computes it, "
        f"got {json.dumps(outcome['credits'])}"
    )


def setting_999(line: Line) -> str:
    line["game"]["name"] = line["game"]["name"].partition("/")[0] + "/999"
    return "game.name: chameleon: setting must be an integer in 0..95, got 999"


def regenerated_setting(line: Line) -> str:
    """A setting's content, as the run stored it, that is not the catalog's any more."""
    line["spec"]["setting"]["code"] = "Durian"
    return (
        "spec.setting: not setting 0 of 'chameleon' as this stratagem has it (were the settings "
        "regenerated?), so the engine cannot replay it"
    )


def legal_but_other_proposal(line: Line) -> str:
    """A move the rules allow, but not the one that was played: the events no longer follow."""
    i = _first(line, lambda e: e["kind"] == "decision" and "/" in str(e["data"]["action"]))
    honest = line["events"][i]["data"]["action"]
    line["events"][i]["data"]["action"] = "100/0/0"
    j = _first(line, lambda e: e["kind"] == "proposal")
    return (
        f'events[{j}].data.proposal: expected "100/0/0" as the engine computes it, got "{honest}"'
    )


def contribution_beyond_the_endowment(line: Line) -> str:
    i = _first(line, lambda e: e["kind"] == "decision" and isinstance(e["data"]["action"], int))
    line["events"][i]["data"]["action"] = 10**6
    return f"events[{i}].data.action: the engine refuses the move: illegal action 1000000"


def defection_rewritten(line: Line) -> str:
    line["rounds"][0]["actions"] = ["cooperate"] * 3
    line["rounds"][0]["payoffs"] = [line["rounds"][0]["payoffs"][0]] * 3
    return "rounds[0].actions: expected ["


def moves_removed(line: Line) -> str:
    line["events"] = [e for e in line["events"] if e["kind"] != "decision"]
    return "events: the moves end before the game does (players [0] move next)"


CASES = [
    ("chameleon/0", vote_for_player_9),
    ("chameleon/0", payoffs_of_1000),
    ("chameleon/1", forged_outcome),
    ("chameleon/0", setting_999),
    ("chameleon/0", regenerated_setting),
    ("undercover/1", forged_outcome),
    ("undercover/0", vote_for_player_9),
    ("cost-sharing/0", legal_but_other_proposal),
    ("cost-sharing/1", payoffs_of_1000),
    ("npd3/0", defection_rewritten),
    ("npd3/1", payoffs_of_1000),
    ("public-good/0", contribution_beyond_the_endowment),
    ("public-good/1", payoffs_of_1000),
    ("chameleon/1", moves_removed),
]


@pytest.mark.parametrize(("game", "damage"), CASES, ids=[f"{g}-{d.__name__}" for g, d in CASES])
def test_a_damaged_line_is_refused_by_the_engine(
    exported: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    game: str,
    damage: Callable[[Line], str],
) -> None:
    lines = lines_of(exported)
    k = next(k for k, line in enumerate(lines) if line["game"]["name"] == game)
    why = damage(lines[k])
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    store = tmp_path / "store"
    code, out, err = cli(capsys, "import", str(path), "--store", str(store))
    assert code == 2
    assert err.startswith(f"error: {path}:{k + 1}: {why}"), err
    assert err.rstrip().endswith("(nothing imported)") and len(err.strip().splitlines()) == 1
    if (store / "stratagem.db").exists():
        with ResultStore(store / "stratagem.db") as db:
            assert db.episodes() == []
    code, out, _ = cli(capsys, "import", str(path), "--store", str(store), "--no-strict")
    assert code == 0
    assert "imported 25 episodes" in out
    assert f"not imported: {path}:{k + 1}: {why}" in out
    with ResultStore(store / "stratagem.db") as db:
        assert lines[k]["id"] not in {ep.id for ep in db.episodes()}
        assert all(ep.payoffs is None or max(ep.payoffs) < 1000 for ep in db.episodes())
