"""Benchmark: the same round-robin tournament in stratagem and in the Axelrod library, side by side.

Every strategy both libraries have, 200 turns, 10 repetitions, Axelrod's payoffs (R3 P1 S0 T5).
Prints matches per second with every match played, in lockstep on arrays and one match at a time
in Python, the tournament (which reuses deterministic matches), Axelrod's tournament and Match
loop, and the ratios; then a Moran process of 1,000 individuals. Each time is the median of
`--repeat` runs, alternated. It checks that lockstep and one-at-a-time play give equal matches
(Random's draws included, with and without noise) and that the per-match scores equal Axelrod's
for every match between deterministic strategies (Random's draws come from other generators).

    .venv/bin/python benchmarks/tournament.py [--turns 200] [--repetitions 10] [--repeat 5]
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

from stratagem.experiments.moran import MoranProcess
from stratagem.experiments.tournament import Tournament
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.lockstep import play_matches
from stratagem.strategies.match import MatchResult, play_match
from stratagem.strategies.registry import get_strategy

warnings.filterwarnings("ignore")
import axelrod as axl  # noqa: E402

# stratagem strategy -> axelrod strategy
SHARED = {
    "AlwaysCooperate": axl.Cooperator,
    "AlwaysDefect": axl.Defector,
    "TitForTat": axl.TitForTat,
    "GrimTrigger": axl.Grudger,
    "TitForTwoTats": axl.TitFor2Tats,
    "SuspiciousTitForTat": axl.SuspiciousTitForTat,
    "WinStayLoseShift": axl.WinStayLoseShift,
    "Alternator": axl.Alternator,
    "Random(0.5)": axl.Random,
}
PD = NormalFormGame.prisoners_dilemma("axelrod-pd", t=5, r=3, p=1, s=0)
NOISE = 0.05


def median_times(
    runs: dict[str, Callable[[], Any]], repeat: int
) -> tuple[dict[str, float], dict[str, Any]]:
    """Each run's median time over `repeat` rounds, the runs alternated within each round."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    outputs: dict[str, Any] = {}
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            outputs[name] = run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}, outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--moran-generations", type=int, default=1000)
    args = parser.parse_args()
    turns, reps = args.turns, args.repetitions

    names = list(SHARED)
    players = [get_strategy(n) for n in names]
    tournament = Tournament(players, PD, turns=turns, repetitions=reps, seed=0)
    schedule = [(i, j, rep) for i, j in tournament.pairs() for rep in range(reps)]
    pairs = [(players[i], players[j]) for i, j, _ in schedule]
    seeds = [f"0:{i}:{j}:{rep}" for i, j, rep in schedule]

    def lockstep(noise: float = 0.0) -> list[MatchResult]:
        return play_matches(pairs, PD, turns, lambda k: random.Random(seeds[k]), noise)

    def per_match(noise: float = 0.0) -> list[MatchResult]:  # the Python loop, one at a time
        return [
            play_match(a, copy.deepcopy(b) if a is b else b, PD, turns, random.Random(s), noise)
            for (a, b), s in zip(pairs, seeds, strict=True)
        ]

    axl_tournament = axl.Tournament(
        [cls() for cls in SHARED.values()], turns=turns, repetitions=reps
    )

    def axl_match_loop() -> None:  # axelrod's matches alone, without building its result set
        classes = list(SHARED.values())
        for i, j, _ in schedule:
            axl.Match((classes[i](), classes[j]()), turns=turns).play()

    times, out = median_times(
        {
            "lockstep": lockstep,
            "per match": per_match,
            "lockstep, noise": lambda: lockstep(NOISE),
            "per match, noise": lambda: per_match(NOISE),
            "tournament": tournament.play,
            "axelrod": lambda: axl_tournament.play(processes=1, progress_bar=False),
            "axelrod Match loop": axl_match_loop,
        },
        args.repeat,
    )
    if out["lockstep"] != out["per match"] or out["lockstep, noise"] != out["per match, noise"]:
        raise SystemExit("lockstep and one-at-a-time play differ")
    theirs = out["axelrod"]
    deterministic = [not p.classifier["stochastic"] for p in axl_tournament.players]
    compared = 0
    for (i, j, rep), result in zip(schedule, out["lockstep"], strict=True):
        if not (deterministic[i] and deterministic[j]):
            continue
        expected = (theirs.payoffs[i][j][rep] * turns, theirs.payoffs[j][i][rep] * turns)
        if any(abs(a - b) > 1e-6 for a, b in zip(result.scores, expected, strict=True)):
            raise SystemExit(f"score mismatch {names[i]} vs {names[j]} rep {rep}: {expected}")
        compared += 1

    n = len(schedule)
    print(f"round robin: {len(names)} strategies, {turns} turns, {reps} repetitions, {n} matches")
    print(f"(median of {args.repeat} alternated runs; every match played unless said)")
    for name, label in (
        ("lockstep", "stratagem lockstep"),
        ("per match", "stratagem one match at a time"),
        ("lockstep, noise", f"stratagem lockstep, noise {NOISE}"),
        ("per match, noise", f"stratagem one at a time, noise {NOISE}"),
        ("tournament", "stratagem Tournament (reuses)"),
        ("axelrod", f"axelrod {axl.__version__} Tournament"),
        ("axelrod Match loop", f"axelrod {axl.__version__} Match loop"),
    ):
        print(f"  {label:40}{n / times[name]:12,.0f} matches/s  ({times[name]:.4f} s)")
    print(f"ratio stratagem lockstep / axelrod: {times['axelrod'] / times['lockstep']:.1f}x "
          "(goal >= 100x)")  # fmt: skip
    print(f"ratio stratagem lockstep / axelrod Match loop: "
          f"{times['axelrod Match loop'] / times['lockstep']:.1f}x")  # fmt: skip
    print(f"ratio stratagem lockstep / one at a time: "
          f"{times['per match'] / times['lockstep']:.1f}x, with noise "
          f"{times['per match, noise'] / times['lockstep, noise']:.1f}x")  # fmt: skip
    print(f"ratio stratagem Tournament / axelrod: {times['axelrod'] / times['tournament']:.1f}x")
    print(f"matches equal in lockstep and one at a time: all {n}, with and without noise")
    print(f"scores equal to axelrod's in all {compared} matches between deterministic strategies")

    moran_names = names[:-1]  # the deterministic ones
    population = [get_strategy(s) for s in moran_names for _ in range(1000 // len(moran_names))]
    process = MoranProcess(population, PD, turns, max_generations=args.moran_generations, seed=0)
    start = time.perf_counter()
    result = process.play()
    seconds = time.perf_counter() - start
    ending = f"{result.winner} fixated" if result.winner else "no fixation yet"
    print(
        f"moran: a population of {len(population):,} ({len(moran_names)} strategies), {turns} "
        f"turns a match, {result.generations:,} generations in {seconds:.2f} s "
        f"({result.generations / seconds:,.0f} generations/s; {ending})"
    )


if __name__ == "__main__":
    main()
