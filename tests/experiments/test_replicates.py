"""`replicates:`: every cell played again under new sampling seeds (issue 35 item 2). Episode ids
(a file without the setting, and the cells' own episodes of a file with it, keep theirs), the
copies' ids and seeds, the plan that counts them, and a finished experiment that gains the
setting plays only the copies."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.small_experiment import experiment

from stratagem.errors import StratagemError
from stratagem.experiments.config import ExperimentConfig, config_from_dict, load_config
from stratagem.experiments.drift import changed_settings
from stratagem.experiments.grid import Grid, expand
from stratagem.experiments.replicates import replicate_of, replicated, unreplicated
from stratagem.experiments.runner import CACHE_FILE, STORE_FILE, Runner
from stratagem.experiments.seating import seat_seed
from stratagem.experiments.store import ResultStore

DATA = Path(__file__).resolve().parents[1] / "data"


def config(tmp_path: Path, **overrides: Any) -> ExperimentConfig:
    data = experiment(
        tmp_path,
        agents=[{"name": "plain"}, {"name": "twice", "repetitions": 2}],
        opponents=["TitForTat", "agent:plain"],
        lineups=[["plain", "AlwaysDefect"]],
        seeds=[0, 1],
    )
    return config_from_dict({**data, **overrides}, "exp.yaml", base=tmp_path)


def test_the_cells_own_episodes_keep_their_ids(tmp_path: Path) -> None:
    plain = expand(config(tmp_path))
    assert all(s.replicate == 0 and "replicate" not in s.key() for s in plain)
    assert expand(config(tmp_path, replicates=0)) == plain
    specs = expand(config(tmp_path, replicates=2))
    assert len(specs) == 3 * len(plain) == Grid(config(tmp_path, replicates=2)).size()
    own = [s for s in specs if s.replicate == 0]
    assert [s.id for s in own] == [s.id for s in plain]
    assert [s.stored() for s in own] == [s.stored() for s in plain]
    # Each episode is followed by its copies, alike in everything but the replicate number.
    for i, spec in enumerate(own):
        copies = specs[3 * i + 1 : 3 * i + 3]
        assert [c.replicate for c in copies] == [1, 2]
        for copy in copies:
            assert (copy.game, copy.seats, copy.rounds, copy.seed, copy.repetition) == (
                spec.game, spec.seats, spec.rounds, spec.seed, spec.repetition
            )  # fmt: skip
            assert copy.key() == spec.key() | {"replicate": copy.replicate}


def test_copies_sample_under_new_seeds_that_replay(tmp_path: Path) -> None:
    """Every seat's seed comes from the episode id (`experiments.seating`): distinct for every
    copy and seat, the same at every expansion; the game's seed stays the cell's."""
    specs = expand(config(tmp_path, replicates=2))
    assert len({s.id for s in specs}) == len(specs)
    seeds = {(s.id, p): seat_seed(s.id, p, "llm") for s in specs for p in range(len(s.seats))}
    per_episode = [tuple(seeds[(s.id, p)] for p in range(len(s.seats))) for s in specs]
    assert len(set(per_episode)) == len(per_episode)
    again = expand(config(tmp_path, replicates=2))
    assert [s.id for s in again] == [s.id for s in specs]
    assert {s.seed for s in specs} == {0, 1}


def test_replicates_are_counted_and_bounded(tmp_path: Path) -> None:
    with pytest.raises(StratagemError, match="replicates"):
        config(tmp_path, replicates=-1)
    with pytest.raises(StratagemError, match="replicates"):
        config(tmp_path, replicates="two")


def test_the_labels_of_a_copy() -> None:
    assert replicated("zs", 0) == "zs"
    assert replicated("zs [p1]", 2) == "zs [p1] [replicate 2]"
    assert unreplicated("zs [p1] [replicate 2]", 2) == "zs [p1]"
    assert unreplicated("zs", 0) == "zs"
    assert [replicate_of(s) for s in ({}, {"replicate": 3}, {"replicate": True})] == [0, 3, 0]


def test_the_plan_counts_the_copies_and_their_calls(tmp_path: Path) -> None:
    base = Runner(config(tmp_path), show_progress=False).plan()
    copied = Runner(config(tmp_path, replicates=1), show_progress=False).plan()
    assert copied.episodes == 2 * base.episodes
    assert copied.calls == 2 * base.calls and copied.tokens == 2 * base.tokens


def test_a_finished_experiment_that_gains_copies_plays_only_them(tmp_path: Path) -> None:
    """The release before line-ups' results (tests/data/legacy-v1) resume with 0 calls, and with
    `replicates: 1` only the copies are played: no drift, and the plan said so first."""
    out = tmp_path / "out"
    out.mkdir()
    for name in (STORE_FILE, CACHE_FILE):
        with gzip.open(DATA / "legacy-v1" / f"{name}.gz") as src, open(out / name, "wb") as dst:
            shutil.copyfileobj(src, dst)
    data = yaml.safe_load((DATA / "legacy-v1" / "experiment.yaml").read_text(encoding="utf-8"))
    data["output"] = str(out)
    file = tmp_path / "exp.yaml"
    file.write_text(yaml.safe_dump(data), encoding="utf-8")
    stored = load_config(file).model_dump(mode="json")
    data["replicates"] = 1
    file.write_text(yaml.safe_dump(data), encoding="utf-8")
    grown = load_config(file)
    assert changed_settings(stored, grown) == []
    runner = Runner(grown, show_progress=False)
    plan = runner.plan()
    assert (plan.episodes, plan.finished) == (6, 6)
    summary = asyncio.run(runner.run())
    assert (summary.episodes, summary.skipped, summary.finished) == (12, 6, 6), summary.errors
    with ResultStore(out / STORE_FILE) as store:
        episodes = store.episodes("legacy-v1")
        calls = store._rows("SELECT episode_id, request FROM llm_calls", ())
    by_id = {e.id: e for e in episodes}
    copies = [e for e in episodes if replicate_of(e.spec or {}) == 1]
    assert len(copies) == 6 and all(e.status == "finished" for e in copies)
    # A copy's requests carry its own sampling seed: none is the cell's (no cached replay).
    seeds: dict[int, set[int]] = {0: set(), 1: set()}
    for episode_id, request in calls:
        seed = json.loads(request).get("seed")
        if seed is not None:
            seeds[replicate_of(by_id[episode_id].spec or {})].add(seed)
    assert seeds[0] and seeds[1] and not seeds[0] & seeds[1]
