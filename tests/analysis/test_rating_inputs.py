"""Rating inputs: every human seat is the one entity "human" (a store written by `stratagem play`
with a person's seat, and one with two differently named people), and each entity's episodes."""

from __future__ import annotations

from pathlib import Path

from support.play import play

from stratagem.analysis.episodes import Seat, load_episodes
from stratagem.analysis.rating import PairResult, bradley_terry, seat_pairs
from stratagem.analysis.rating_inputs import (
    HUMAN,
    episodes_by_entity,
    rating_entities,
    rating_entity,
)
from stratagem.experiments.store import ResultStore


def test_a_played_seat_is_rated_as_human(tmp_path: Path) -> None:
    done = play(tmp_path, "40\n", "ultimatum", "--seat", "0=human", "--seat", "1=scripted:accept")
    assert done.returncode == 0, done.stderr
    with ResultStore(tmp_path / "play" / "stratagem.db") as store:
        (experiment,) = store.experiments()
        (episode,) = load_episodes(store, experiment.id)
    entities = rating_entities(episode.seats)
    assert entities[0] == HUMAN and entities[1] != HUMAN


def test_every_person_is_one_population(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "s.db") as store:
        store.create_experiment("exp", "people", {})
        people = [{"name": "alice", "kind": "human"}, {"name": "bob", "kind": "human"}]
        for k, person in enumerate(people):
            bot = {"name": "m", "kind": "llm", "model": "openai/x", "agent": {"name": "plain"}}
            store.add_episode(f"ep{k}", "exp", "ultimatum", [person, bot], seed=k)
            store.start_episode(f"ep{k}")
            store.finish_episode(f"ep{k}", [60.0, 40.0] if k == 0 else [30.0, 70.0])
        episodes = load_episodes(store, "exp")
    results: list[PairResult] = []
    for e in episodes:
        entities = rating_entities(e.seats)
        assert entities == (HUMAN, "openai/x|plain")
        assert e.record.payoffs is not None
        results += seat_pairs(entities, e.record.payoffs, game_id=e.record.id)
    table = bradley_terry(results, n_boot=10)
    assert sorted(r.entity for r in table.ratings) == [HUMAN, "openai/x|plain"]
    human = next(r for r in table.ratings if r.entity == HUMAN)
    assert (human.games, human.wins, human.losses) == (2, 1, 1)
    assert episodes_by_entity(results) == {HUMAN: ("ep0", "ep1"), "openai/x|plain": ("ep0", "ep1")}


def test_names_of_other_seats() -> None:
    assert rating_entity(Seat("TitForTat", "strategy")) == "TitForTat"
    assert rating_entity(Seat("m", "llm", model="local/g")) == "local/g"
    assert rating_entity(Seat("carol", "human"), lambda s: s.name) == HUMAN
    assert rating_entity(Seat("m", "llm", model="local/g"), lambda s: s.name) == "m"
    results = [PairResult("a", "b", 1.0, game_id="e2"), PairResult("b", "c", 0.0, game_id="e1"),
               PairResult("a", "c", 1.0)]  # fmt: skip
    assert episodes_by_entity(results) == {"a": ("e2",), "b": ("e1", "e2"), "c": ("e1",)}
