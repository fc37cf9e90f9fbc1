"""Benchmark: `stratagem view` on ~10,000 seed-003-style episodes (issue 25 item 9).

The store is the report benchmark's (`benchmarks/report.py`: 8 games, 12 models, 840 episodes a
model), written in a temporary folder. Each page is asked through the real Starlette app
(`TestClient`, so routing, the data thread and the JSON encoding are counted, not the client's
decoding of the answer) several times, and
the median server-side time is printed: the experiment page's calls (experiments, cells, a page
of episodes with a filter), a page with a search, and an episode's replay (everything, seat 1).
The first cells() call of a store version is timed apart (it reads every finished episode; later
views of the same version reuse it): each of those calls on a freshly built app, as when `stratagem
view` starts or a commit has changed the store, after one request that starts the app. Then the
static export of every episode: its time, files, bytes.

    .venv/bin/python benchmarks/view.py [--episodes 10080] [--repeat 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from report import _GENERATE, FORFEIT, GAMES, PROMPTS, RUNS, _child  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from stratagem.web.data import Sources  # noqa: E402
from stratagem.web.export import export_site  # noqa: E402
from stratagem.web.server import build_app  # noqa: E402

PER_MODEL = len(GAMES) * len(PROMPTS) * (4 + len(PROMPTS)) * RUNS
"""Episodes the generator writes per model (840)."""


def _median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _get(client: TestClient, url: str) -> Callable[[], object]:
    def call() -> object:
        response = client.get(url)
        if response.status_code != 200:
            raise SystemExit(f"{url}: {response.status_code} {response.text[:300]}")
        return response.content  # the answer's bytes: decoding them is the browser's time

    return call


def _first_cells(results: Path, url: str, repeat: int) -> float:
    """The median time of the first cells view of a store version, each on a new app."""
    times = []
    for _ in range(repeat):
        app = build_app([results])
        try:
            client = TestClient(app, base_url="http://127.0.0.1")
            _get(client, "/api/experiments")()
            start = time.perf_counter()
            _get(client, url)()
            times.append(time.perf_counter() - start)
        finally:
            app.state.data.close()
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=12 * PER_MODEL, help="about this many")
    parser.add_argument("--repeat", type=int, default=5, help="calls per median")
    parser.add_argument("--keep", type=Path, help="keep the store and the export in this folder")
    args = parser.parse_args()
    models = max(1, round(args.episodes / PER_MODEL))
    with tempfile.TemporaryDirectory() as tmp:
        home = args.keep or Path(tmp)
        results = home / "results"
        results.mkdir(parents=True, exist_ok=True)
        spec = {"games": GAMES, "prompts": PROMPTS, "runs": RUNS, "forfeit": FORFEIT}
        start = time.perf_counter()
        made = int(_child(_GENERATE, ROOT.parent / "src", str(results / "stratagem.db"),
                          str(models), json.dumps(spec)))  # fmt: skip
        print(f"store: {made:,} episodes generated in {time.perf_counter() - start:.0f} s")
        x = "/api/experiments/0/seed-003"
        episode = "/api/episodes/0/pd_pd-model-00-zs-srep-0"
        first_cells = _first_cells(results, f"{x}/cells", args.repeat)
        app = build_app([results])
        try:
            client = TestClient(app, base_url="http://127.0.0.1")
            _get(client, f"{x}/cells")()  # this version's cells, read once and kept
            rows = [
                ("experiments", "/api/experiments"),
                ("cells (same store version)", f"{x}/cells"),
                ("episodes page, filter model", f"{x}/episodes?model=model-03"),
                ("episodes page, filter game + invalid", f"{x}/episodes?game=pd/sh&invalid=1"),
                ("episodes page, search", f"{x}/episodes?q=model-05"),
                ("episodes page 10, no filter", f"{x}/episodes?page=10"),
                ("replay, everything", f"{episode}?perspective=all"),
                ("replay, seat 1", f"{episode}?perspective=seat:1"),
            ]
            print(f"median server-side time of {args.repeat} calls (TestClient, real app):")
            print(f"  {'cells, first call of a store version':40} {first_cells:8.1f} ms")
            for label, url in rows:
                print(f"  {label:40} {_median_ms(_get(client, url), args.repeat):8.1f} ms")
        finally:
            app.state.data.close()
        out = home / "export"
        sources = Sources([results])
        written = export_site(sources, out)
        print(
            f"static export of {written.episodes:,} episodes: {written.seconds:.1f} s, "
            f"{written.files:,} files, {written.bytes / 1e6:.1f} MB "
            f"({written.bytes / max(written.episodes, 1) / 1e3:.1f} kB an episode)"
        )


if __name__ == "__main__":
    main()
