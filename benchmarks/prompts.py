"""Benchmark: decision-prompt rendering over a game, each past round's text reused or rebuilt.

Every packaged framing gives a past round's text as `round.j2`, rendered once per round and reused
by every later prompt (`agents/prompts.py`). For each framing, history mode "prompt", it plays
the decision prompts of a game of 10 and of 50 rounds and prints the mean microseconds per
decision two ways, side by side: reused (as an agent's prompter does) and rebuilt (the prompter
forgets the past rounds' texts before each decision, so every past round is rendered again, as
every prompt did before `round.j2`). With reuse the cost per decision barely grows with the
game's length.

    .venv/bin/python benchmarks/prompts.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import timeit

from stratagem.agents.prompts import OutputFormat, Prompter, framings
from stratagem.games.base import Observation
from stratagem.games.catalog import get_stage
from stratagem.games.matrix.repeated import RepeatedGame

GAMES = {"prisoner": "dilemma"}
"""The game each framing is timed on (pd unless it needs its own)."""
LENGTHS = (10, 50)


def observations(game: str, rounds: int) -> list[Observation]:
    """Player 0's observation before each round of one game (the states share their rounds)."""
    stage = get_stage(game)
    state = RepeatedGame(stage, rounds).initial_state(0)
    seen: list[Observation] = []
    while not state.is_terminal():
        seen.append(state.observation(0))
        t = len(seen)
        state, _ = state.forfeit({p: stage.labels[p][(t + p) % 2] for p in (0, 1)})
    return seen


def per_decision_us(framing: str, seen: list[Observation], reuse: bool, repeat: int) -> float:
    output: OutputFormat = "tag" if framing.startswith("counterfactual") else "choice"

    def game() -> None:
        prompter = Prompter(framing, output, "prompt")
        for obs in seen:
            if not reuse:
                prompter._past = ((), -1, [])  # forget the past rounds' texts
            prompter.decision(obs)

    return 1e6 * min(timeit.repeat(game, number=1, repeat=repeat)) / len(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timings per cell (the best is kept)")
    args = parser.parse_args()
    print("µs per decision prompt, mean over a game (best of --repeat); history mode 'prompt'")
    print(f"  {'framing':<22}" + "".join(f"{f'{n} rounds':>22}" for n in LENGTHS) + "  50/10")
    print(f"  {'':<22}" + f"{'reused / rebuilt':>22}" * len(LENGTHS) + "  reused")
    for framing in framings():
        seen = observations(GAMES.get(framing, "pd"), max(LENGTHS))
        cells, reused = "", []
        for n in LENGTHS:
            on = per_decision_us(framing, seen[:n], True, args.repeat)
            off = per_decision_us(framing, seen[:n], False, args.repeat)
            reused.append(on)
            cells += f"{on:>12.1f} / {off:>7.1f}"
        print(f"  {framing:<22}{cells}  {reused[-1] / reused[0]:5.2f}")


if __name__ == "__main__":
    main()
