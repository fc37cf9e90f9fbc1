"""The measurements of `benchmarks/view.py`, run in a process of their own on one source tree.

Run as a script with PYTHONPATH set to the `src/` measured (this checkout's or an older one's,
`--compare-src`), so the old and new trees answer the same store in the same kind of fresh
process; prints one JSON object of figures (seconds; None where that tree lacks the feature).
Every call goes through the real Starlette app (`TestClient`: routing, the data thread and the
JSON encoding are counted, not the network nor the browser's decoding).

    PYTHONPATH=src python benchmarks/view_measure.py '{"results": DIR, "repeat": 3, "out": DIR}'
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from stratagem.web.data import Sources
from stratagem.web.export import export_site
from stratagem.web.server import build_app

Call = tuple[str, dict[str, str]]
"""A request the page makes: path and query."""


class Missing(Exception):
    """A route this source tree does not have (an older checkout)."""


def _ask(client: TestClient, call: Call) -> Any:
    path, params = call
    response = client.get(path, params=params)
    if response.status_code == 404 and b"not found" in response.content:
        raise Missing(path)
    if response.status_code != 200:
        raise SystemExit(f"{path} {params}: {response.status_code} {response.text[:300]}")
    return response.json()


def _page_calls(base: str, source: str, filters: dict[str, str]) -> list[Call]:
    """What app.js's experimentPage asks when a link opens it, then the version poll."""
    cell_filters = {k: v for k, v in filters.items() if k in ("game", "model", "agent")}
    return [
        (f"{base}/cells", cell_filters),
        (f"{base}/episodes", filters),
        ("/api/experiments", {}),
        (f"/api/version/{source}", {}),
    ]


def _timed(client: TestClient, calls: list[Call]) -> float:
    start = time.perf_counter()
    for call in calls:
        _ask(client, call)
    return time.perf_counter() - start


def _cold(results: Path, calls: Callable[[TestClient], list[Call]], repeat: int) -> float | None:
    """The median time of `calls` on freshly built apps (the first view of a store version,
    as when `stratagem view` starts or a commit changed the store)."""
    times = []
    for _ in range(repeat):
        app = build_app([results])
        try:
            client = TestClient(app, base_url="http://127.0.0.1")
            try:
                asked = calls(client)
                times.append(_timed(client, asked))
            except Missing:
                return None
        finally:
            app.state.data.close()
    return statistics.median(times)


def main() -> None:
    args = json.loads(sys.argv[1])
    results, repeat, out = Path(args["results"]), int(args["repeat"]), Path(args["out"])
    figures: dict[str, Any] = {}
    start = time.perf_counter()
    app = build_app([results])
    figures["app start"] = time.perf_counter() - start
    client = TestClient(app, base_url="http://127.0.0.1")
    x = _ask(client, ("/api/experiments", {}))[0]
    source, base = x["source"], f"/api/experiments/{x['source']}/{x['id'].encode().hex()}"
    cells = _ask(client, (f"{base}/cells", {}))
    first = cells[len(cells) // 3]
    try:
        analysis = _ask(client, (f"{base}/analysis", {}))
        rows = [r for board in analysis["leaderboards"] for r in board["rows"]]
        group = rows[len(rows) // 2]["group"] if rows else None
    except Missing:
        group = None
    app.state.data.close()
    filtered = {"model": first["model"], "game": first["game"]}
    page = _page_calls(base, source, {})
    analysis_call: Call = (f"{base}/analysis", {})
    charts_call: Call = (f"{base}/charts", {})
    figures["experiment page, cold"] = _cold(results, lambda c: page, repeat)
    # The folded parts, once each (seconds long, so noise matters less).
    figures["Analysis part opened, cold"] = _cold(results, lambda c: [analysis_call], 1)
    figures["Charts part opened, cold"] = _cold(results, lambda c: [charts_call], 1)
    app = build_app([results])
    try:
        client = TestClient(app, base_url="http://127.0.0.1")
        _timed(client, page)
        figures["experiment page, warm"] = statistics.median(
            _timed(client, page) for _ in range(repeat)
        )
    finally:
        app.state.data.close()
    links: dict[str, dict[str, str] | None] = {
        "link model + game, cold": filtered,
        "link cell, cold": {"cell": first["cell"]} if "cell" in first else None,
    }
    if group is not None:  # a store with leaderboards (not seed-003's)
        links["link leaderboard row, cold"] = {"group": group}
    for label, query in links.items():
        if query is None:
            figures[label] = None
            continue
        calls = _page_calls(base, source, query)
        if "group" in query:  # the Analysis part opens with the list (analysis.js)
            calls.append(analysis_call)
        figures[label] = _cold(results, lambda c, calls=calls: calls, repeat)  # type: ignore[misc]
    sources = Sources([results])
    try:
        written = export_site(sources, out, max_per_cell=1)
    finally:
        sources.close()
    figures["export, one episode per cell"] = written.seconds
    figures["exported episodes"] = written.episodes
    figures["cells"] = len(cells)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
