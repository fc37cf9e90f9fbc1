"""Benchmark: the same round-robin tournament in stratagem and in the Axelrod library, side by side.

Every strategy both libraries have, 200 turns, 10 repetitions, Axelrod's payoffs (R3 P1 S0 T5).
Prints matches per second for each and the ratios, and checks that the per-match scores are equal
for every match between deterministic strategies (Random's draws come from different generators).

    .venv/bin/python benchmarks/tournament.py [--turns 200] [--repetitions 10]
"""

from __future__ import annotations

import argparse
import random
import time
import warnings

from stratagem.experiments.tournament import Tournament
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.match import play_match
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


def timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repetitions", type=int, default=10)
    args = parser.parse_args()
    turns, reps = args.turns, args.repetitions

    tournament = Tournament(
        [get_strategy(n) for n in SHARED], PD, turns=turns, repetitions=reps, seed=0
    )
    ours, t_ours = timed(tournament.play)
    n_matches = len(ours.matches)

    def raw_loop() -> None:  # every match played, no reuse of deterministic results
        players = [get_strategy(n) for n in SHARED]
        for i, j in tournament.pairs():
            for rep in range(reps):
                second = get_strategy(list(SHARED)[j]) if i == j else players[j]
                play_match(players[i], second, PD, turns, random.Random(f"{i}:{j}:{rep}"))

    _, t_raw = timed(raw_loop)

    axl_tournament = axl.Tournament(
        [cls() for cls in SHARED.values()], turns=turns, repetitions=reps
    )
    theirs, t_axl = timed(lambda: axl_tournament.play(processes=1, progress_bar=False))

    def axl_match_loop() -> None:  # axelrod's matches alone, without building its result set
        for i, j in tournament.pairs():
            for _ in range(reps):
                classes = list(SHARED.values())
                axl.Match((classes[i](), classes[j]()), turns=turns).play()

    _, t_axl_raw = timed(axl_match_loop)

    names = list(SHARED)
    deterministic = [
        not axl_tournament.players[k].classifier["stochastic"] for k in range(len(names))
    ]
    compared = 0
    for i, j in tournament.pairs():
        if not (deterministic[i] and deterministic[j]):
            continue
        for rep, (a, b) in enumerate(ours.scores(i, j)):
            expected = (theirs.payoffs[i][j][rep] * turns, theirs.payoffs[j][i][rep] * turns)
            if abs(a - expected[0]) > 1e-6 or abs(b - expected[1]) > 1e-6:
                raise SystemExit(
                    f"score mismatch {names[i]} vs {names[j]} rep {rep}: {a, b} {expected}"
                )
            compared += 1

    size = f"{len(names)} strategies, {turns} turns, {reps} repetitions, {n_matches} matches"
    print(f"round robin: {size}")
    print(f"  stratagem tournament      {n_matches / t_ours:12.0f} matches/s  ({t_ours:.3f} s)")
    print(f"  stratagem, no result reuse{n_matches / t_raw:12.0f} matches/s  ({t_raw:.3f} s)")
    print(f"  axelrod 4.13 tournament   {n_matches / t_axl:12.0f} matches/s  ({t_axl:.3f} s)")
    print(
        f"  axelrod 4.13 Match loop   {n_matches / t_axl_raw:12.0f} matches/s  ({t_axl_raw:.3f} s)"
    )
    print(f"ratio stratagem / axelrod: {t_axl / t_ours:.1f}x (goal >= 10x)")
    print(f"ratio stratagem without reuse / axelrod: {t_axl / t_raw:.1f}x")
    print(f"ratio stratagem without reuse / axelrod Match loop: {t_axl_raw / t_raw:.1f}x")
    print(f"scores equal in all {compared} matches between deterministic strategies")


if __name__ == "__main__":
    main()
