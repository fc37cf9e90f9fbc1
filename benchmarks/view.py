"""Benchmark: `stratagem view` at seed-003's scale (issue 36 item 10), old and new side by side.

Two stores: (a) the report benchmark's 10,080 seed-003-style episodes written through the store
API (`benchmarks/report.py`: 8 games, 12 models, 840 episodes a model), and (b) an *imported*
store of the same shape: 9,504 games written as seed-003's `game.json` converts to the import
format (docs/episode-format.md: `pd/sh` names, `spec.model` the table's model, the provider id
in `players`, `sc-*` self-consistency rows against the bots, per-round tokens, a few null moves;
seeded random moves) and read in by `import_episodes(source="import:seed-003")`, as
`stratagem import` does. The authors' real files are not available here, so they are generated.

On each store, in a fresh process per source tree (`view_measure.py`; `--compare-src` adds an
older checkout's src/, e.g. `git archive 32b5f25 src | tar -x -C /tmp/old`), through the real
app (`TestClient`), the median of `--repeat` runs of: every call the experiment page makes when
opened (cells, the first episodes page, experiments, the version poll; app.js experimentPage),
summed, on a fresh app (cold: the first view of a store version) and again (warm); links with
filters opened cold (a model and game; a cell; a leaderboard row, which opens the Analysis
part, where the store has leaderboards); then once each, cold, the folded Analysis and Charts
parts opened, and the static export of one episode per cell (`--max-per-cell 1`). Figures a
tree lacks (the parts and the `cell` filter came after 32b5f25) print as "-". Old and new run
one after the other on the same store; ratios above 1 mean this checkout is faster.

    .venv/bin/python benchmarks/view.py [--repeat 3] [--compare-src /tmp/old/src] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from report import _GENERATE, FORFEIT, GAMES, PROMPTS, RUNS, _child  # noqa: E402

from stratagem.games.catalog import get_stage  # noqa: E402

GOALS = {
    "experiment page, cold": 1.0,
    "link model + game, cold": 2.0,
    "link cell, cold": 2.0,
    "export, one episode per cell": 60.0,
}
"""Issue 36 item 10's goals, in seconds."""
ITERATIONS = 3
"""seed-003's iterations per matchup: 8 games x 12 models x 33 matchups x 3 = 9,504 games."""

_IMPORT = r"""
import sys
from stratagem.experiments.episode_io import import_episodes
from stratagem.experiments.store import ResultStore
with ResultStore(sys.argv[1]) as store:
    print(import_episodes(store, sys.argv[2], source="import:seed-003").imported)
"""


def seed003_lines(path: Path, models: int, seed: int = 2025) -> int:
    """Write seed-003-style games as import lines (docs/episode-format.md's conversion)."""
    rng = random.Random(seed)
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for name, n_rounds in GAMES.items():
            stage = get_stage(name.split("/", 1)[1])
            labels, table = stage.labels, stage.payoffs.tolist()
            bots = ["srep", "pp", "mf" if len(labels[0]) == 2 else "ap", "tft-br"]
            matchups = [(p, o) for p in PROMPTS for o in [*bots, *PROMPTS]]
            matchups += [(f"sc-{p}", o) for p in PROMPTS for o in bots]
            for m in range(models):
                for row, opponent in matchups:
                    for k in range(ITERATIONS):
                        llm = opponent in PROMPTS
                        rounds = []
                        for t in range(n_rounds):
                            a, b = rng.randrange(len(labels[0])), rng.randrange(len(labels[1]))
                            moves: list[str | None] = [labels[0][a], labels[1][b]]
                            if rng.random() < FORFEIT:
                                moves[0] = None
                            if llm and rng.random() < FORFEIT:
                                moves[1] = None
                            valid = None not in moves
                            pay = table[a][b] if valid else [0.0, 0.0]
                            tokens = [rng.randrange(50, 900), rng.randrange(50, 900) if llm else 0]
                            rounds.append({"round": t + 1, "actions": moves, "payoffs": pay,
                                           "valid": valid, "tokens": tokens})  # fmt: skip
                        line = {
                            "experiment": {"id": "seed-003", "name": "seed-003 (generated)"},
                            "game": name, "seed": k,
                            "spec": {"model": f"Model {m:02d}", "iteration": k},
                            "players": [
                                {"name": row, "kind": "llm", "model": f"provider/model-{m:02d}"},
                                {"name": opponent, "kind": "llm" if llm else "strategy",
                                 "model": f"provider/model-{m:02d}" if llm else None},
                            ],
                            "rounds": rounds,
                            "payoffs": [sum(r["payoffs"][i] for r in rounds) for i in (0, 1)],
                        }  # fmt: skip
                        out.write(json.dumps(line) + "\n")
                        count += 1
    return count


