"""Round-robin tournaments of rule-based strategies in any 2-player matrix game.

Every pair meets `repetitions` times (and each strategy meets a copy of itself when `self_play`).
A match between two deterministic strategies without noise always ends the same way, so it is played
once and its result reused for the other repetitions: the results are identical, the work is not.
The matches are played together, in lockstep on arrays (`strategies.lockstep`), each with the
results and draws it would have alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from stratagem.errors import StratagemError
from stratagem.experiments.limits import (
    MAX_REPETITIONS,
    MAX_TURNS,
    check_range,
    check_rounds,
    check_storable,
)
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.base import Strategy
from stratagem.strategies.lockstep import play_matches
from stratagem.strategies.match import MatchResult


@dataclass(frozen=True)
class MatchRecord:
    """One match of a tournament: the seats are indices into the tournament's players."""

    first: int
    second: int
    repetition: int
    seed: str
    result: MatchResult


@dataclass(frozen=True)
class Standing:
    """One row of the results table."""

    rank: int
    player: str
    mean_score: float
    """Mean payoff per turn over all the player's matches."""
    wins: int
    """Matches in which the player scored strictly more than its opponent (self-play excluded)."""
    cooperation: float
    """Share of the player's actions that were the cooperative role (action 0)."""


@dataclass(frozen=True)
class TournamentResult:
    players: tuple[str, ...]
    stage: NormalFormGame
    turns: int
    repetitions: int
    matches: tuple[MatchRecord, ...]

    def standings(self) -> list[Standing]:
        n = len(self.players)
        score = [0.0] * n
        turns = [0] * n
        coop = [0] * n
        wins = [0] * n
        for m in self.matches:
            for seat, player in enumerate((m.first, m.second)):
                moves = m.result.actions[seat]
                score[player] += m.result.scores[seat]
                turns[player] += len(moves)
                coop[player] += moves.count(0)
            if m.first != m.second:
                a, b = m.result.scores
                if a > b:
                    wins[m.first] += 1
                elif b > a:
                    wins[m.second] += 1
        rows = [
            (
                self.players[p],
                score[p] / turns[p] if turns[p] else 0.0,
                wins[p],
                coop[p] / turns[p] if turns[p] else 0.0,
            )
            for p in range(n)
        ]
        rows.sort(key=lambda r: (-r[1], -r[2], r[0]))
        return [Standing(i + 1, name, s, w, c) for i, (name, s, w, c) in enumerate(rows)]

    def scores(self, first: int, second: int) -> list[tuple[float, float]]:
        """The per-repetition scores of every match between two seats, in order."""
        return [m.result.scores for m in self.matches if (m.first, m.second) == (first, second)]


class Tournament:
    def __init__(
        self,
        players: Sequence[Strategy],
        stage: NormalFormGame,
        turns: int = 200,
        repetitions: int = 10,
        noise: float = 0.0,
        seed: int = 0,
        self_play: bool = True,
    ) -> None:
        if len(players) < 2 and not (self_play and players):
            raise StratagemError("a tournament needs at least 2 strategies (or 1 with self-play)")
        check_range("turns", turns, 1, MAX_TURNS)
        check_range("repetitions", repetitions, 1, MAX_REPETITIONS)
        check_storable("seed", seed)
        if not 0.0 <= noise <= 1.0:
            raise StratagemError(f"noise must be in [0, 1], got {noise}")
        labels = [p.label for p in players]
        if len(set(labels)) != len(labels):
            raise StratagemError(f"each strategy may enter once; duplicates in {labels}")
        for p in players:  # fail before playing, with the strategy's own message
            p.reset(stage, 0)
            p.reset(stage, 1)
        self.players = list(players)
        self.stage = stage
        self.turns = turns
        self.repetitions = repetitions
        self.noise = noise
        self.seed = seed
        self.self_play = self_play
        self.rounds = check_rounds(
            f"the tournament ({len(self.pairs()):,} pairings x {repetitions:,} repetitions)",
            self.match_count,
            turns,
            "turns, repetitions or strategies",
        )
        """Every round it plays and stores (bounded: `MAX_MATCH_ROUNDS`)."""

    @property
    def plan(self) -> str:
        """The work about to be done, for the line printed before it starts."""
        return (
            f"{len(self.pairs()):,} pairings x {self.repetitions:,} repetitions = "
            f"{self.match_count:,} matches of {self.turns:,} turns: {self.rounds:,} rounds "
            "to play and store"
        )

    def pairs(self) -> list[tuple[int, int]]:
        n = len(self.players)
        return [(i, j) for i in range(n) for j in range(i, n) if i != j or self.self_play]

    @property
    def match_count(self) -> int:
        return len(self.pairs()) * self.repetitions

    def matches(self) -> Iterator[MatchRecord]:
        """Every match, in order of pairing then repetition, played in lockstep
        (`strategies.lockstep`); each draws from its own generator, seeded with its `seed`."""
        pairs: list[tuple[Strategy, Strategy]] = []
        seeds: list[str] = []
        records: list[tuple[int, int, int, str, int]] = []
        """Each match's seats, repetition, seed and index of the result it gets (reused or not)."""
        for i, j in self.pairs():
            first, second = self.players[i], self.players[j]
            reusable = self.noise == 0.0 and first.deterministic and second.deterministic
            for rep in range(self.repetitions):
                seed = f"{self.seed}:{i}:{j}:{rep}"
                if not (rep and reusable):
                    pairs.append((first, second))
                    seeds.append(seed)
                records.append((i, j, rep, seed, len(pairs) - 1))
        results = play_matches(
            pairs, self.stage, self.turns, lambda n: random.Random(seeds[n]), self.noise
        )
        for i, j, rep, seed, n in records:
            yield MatchRecord(i, j, rep, seed, results[n])

    def play(self, on_match: Callable[[MatchRecord], None] | None = None) -> TournamentResult:
        records = []
        for record in self.matches():
            records.append(record)
            if on_match is not None:
                on_match(record)
        return TournamentResult(
            tuple(p.label for p in self.players),
            self.stage,
            self.turns,
            self.repetitions,
            tuple(records),
        )
