"""An evolutionary (Moran) process over rule-based strategies, as in Axelrod's library.

Each generation every individual plays every other once; an individual is chosen to reproduce with
probability proportional to its total score, and its offspring replaces another individual chosen
uniformly at random (birth-death). Without mutation the process ends at fixation: one strategy left.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from stratagem.errors import StratagemError
from stratagem.experiments.limits import (
    MAX_GENERATIONS,
    MAX_POPULATION,
    MAX_TURNS,
    check_range,
    check_rounds,
)
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.base import Strategy
from stratagem.strategies.match import MatchResult, play_match


@dataclass(frozen=True)
class MoranResult:
    populations: tuple[Counter[str], ...]
    """The population (strategy label -> count) at the start and after each generation."""
    winner: str | None
    """The fixated strategy, or None if the generation limit came first."""

    @property
    def generations(self) -> int:
        return len(self.populations) - 1


def check_population(individuals: int, option: str = "population") -> int:
    """A population a Moran process may hold (`MAX_POPULATION`), checked before it is built."""
    if individuals > MAX_POPULATION:
        raise StratagemError(
            f"{option}: a population of {individuals:,} individuals, more than the "
            f"{MAX_POPULATION:,} a Moran process may hold"
        )
    return individuals


class MoranProcess:
    def __init__(
        self,
        population: Sequence[Strategy],
        stage: NormalFormGame,
        turns: int = 200,
        noise: float = 0.0,
        mutation_rate: float = 0.0,
        max_generations: int = 1000,
        seed: int = 0,
    ) -> None:
        if len(population) < 2:
            raise StratagemError("a Moran process needs a population of at least 2")
        if not 0.0 <= mutation_rate <= 1.0:
            raise StratagemError(f"mutation rate must be in [0, 1], got {mutation_rate}")
        if not 0.0 <= noise <= 1.0:
            raise StratagemError(f"noise must be in [0, 1], got {noise}")
        check_range("turns", turns, 1, MAX_TURNS)
        check_range("max_generations", max_generations, 1, MAX_GENERATIONS)
        check_population(len(population))
        self.pairings = len(population) * (len(population) - 1) // 2
        """Matches of one generation: every pair of individuals meets once."""
        self.rounds = check_rounds(
            f"the Moran process (up to {max_generations:,} generations x {self.pairings:,} "
            "pairings)",
            max_generations * self.pairings,
            turns,
            "generations, turns or individuals",
        )
        """The most rounds it can play (bounded: `MAX_MATCH_ROUNDS`); deterministic matches
        are played once and reused, so it usually plays far fewer."""
        self.types: dict[str, Strategy] = {p.label: p for p in population}
        self.initial = [p.label for p in population]
        self.stage = stage
        self.turns = turns
        self.noise = noise
        self.mutation_rate = mutation_rate
        self.max_generations = max_generations
        self.rng = random.Random(seed)
        self._cache: dict[tuple[str, str], MatchResult] = {}

    @property
    def plan(self) -> str:
        """The most work it may do, for the line printed before it starts."""
        return (
            f"a population of {len(self.initial):,}, at most {self.max_generations:,} "
            f"generations of {self.pairings:,} matches of {self.turns:,} turns: at most "
            f"{self.rounds:,} rounds"
        )

    def _match(self, a: str, b: str) -> MatchResult:
        first, second = self.types[a], self.types[b]
        if self.noise == 0.0 and first.deterministic and second.deterministic:
            if (a, b) not in self._cache:
                self._cache[(a, b)] = self._play(a, b, 0.0)
            return self._cache[(a, b)]
        return self._play(a, b, self.noise)

    def _play(self, a: str, b: str, noise: float) -> MatchResult:
        first, second = self.types[a], self.types[b]
        if a == b:  # a strategy meets a copy of itself (copied only to play, not to look up)
            second = copy.deepcopy(first)
        return play_match(first, second, self.stage, self.turns, self.rng, noise)

    def _fitness(self, population: list[str]) -> list[float]:
        fitness = [0.0] * len(population)
        for i in range(len(population)):
            for j in range(i + 1, len(population)):
                a, b = self._match(population[i], population[j]).scores
                fitness[i] += a
                fitness[j] += b
        return fitness

    def play(self) -> MoranResult:
        population = list(self.initial)
        history = [Counter(population)]
        names = sorted(self.types)
        for _ in range(self.max_generations):
            if self.mutation_rate == 0.0 and len(history[-1]) == 1:
                break
            fitness = self._fitness(population)
            low = min(fitness)
            if low < 0:  # selection needs non-negative weights
                fitness = [f - low for f in fitness]
            if sum(fitness) > 0:
                parent = self.rng.choices(range(len(population)), weights=fitness)[0]
            else:
                parent = self.rng.randrange(len(population))
            dead = self.rng.choice([k for k in range(len(population)) if k != parent])
            child = population[parent]
            if self.mutation_rate and self.rng.random() < self.mutation_rate and len(names) > 1:
                child = self.rng.choice([n for n in names if n != child])
            population[dead] = child
            history.append(Counter(population))
        final = history[-1]
        winner = next(iter(final)) if len(final) == 1 else None
        return MoranResult(tuple(history), winner)