def make_stores(home: Path, models: int) -> dict[str, Path]:
    """The two stores, each in a results directory of its own, written by this checkout."""
    src = ROOT.parent / "src"
    synthetic, imported = home / "synthetic", home / "imported"
    for d in (synthetic, imported):
        d.mkdir(parents=True, exist_ok=True)
    spec = {"games": GAMES, "prompts": PROMPTS, "runs": RUNS, "forfeit": FORFEIT}
    start = time.perf_counter()
    made = int(_child(_GENERATE, src, str(synthetic / "stratagem.db"), str(models),
                      json.dumps(spec)))  # fmt: skip
    print(f"synthetic store: {made:,} episodes in {time.perf_counter() - start:.0f} s")
    start = time.perf_counter()
    lines = home / "seed-003.jsonl"
    written = seed003_lines(lines, models)
    got = int(_child(_IMPORT, src, str(imported / "stratagem.db"), str(lines)))
    print(f"imported store: {got:,} of {written:,} games in {time.perf_counter() - start:.0f} s")
    return {"synthetic (store API)": synthetic, "imported (JSONL)": imported}


def measure(src: Path, results: Path, repeat: int, out: Path) -> dict[str, Any]:
    """`view_measure.py` on `results` with `src` first on the path, in a new process."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    args = json.dumps({"results": str(results), "repeat": repeat, "out": str(out)})
    done = subprocess.run([sys.executable, str(ROOT / "view_measure.py"), args], env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode:
        raise SystemExit(f"measuring failed ({src}):\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:,}" if isinstance(value, int) else f"{value:.2f} s"


def print_table(store: str, runs: list[tuple[str, dict[str, Any]]]) -> None:
    """One store's figures, a column per source tree, the ratio old/new and each goal."""
    print(f"\n{store}")
    head = "".join(f"{label:>16}" for label, _ in runs)
    extra = f"{'old/new':>9}" if len(runs) == 2 else ""
    print(f"  {'':34}{head}{extra}  goal")
    for key in runs[-1][1]:
        values = [figures.get(key) for _, figures in runs]
        row = "".join(f"{_cell(v):>16}" for v in values)
        if len(runs) == 2 and all(isinstance(v, float) for v in values) and values[1]:
            row += f"{values[0] / values[1]:>8.1f}x"
        elif len(runs) == 2:
            row += " " * 9
        goal = GOALS.get(key)
        new = values[-1]
        if goal is not None and isinstance(new, float):
            row += f"  < {goal:.0f} s: {'met' if new < goal else 'NOT met'}"
        print(f"  {key:34}{row}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=12, help="12: 10,080 and 9,504 episodes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per median")
    parser.add_argument("--compare-src", type=Path, help="an older checkout's src/ to compare")
    parser.add_argument("--keep", type=Path, help="keep the stores and exports in this folder")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        home = args.keep or Path(tmp)
        stores = make_stores(home, args.models)
        trees = [("this checkout", ROOT.parent / "src")]
        if args.compare_src:
            trees.insert(0, ("--compare-src", args.compare_src.resolve()))
        for n, (store, results) in enumerate(stores.items()):
            runs = []
            for k, (label, src) in enumerate(trees):
                out = home / f"export-{n}-{k}"
                runs.append((label, measure(src, results, args.repeat, out)))
            print_table(store, runs)
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()
