"""Benchmark: the HTML report of ~10,000 seed-003-style episodes, its time and peak memory.

seed-003 released 9,492 games; imported as a user would (game named `pd/sh`, no labels or payoffs
stored, bots and LLM prompts as seat 1), they are what the report must handle. This script writes
such a store through the store API (8 games: pd, pd-alt, sh, sh-alt of 16 rounds and eq1, eq1-alt,
ba3, ba3-alt of 24; rows zs/cot/spp; opponents srep, pp, mf or ap, tft-br and the LLM prompts;
12 models; 5 runs; seeded random moves with a few forfeits), then builds the report in a fresh
process and prints the wall time and the process's peak resident memory (and what the imports
alone take).

    .venv/bin/python benchmarks/report.py [--episodes 10080] [--keep DIR]
    .venv/bin/python benchmarks/report.py --compare-src /tmp/old/src   # also an older checkout

With `--compare-src` the same store is generated and reported by that source tree too (e.g.
`git archive <commit> src | tar -x -C /tmp/old`), and the two reports' counterfactual tables are
compared cell by cell.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GAMES = {
    "pd/pd": 16, "pd/pd-alt": 16, "pd/sh": 16, "pd/sh-alt": 16,
    "rps/eq1": 24, "rps/eq1-alt": 24, "rps/ba3": 24, "rps/ba3-alt": 24,
}  # fmt: skip
PROMPTS = ("zs", "cot", "spp")
RUNS = 5
FORFEIT = 0.003
"""Share of LLM moves that are null (an unparsable reply, seed-003 §3.2)."""

_GENERATE = r"""
import json, random, sys
from stratagem.experiments.store import (
    EpisodeBundle, EpisodeRecord, ExperimentRecord, ResultStore, RoundRecord,
)
from stratagem.games.catalog import get_stage

path, n_models, spec = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
games, prompts, runs, forfeit = spec["games"], spec["prompts"], spec["runs"], spec["forfeit"]
rng = random.Random(2025)
experiment = ExperimentRecord("seed-003", "seed-003 released games (generated)", {}, "")
count = 0
with ResultStore(path) as store:
    for name, n_rounds in games.items():
        stage = get_stage(name.split("/", 1)[1])
        labels, table = stage.labels, stage.payoffs.tolist()
        bots = ["srep", "pp", "mf" if len(labels[0]) == 2 else "ap", "tft-br"]
        for m in range(n_models):
            model = f"model-{m:02d}"
            for prompt in prompts:
                for opponent in [*bots, *prompts]:
                    llm = opponent in prompts
                    for run in range(runs):
                        eid = f"{name}-{model}-{prompt}-{opponent}-{run}".replace("/", "_")
                        rounds, totals = [], [0.0, 0.0]
                        for t in range(1, n_rounds + 1):
                            a = rng.randrange(len(labels[0]))
                            b = rng.randrange(len(labels[1]))
                            moves = [labels[0][a], labels[1][b]]
                            if rng.random() < forfeit:
                                moves[0] = None
                            if llm and rng.random() < forfeit:
                                moves[1] = None
                            valid = None not in moves
                            pay = table[a][b] if valid else [0.0, 0.0]
                            totals = [totals[0] + pay[0], totals[1] + pay[1]]
                            own = rng.randrange(50, 900)
                            tokens = [own, rng.randrange(50, 900) if llm else None]
                            rounds.append(RoundRecord(eid, t, tuple(moves), tuple(pay), valid,
                                                      tuple(tokens)))
                        record = EpisodeRecord(
                            id=eid, experiment_id="seed-003", game=name,
                            players=({"name": prompt, "kind": "llm", "model": model},
                                     {"name": opponent, "kind": "llm" if llm else "strategy",
                                      **({"model": model} if llm else {})}),
                            seed=run, status="finished", spec={"iteration": run, "model": model},
                            payoffs=tuple(totals), source="import:seed-003",
                        )
                        store.put_episode(EpisodeBundle(record, tuple(rounds)),
                                          experiment=experiment)
                        count += 1
