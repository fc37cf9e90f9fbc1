"""The Moran process: each generation's population equals that of playing every pair one match at
a time, in order, from the one generator (the engine it had before lockstep play)."""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest

from stratagem.experiments.moran import MoranProcess
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.base import Strategy
from stratagem.strategies.match import play_match
from stratagem.strategies.registry import get_strategy

AXELROD_PD = NormalFormGame.prisoners_dilemma("axelrod-pd", t=5, r=3, p=1, s=0)
# Payoffs that are not whole numbers: the order in which scores are added shows.
STAG_HUNT = NormalFormGame.symmetric("sh", ("stag", "hare"), [[6.1, 1], [4, 2.3]])


def one_match_at_a_time(
    population: list[Strategy],
    stage: NormalFormGame,
    turns: int,
    noise: float,
    mutation: float,
    generations: int,
    seed: int,
) -> list[Counter[str]]:
    """The process as written before lockstep play: every pair played in order, every generation."""
    rng = random.Random(seed)
    types = {p.label: p for p in population}
    names = sorted(types)
    labels = [p.label for p in population]
    history = [Counter(labels)]
    for _ in range(generations):
        if mutation == 0.0 and len(history[-1]) == 1:
            break
        fitness = [0.0] * len(labels)
        for i in range(len(labels)):
            for j in range(i + 1, len(labels)):
                first, second = types[labels[i]], types[labels[j]]
                second = copy.deepcopy(first) if second is first else second
                a, b = play_match(first, second, stage, turns, rng, noise).scores
                fitness[i] += a
                fitness[j] += b
        low = min(fitness)
        if low < 0:
            fitness = [f - low for f in fitness]
        if sum(fitness) > 0:
            parent = rng.choices(range(len(labels)), weights=fitness)[0]
        else:
            parent = rng.randrange(len(labels))
        dead = rng.choice([k for k in range(len(labels)) if k != parent])
        child = labels[parent]
        if mutation and rng.random() < mutation and len(names) > 1:
            child = rng.choice([n for n in names if n != child])
        labels[dead] = child
        history.append(Counter(labels))
    return history


CASES = [
    # whole-number scores, deterministic: counted
    (["AlwaysDefect", "TitForTat", "AlwaysCooperate", "WinStayLoseShift"], AXELROD_PD, 0.0, 0.0),
    # other scores, deterministic, with mutation: added opponent by opponent
    (["AlwaysDefect", "TitForTat", "GrimTrigger"], STAG_HUNT, 0.0, 0.1),
    # a stochastic strategy: every generation played
    (["Random(0.4)", "TitForTat", "Alternator"], STAG_HUNT, 0.0, 0.0),
    # noise
    (["TitForTat", "AlwaysDefect", "SingleRoundEquilibrium"], AXELROD_PD, 0.05, 0.0),
    # a strategy without a machine, played in Python between the others
    (["Pattern(1, 0)", "SingleRoundEquilibrium", "BestResponseToMode"], STAG_HUNT, 0.0, 0.05),
]


@pytest.mark.parametrize(("names", "stage", "noise", "mutation"), CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_every_generation_equals_playing_one_match_at_a_time(
    names: list[str], stage: NormalFormGame, noise: float, mutation: float, seed: int
) -> None:
    population = [get_strategy(n) for n in names for _ in range(3)]
    result = MoranProcess(population, stage, 12, noise, mutation, 40, seed).play()
    expected = one_match_at_a_time(population, stage, 12, noise, mutation, 40, seed)
    assert list(result.populations) == expected


def test_the_first_generation_by_hand() -> None:
    """One turn of the PD: AlwaysDefect scores 5 + 5 against two AlwaysCooperate, which score
    0 + 3 each. The parent is drawn with weights 10, 3, 3 (one `random()`), then the one it
    replaces uniformly among the two others (one `randrange(2)`)."""
    seen = set()
    for seed in range(12):
        names = ["AlwaysDefect", "AlwaysCooperate", "AlwaysCooperate"]
        population = [get_strategy(n) for n in names]
        result = MoranProcess(population, AXELROD_PD, turns=1, max_generations=1, seed=seed).play()
        rng = random.Random(seed)
        weight = rng.random() * 16
        parent = 0 if weight < 10 else 1 if weight < 13 else 2
        dead = rng.randrange(2)
        dead += dead >= parent
        names[dead] = names[parent]
        assert result.populations == (Counter(AlwaysDefect=1, AlwaysCooperate=2), Counter(names))
        seen.add((parent, dead))
    assert {p for p, _ in seen} == {0, 1, 2}  # every branch was checked


def test_a_seed_replays_the_process_and_another_changes_it() -> None:
    def run(seed: int) -> tuple[Counter[str], ...]:
        population = [get_strategy(n) for n in ("Random(0.5)", "TitForTat") for _ in range(4)]
        return MoranProcess(population, AXELROD_PD, 10, 0.1, 0.1, 30, seed).play().populations

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_a_population_of_a_thousand_plays_each_pair_of_strategies_once() -> None:
    names = ["AlwaysDefect", "TitForTat", "AlwaysCooperate", "WinStayLoseShift"]
    population = [get_strategy(n) for n in names for _ in range(250)]
    process = MoranProcess(population, AXELROD_PD, turns=200, max_generations=50, seed=0)
    assert process.rounds == 16 * 200
    assert process.plan == (
        "a population of 1,000, at most 50 generations; deterministic strategies without noise, "
        "so each of the 16 ordered pairs of strategies plays once, 200 turns: 3,200 rounds"
    )
    result = process.play()
    assert result.generations == 50
    assert all(sum(p.values()) == 1000 for p in result.populations)
