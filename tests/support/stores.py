"""A result store with an experiment and a few episodes, for tests of its writes."""

from __future__ import annotations

from pathlib import Path

from stratagem.experiments.store import ResultStore


def store_with_episodes(path: Path, episodes: int = 2) -> ResultStore:
    """`path` as a store holding experiment "exp" and pending PD episodes "ep0", "ep1", ..."""
    store = ResultStore(path)
    store.create_experiment("exp", "Experiment", {})
    for i in range(episodes):
        store.add_episode(f"ep{i}", "exp", "pd", ["TitForTat", "TitForTat"], seed=i)
    return store
