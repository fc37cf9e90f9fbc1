"""An evolutionary (Moran) process over rule-based strategies, as in Axelrod's library.

Each generation every individual plays every other once; an individual is chosen to reproduce with
probability proportional to its total score, and its offspring replaces another individual chosen
uniformly at random (birth-death). Without mutation the process ends at fixation: one strategy left.

When every strategy is deterministic and there is no noise, a match depends only on the two
strategies and their seats, so each ordered pair of strategies plays once (in lockstep) and a
generation is arithmetic on counts: a population of 1,000 runs a thousand generations in well
under a second. Otherwise each generation plays its matches in lockstep, drawing from the one
generator in the order of the pairs. Either way the scores, the draws and so every generation are
those of playing each pair with `play_match`, one at a time.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

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
from stratagem.strategies.lockstep import play_matches


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
        self.types: dict[str, Strategy] = {p.label: p for p in population}
        self.names = sorted(self.types)
        """The strategies; an individual is an index into this list."""
        self.initial = [p.label for p in population]
        self.pairings = len(population) * (len(population) - 1) // 2
        """Matches of one generation: every pair of individuals meets once."""
        self.deterministic = noise == 0.0 and all(p.deterministic for p in population)
        """Whether each ordered pair of strategies plays once, for every generation."""
        if self.deterministic:
            self.rounds = check_rounds(
                f"the Moran process ({len(self.names) ** 2:,} ordered pairs of strategies)",
                len(self.names) ** 2,
                turns,
                "turns or strategies",
            )
        else:
            self.rounds = check_rounds(
                f"the Moran process (up to {max_generations:,} generations x "
                f"{self.pairings:,} pairings)",
                max_generations * self.pairings,
                turns,
                "generations, turns or individuals",
            )
        """The most rounds it can play (bounded: `MAX_MATCH_ROUNDS`); with deterministic
        strategies and no noise, those of each ordered pair of strategies, played once."""
        self.stage = stage
        self.turns = turns
        self.noise = noise
        self.mutation_rate = mutation_rate
        self.max_generations = max_generations
        self.rng = random.Random(seed)

    @property
    def plan(self) -> str:
        """The most work it may do, for the line printed before it starts."""
        head = (
            f"a population of {len(self.initial):,}, at most {self.max_generations:,} generations"
        )
        if self.deterministic:
            return (
                f"{head}; deterministic strategies without noise, so each of the "
                f"{len(self.names) ** 2:,} ordered pairs of strategies plays once, "
                f"{self.turns:,} turns: {self.rounds:,} rounds"
            )
        return (
            f"{head} of {self.pairings:,} matches of {self.turns:,} turns: at most "
            f"{self.rounds:,} rounds"
        )

    def _scores(self) -> np.ndarray:
        """(2, strategies, strategies): [0][x, y] is x's score when it plays first against y,
        [1][x, y] its score when it plays second against y."""
        k = len(self.names)
        players = [self.types[n] for n in self.names]
        pairs = [(players[x], players[y]) for x in range(k) for y in range(k)]
        results = play_matches(pairs, self.stage, self.turns, lambda n: self.rng)
        first = np.array([r.scores for r in results]).reshape(k, k, 2)
        return np.stack((first[..., 0], first[..., 1].T))

    def _fitness(self, population: np.ndarray, scores: np.ndarray | None) -> list[float]:
        """Each individual's total score against all the others, added in the order of the
        opponents (as playing the pairs one by one adds them), so the floats are the same."""
        if scores is None:
            against = self._play_generation(population)
        elif _exact(scores, len(population)):  # any order of addition gives the same floats
            kinds = np.eye(len(self.names))[population]
            ahead = np.cumsum(kinds, axis=0) - kinds  # opponents j < i, by strategy: i was second
            behind = kinds.sum(axis=0) - ahead - kinds
            totals = (ahead * scores[1][population] + behind * scores[0][population]).sum(axis=1)
            return totals.tolist()  # type: ignore[no-any-return]
        else:
            ahead = np.tri(len(population), k=-1, dtype=bool)
            mine, theirs = population[:, None], population[None, :]
            against = np.where(ahead, scores[1][mine, theirs], scores[0][mine, theirs])
            np.fill_diagonal(against, 0.0)
        return np.cumsum(against, axis=1)[:, -1].tolist()  # type: ignore[no-any-return]

    def _play_generation(self, population: np.ndarray) -> np.ndarray:
        """(individuals, individuals): each one's score against each other, every pair played
        in order from the process's generator."""
        players = [self.types[self.names[t]] for t in population]
        first, second = np.triu_indices(len(population), 1)
        pairs = [(players[i], players[j]) for i, j in zip(first, second, strict=True)]
        results = play_matches(pairs, self.stage, self.turns, lambda k: self.rng, self.noise)
        played = np.array([r.scores for r in results]).reshape(-1, 2)
        against = np.zeros((len(population), len(population)))
        against[first, second] = played[:, 0]
        against[second, first] = played[:, 1]
        return against

    def play(self) -> MoranResult:
        population = np.array([self.names.index(label) for label in self.initial])
        counts = np.bincount(population, minlength=len(self.names))
        history = [self._census(counts)]
        scores = self._scores() if self.deterministic else None
        size = len(population)
        for _ in range(self.max_generations):
            if self.mutation_rate == 0.0 and len(history[-1]) == 1:
                break
            fitness = self._fitness(population, scores)
            low = min(fitness)
            if low < 0:  # selection needs non-negative weights
                fitness = [f - low for f in fitness]
            if sum(fitness) > 0:
                parent = self.rng.choices(range(size), weights=fitness)[0]
            else:
                parent = self.rng.randrange(size)
            # Uniform among the others: one `randrange` as `choice` of the list without the parent.
            dead = self.rng.randrange(size - 1)
            dead += dead >= parent
            child = int(population[parent])
            if (
                self.mutation_rate
                and self.rng.random() < self.mutation_rate
                and len(self.names) > 1
            ):
                others = [n for n in self.names if n != self.names[child]]
                child = self.names.index(self.rng.choice(others))
            counts[population[dead]] -= 1
            counts[child] += 1
            population[dead] = child
            history.append(self._census(counts))
        final = history[-1]
        winner = next(iter(final)) if len(final) == 1 else None
        return MoranResult(tuple(history), winner)

    def _census(self, counts: np.ndarray) -> Counter[str]:
        return Counter({self.names[t]: int(c) for t, c in enumerate(counts) if c})


def _exact(scores: np.ndarray, individuals: int) -> bool:
    """Whether every sum of `individuals` of these scores is exact in floats, whatever the order:
    whole numbers, small enough."""
    return bool((scores == np.round(scores)).all() and np.abs(scores).max() * individuals < 2**53)
