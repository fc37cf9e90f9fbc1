"""The thesis' and ToM's comparison tables show the noise floor their differences must beat (issue
35, item 2), as the counterfactual and MAgIC tables do: where the store holds replicate copies of
their cells, the note under each table gives the floor, checked here against the floor computed
by hand from the stored games (each copy minus its cell, paired by seed; t(level, C) times the
root mean square over the C cells); without copies there is no floor line."""

from __future__ import annotations

import asyncio
import html
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from scipy import stats
from support.tom_games import EXPERIMENT, new_store, play

from stratagem.analysis.episodes import load_episodes
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.replicates import replicate_of
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.studies import build_report
from stratagem.studies.tom.extract import tom_data
from stratagem.studies.tom.options import DEFAULTS
from stratagem.studies.tom.section_comparisons import KL, WIN, measures

FLOOR = re.compile(r"Noise floor of the ([\w ()]+): ±([\d.]+)")


def floors(report: Path) -> dict[str, float]:
    text = html.unescape(report.read_text(encoding="utf-8"))
    return {m[1]: float(m[2]) for m in FLOOR.finditer(text)}


def by_hand(values: dict[tuple[Any, ...], dict[int, float]], level: float) -> float:
    """The floor of cells whose values are given by (cell, seed) -> {replicate: value}."""
    per_cell: dict[Any, list[float]] = defaultdict(list)
    for (cell, _), found in values.items():
        if 0 in found and 1 in found:
            per_cell[cell].append(found[1] - found[0])
    deltas = [sum(d) / len(d) for d in per_cell.values()]
    rms = math.sqrt(sum(d * d for d in deltas) / len(deltas))
    return float(stats.t.ppf((1 + level) / 2, len(deltas))) * rms


# -- the thesis -----------------------------------------------------------------------------------


def run_thesis(folder: Path, **settings: object) -> Path:
    """Two plain configurations (the thesis' tables name them apart) against two rule-based
    opponents in its Prisoner's Dilemma, on a sampling model."""
    data = {
        "name": "th",
        "output": str(folder),
        "models": [{"model": "scripted/random:5"}],
        "agents": [
            {"name": "plain-a", "framing": "prisoner", "output": "choice"},
            {"name": "plain-b", "framing": "prisoner", "output": "choice", "temperature": 0.5},
        ],
        "games": ["dilemma"],
        "opponents": ["TitForTat", "AlwaysDefect"],
        "rounds": [4],
        "seeds": [0, 1, 2],
        "retry": {"base_delay": 0},
        **settings,
    }
    summary = asyncio.run(Runner(config_from_dict(data, "test"), show_progress=False).run())
    assert summary.failed == 0, summary.errors
    return folder / STORE_FILE


def test_the_thesis_comparisons_show_the_noise_floor_of_the_cooperation_rate(
    tmp_path: Path,
) -> None:
    db = run_thesis(tmp_path / "copies", replicates=1)
    shown = floors(build_report(db))
    # CR as seed-001 §9 counts it: the share of rounds in which seat 0 played the first action.
    values: dict[tuple[Any, ...], dict[int, float]] = defaultdict(dict)
    with ResultStore(db) as store:
        for e in load_episodes(store, "th"):
            first = e.record.labels[0][0]
            cr = sum(r.actions[0] == first for r in e.rounds) / len(e.rounds)
            cell = (e.agent_name.split(" [")[0], e.spec["opponent"])
            values[(cell, e.record.seed)][replicate_of(e.spec)] = cr
    assert len(values) == 12 and all(len(v) == 2 for v in values.values())
    assert set(shown) == {"cooperation rate (CR)"}, shown  # under the thesis' table alone
    assert abs(shown["cooperation rate (CR)"] - by_hand(values, 0.95)) <= 0.005  # 2 decimals
    assert not floors(build_report(run_thesis(tmp_path / "none")))  # no copies, no floor line


# -- ToM ------------------------------------------------------------------------------------------


def tom_store(path: Path, copies: bool) -> Path:
    """V0, V1 and V2 groups on three instances; with `copies`, each game again as its cell's
    replicate 1, whose draws differ (as a sampling model's would)."""
    model = "openai/gpt-test"
    with new_store(path) as store:
        for group in ("V0", "V1", "V2"):
            for instance in range(3):
                play(store, f"{group}-{instance}", group=group, instance=instance, model=model)
                if not copies:
                    continue
                eid = f"{group}-{instance}-copy"
                seats = [
                    {"name": f"tom:{model}", "kind": "llm", "model": model, "agent": f"tom-{g}"}
                    for g in (group, "V0")
                ]
                store.add_episode(  # the copy's row first: play() then keeps it
                    eid, EXPERIMENT, f"tradecraft/{instance}", seats, seed=0,
                    spec={"replicate": 1},
                )  # fmt: skip
                play(store, eid, group=group, instance=instance, model=model, seed=7)
    return path


def test_the_tom_comparisons_show_each_measures_noise_floor(tmp_path: Path) -> None:
    db = tom_store(tmp_path / "copies" / STORE_FILE, copies=True)
    shown = floors(build_report(db))
    with ResultStore(db) as store:
        episodes = load_episodes(store, EXPERIMENT)
        games = tom_data(episodes, store.beliefs, DEFAULTS).games
    by_id = {e.record.id: e for e in episodes}
    found = measures(games, DEFAULTS)
    for measure, name in ((KL, "mean KL of a game"), (WIN, "focal win rate")):
        values: dict[tuple[Any, ...], dict[int, float]] = defaultdict(dict)
        for g in games:
            if g.episode_id in found[measure]:
                spec = by_id[g.episode_id].spec
                values[((g.group, g.instance), 0)][replicate_of(spec)] = found[measure][
                    g.episode_id
                ]
        expected = by_hand(values, DEFAULTS.level)  # the study's 90% level
        assert abs(shown[name] - expected) <= 0.0005, (name, shown, expected)  # 3 decimals
    assert "the difference two identical cells stay within 90% of the time" in html.unescape(
        build_report(db).read_text(encoding="utf-8")
    )
    none = tom_store(tmp_path / "none" / STORE_FILE, copies=False)
    assert not floors(build_report(none))