print(count)
"""

_REPORT = r"""
import json, resource, sys, time
import stratagem.analysis.report as report_module
try:
    import stratagem.studies  # registers the studies' sections (newer layouts)
except ImportError:
    pass
import matplotlib
matplotlib.use("Agg")
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
report_module.build_report(sys.argv[1], out_path=sys.argv[2])
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall_s": wall, "peak_mb": peak / 1024, "imports_mb": base / 1024}))
"""


def _child(code: str, src: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(src), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"child failed ({src}):\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1]


def run(src: Path, folder: Path, n_models: int) -> tuple[int, dict[str, float], Path]:
    store = folder / "stratagem.db"
    spec = {"games": GAMES, "prompts": PROMPTS, "runs": RUNS, "forfeit": FORFEIT}
    episodes = int(_child(_GENERATE, src, str(store), str(n_models), json.dumps(spec)))
    html = folder / "report.html"
    figures = json.loads(_child(_REPORT, src, str(store), str(html)))
    return episodes, figures, html


class _Tables(HTMLParser):
    """Each <table> after a caption title, as rows of cell texts; heat maps drawn as tables
    (class "heat", images in older code) are counted apart, not compared."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self._title: list[str] = []
        self._in_title = False
        self._rows: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self._heat = False
        self.heat_maps = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "span" and "title" in (dict(attrs).get("class") or "").split():
            self._in_title, self._title = True, []
        elif tag == "table":
            self._rows = []
            self._heat = "heat" in (dict(attrs).get("class") or "").split()
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "span":
            self._in_title = False
        elif tag in ("td", "th") and self._rows is not None and self._cell is not None:
            self._rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table" and self._rows is not None:
            if self._heat:
                self.heat_maps += 1
            else:
                self.tables.append(("".join(self._title).strip(), self._rows))
            self._rows = None

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title.append(data)
        if self._cell is not None:
            self._cell.append(data)


def study_tables(html: Path) -> tuple[list[tuple[str, list[list[str]]]], int, int]:
    """The counterfactual section's tables (from its heading to the end of the section), and how
    many heat maps it draws as tables and as images."""
    text = html.read_text(encoding="utf-8")
    start = text.find('id="counterfactual"')
    end = text.find("<section", start + 1)
    section = text[start : end if end > 0 else None]
    parser = _Tables()
    parser.feed(section)
    return parser.tables, parser.heat_maps, section.count("<img ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=12, help="12 models: 10,080 episodes")
    parser.add_argument("--compare-src", type=Path, help="another checkout's src/ to compare")
    parser.add_argument("--keep", type=Path, help="keep the stores and reports in this folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = args.keep or Path(tmp)
        trees = [("this checkout", ROOT / "src")]
        if args.compare_src:
            trees.append((f"{args.compare_src}", args.compare_src.resolve()))
        results = []
        for label, src in trees:
            folder = home / f"run-{len(results)}"
            folder.mkdir(parents=True, exist_ok=True)
            episodes, figures, html = run(src, folder, args.models)
            results.append((label, html))
            print(
                f"{label}: report of {episodes:,} episodes in {figures['wall_s']:.1f} s, "
                f"peak memory {figures['peak_mb']:.0f} MB "
                f"(imports alone {figures['imports_mb']:.0f} MB)"
            )
        for label, html in results:
            tables, heat, images = study_tables(html)
            print(f"{label}: {len(tables)} study tables, {heat} heat-map tables, {images} images")
        if len(results) == 2:
            mine, theirs = (study_tables(html)[0] for _, html in results)
            same = mine == theirs
            print(
                f"counterfactual tables: {len(mine)} here, {len(theirs)} there; "
                f"{'identical' if same else 'DIFFERENT'}"
            )
            if not same:
                for (t1, r1), (t2, r2) in zip(mine, theirs, strict=False):
                    if (t1, r1) != (t2, r2):
                        print(f"first difference: {t1!r} vs {t2!r}")
                        break


if __name__ == "__main__":
    main()
