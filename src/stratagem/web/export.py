"""`stratagem view --export`: the viewer as a static site, opened from file:// or any static host.

The site is the packaged pages and the registered game views (`web.views`: the page loads them
as the server's does; a plugin's are copied under `views/plugin/<namespace>/`), plus data files
written from the same `Sources` calls the live API answers (issue 25 item 7), so the two cannot
drift. Browsers refuse fetch() of file:// URLs, so each data file is a script that stores one
answer in `window.STRATAGEM_DATA[<its path>]`; its JSON escapes `<`, `>`, `&`, U+2028 and
U+2029, so no stored text can close the script or a comment. Each experiment's episodes are
written once as a full list with an index of the filters (computed by the data layer's own SQL
filters) and a search text per episode, which app.js pages, filters and searches in the
browser. With a seat's perspective only that seat's view of each episode is written, and the
search texts come from it: nothing hidden from the seat is in any file.

Each experiment's analysis (`Sources.analysis`: leaderboards, calibration, noise floors) is
written beside its cells, and every leaderboard row's group is indexed as a filter, so a row
opens its episodes from file:// too; a seat's export writes none (it sums up every seat's view).
The numbers of its charts (`Sources.charts`: cells' means, rounds, variant pairs) are written
there too, in every export: they are the cells table's numbers, drawn; the studies' charts
(MAgIC's ratings, ToM's belief accuracy) sum up every seat's view, so a seat's export has none.

Compare and diff (issue 25 item 6) open too. For each exported episode the pairs the live server
offers (`Sources.pairs`) whose two episodes are both exported are written, and for each pair the
alignment of its steps in each perspective both episodes were written in: at most `MAX_PAIRS`
pairs an experiment, so at most MAX_PAIRS x (1 + seats) small files, and each episode's file
says how many pairs it leaves out. The diffs written are those of
the exported experiments that share at least one cell, each pair once (A before B in the
experiments' order), at most `MAX_DIFFS`; each is one file of the shared cells' metrics.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments.records import STATUSES
from stratagem.web import views
from stratagem.web.data import Perspective, Sources, downloads
from stratagem.web.data.compare import align
from stratagem.web.data.listing import CELL, GROUP, MAX_PER_PAGE, outcome_values
from stratagem.web.server import CSP, json_bytes, page_bytes

MARKER = "stratagem-export"
"""The <meta name> that tells app.js it runs in an export (its content: the perspectives)."""
EXPORT_CSP = CSP.replace("; frame-ancestors 'none'", "")
"""The server's policy as a <meta> tag (which cannot carry frame-ancestors): scripts only from
the site's own files, none inline."""
NO_ANALYSIS: dict[str, Any] = {
    "leaderboards": [], "calibration": [], "noise": [],
    "withheld": "A seat's export holds no analysis: its numbers sum up what every seat saw.",
}  # fmt: skip
"""What a seat's export writes for an experiment's analysis (`Sources.analysis`)."""
MAX_PAIRS = 500
"""At most this many pairs of an experiment's episodes are written with their alignments (one
file per perspective each): each episode's pairs file says how many of its pairs it leaves
out, past this bound or because the other episode is not exported."""
MAX_DIFFS = 100
"""At most this many experiment pairs' diffs are written (the first that share a cell)."""
_KIND = re.compile(r"\(([^()]*)\)$")


@dataclass(frozen=True)
class Written:
    """What an export wrote: the one line `stratagem view --export` prints."""

    files: int
    bytes: int
    episodes: int
    seconds: float


def experiment_dir(source: str, experiment: str) -> str:
    """An experiment's data folder; the source's name and ids as hex, so any name or id is one
    safe file name (source.js agrees)."""
    return f"data/x/{source.encode().hex()}/{experiment.encode().hex()}"


def episode_file(source: str, episode: str, perspective: Perspective) -> str:
    name = "all" if perspective.seat is None else f"seat-{perspective.seat}"
    return f"data/e/{source.encode().hex()}/{episode.encode().hex()}/{name}.js"


def _ref(ref: tuple[str, str]) -> str:
    return f"{ref[0].encode().hex()}/{ref[1].encode().hex()}"


def compare_file(a: tuple[str, str], b: tuple[str, str], perspective: Perspective) -> str:
    """The alignment of episodes `a` and `b`, each (source, episode id) (source.js agrees)."""
    name = "all" if perspective.seat is None else f"seat-{perspective.seat}"
    return f"data/c/{_ref(a)}/{_ref(b)}/{name}.js"


def pairs_file(source: str, episode: str) -> str:
    """The pairs an exported episode offers (source.js agrees)."""
    return f"data/p/{source.encode().hex()}/{episode.encode().hex()}.js"


def diff_file(a: tuple[str, str], b: tuple[str, str]) -> str:
    """The diff of experiment `b` against `a`, each (source, experiment id)."""
    return f"data/d/{_ref(a)}/{_ref(b)}.js"


def script(key: str, value: Any) -> bytes:
    """A data file: `value` as JSON no HTML or JS parser can be broken out of."""
    text = json_bytes(value).decode().replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return (
        "window.STRATAGEM_DATA=window.STRATAGEM_DATA||{};"
        f'window.STRATAGEM_DATA["{key}"]={text};\n'
    ).encode()


def check_out(out: Path) -> None:
    """Never write into a user's folder: OUT must not exist or be an empty folder, and be one
    that can be made (not under a file, not in /proc): refused before any store is read."""
    if out.is_dir():
        if any(out.iterdir()):
            raise StratagemError(
                f"--export {out}: the folder is not empty; give a new or empty one"
            )
        return
    if out.exists() or out.is_symlink():
        raise StratagemError(f"--export {out}: is a file; give a new or empty folder")
    top = out  # the first missing folder on the way to OUT
    while not (top.parent.exists() or top.parent.is_symlink()) and top.parent != top:
        top = top.parent
    if not top.parent.is_dir():  # e.g. a-file/site
        raise StratagemError(
            f"--export {out}: cannot write a folder there ({top.parent} is not a folder)"
        )
    try:  # the first missing folder, made and removed: the rest can be made under it
        top.mkdir()
        top.rmdir()
    except OSError as exc:
        raise StratagemError(
            f"--export {out}: cannot write a folder there ({exc.strerror or exc})"
        ) from None


def export_site(
    sources: Sources,
    out: Path,
    *,
    experiments: Sequence[str] = (),
    max_per_cell: int | None = None,
    perspective: Perspective | None = None,
) -> Written:
    """Write the site into `out` (new or empty); `perspective` a seat writes only its views."""
    started = time.perf_counter()
    check_out(out)
    if max_per_cell is not None and max_per_cell < 1:
        raise StratagemError(f"--max-per-cell {max_per_cell}: expected 1 or more")
    chosen = _chosen(sources.experiments(), experiments)
    seat = None if perspective is None else perspective.seat
    if seat is not None:
        _check_seat(sources, chosen, seat)
    views.load_for(chosen)  # the views of the plugin games exported, before the page is written
    writer = _Writer(out)
    for url, (body, _) in page_bytes().items():
        name = "index.html" if url == "/" else url.lstrip("/")
        writer.write(name, _index(views.render_index(body), seat) if url == "/" else body)
    for url, path, _ in views.view_files():
        writer.write(url, _view_file(path))
    writer.data("data/sources.js", sources.sources())
    if seat is not None:  # a report shows every seat's secrets: never in a seat's export
        chosen = [{**exp, "report": None} for exp in chosen]
    writer.data("data/experiments.js", chosen)
    for exp in chosen:
        if exp["report"] is not None:  # the report as written, its study sections linked
            report = sources.report_file(exp["source"], exp["id"])
            writer.write(exp["report"]["url"], report.read_bytes())
    written: dict[tuple[str, str], int] = {}  # (source, episode id) -> its seats
    with sources.held():  # one connection per store, not one per episode view
        for exp in chosen:
            _experiment(writer, sources, exp["source"], exp["id"], max_per_cell, seat, written)
        for exp in chosen:
            _pairs(writer, sources, exp["source"], exp["id"], written, seat)
        _diffs(writer, sources, chosen)
        if seat is None:  # an episode's record and the tables hold what every seat saw
            for exp in chosen:
                _downloads(writer, sources, exp["source"], exp["id"], written)
    episodes = len(written)
    return Written(writer.files, writer.bytes, episodes, time.perf_counter() - started)


def _view_file(path: Path) -> bytes:
    """A registered view's file, or one line naming it when it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise StratagemError(
            f"--export: cannot read the game view {path} ({exc.strerror or exc})"
        ) from None


def _check_seat(sources: Sources, chosen: list[dict[str, Any]], seat: int) -> None:
    """A seat no episode to export has would write a site without an episode: refused, as the
    live API refuses that perspective of an episode (read until an episode has the seat)."""
    most = None
    for x in chosen:
        for item in _all_items(sources, x["source"], x["id"]):
            if len(item["seats"]) > seat:
                return
            most = max(most or 0, len(item["seats"]))
    if most is not None:
        has = f"seats 0 to {most - 1}" if most else "no seats"
        raise StratagemError(
            f"--perspective seat:{seat}: no episode to export has that seat "
            f"(the episodes have {has})"
        )


def _chosen(found: list[dict[str, Any]], wanted: Sequence[str]) -> list[dict[str, Any]]:
    if not wanted:
        return found
    ids = {x["id"] for x in found}
    missing = [w for w in wanted if w not in ids]
    if missing:
        raise StratagemError(
            f"--experiment {', '.join(missing)}: not in these results directories "
            f"(found: {', '.join(sorted(ids)) or 'none'})"
        )
    return [x for x in found if x["id"] in wanted]


def _index(body: bytes, seat: int | None) -> bytes:
    seen = str(Perspective(seat))
    tags = (
        f'<meta name="{MARKER}" content="{seen}">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{EXPORT_CSP}">\n'
    )
    head = b'<meta charset="utf-8">\n'
    if head not in body:
        raise StratagemError("the packaged index.html has no <meta charset>; reinstall stratagem")
    return body.replace(head, head + tags.encode(), 1)


class _Writer:
    def __init__(self, out: Path) -> None:
        self.out, self.files, self.bytes = out, 0, 0
        self._made(lambda: out.mkdir(parents=True, exist_ok=True), out)

    def write(self, name: str, body: bytes) -> None:
        path = self.out / name

        def made() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)

        self._made(made, path)
        self.files += 1
        self.bytes += len(body)

    def _made(self, make: Callable[[], None], path: Path) -> None:
        """A full disk or a folder gone mid-export is one line naming the file, not a trace."""
        try:
            make()
        except OSError as exc:
            raise StratagemError(f"--export {self.out}: cannot write {path} "
                                 f"({exc.strerror or exc})") from None  # fmt: skip

    def data(self, name: str, value: Any) -> None:
        self.write(name, script(name, value))


def _all_items(
    sources: Sources, source: str, experiment: str, filters: dict[str, str] | None = None
) -> Iterator[dict[str, Any]]:
    """Every episode of the experiment (matching `filters`), page by page as the API gives them."""
    page = 0
    while True:
        got = sources.episodes(
            source, experiment, filters=filters, page=page, per_page=MAX_PER_PAGE
        )
        yield from got["items"]
        page += 1
        if page * MAX_PER_PAGE >= got["total"]:
            return


def _experiment(
    writer: _Writer,
    sources: Sources,
    source: str,
    experiment: str,
    max_per_cell: int | None,
    seat: int | None,
    written: dict[tuple[str, str], int],
) -> None:
    """Write an experiment's cells, its exported episodes' list, filter index and search texts,
    and each episode's views; add each episode and its seat count to `written`."""
    folder = experiment_dir(source, experiment)
    cells = sources.cells(source, experiment)
    writer.data(f"{folder}/cells.js", cells)
    # The analysis sums up what every seat saw (beliefs, outcomes): never in a seat's export.
    analysis = NO_ANALYSIS if seat is not None else sources.analysis(source, experiment)
    writer.data(f"{folder}/analysis.js", analysis)
    charts = sources.charts(source, experiment)
    if seat is not None:  # the studies' charts sum up what every seat saw, as the analysis
        charts = {**charts, "ratings": None, "belief": None}
    writer.data(f"{folder}/charts.js", charts)
    items = list(_all_items(sources, source, experiment))
    if max_per_cell is not None:
        cell_of = sources.cell_of_episodes(source, experiment)
        taken: Counter[str] = Counter()
        kept = []
        for item in items:  # the first N of each cell in store order; unfinished by game
            key = cell_of.get(item["id"], f"unfinished {item['game']}")
            taken[key] += 1
            if taken[key] <= max_per_cell:
                kept.append(item)
        items = kept
    position = {item["id"]: k for k, item in enumerate(items)}
    index: dict[str, dict[str, list[int]]] = {}
    found = sources.filter_ids(source, experiment, _filter_values(cells, items, analysis))
    for name, values in found.items():
        # Positions ascending: the list's store order, as the live list's pages give them.
        index[name] = {v: sorted(position[i] for i in values[v] if i in position)
                       for v in sorted(values)}  # fmt: skip
    writer.data(f"{folder}/episodes.js", {"items": items, "index": index})
    texts = []
    for item in items:
        seats = len(item["seats"])
        views = [Perspective(None), *(Perspective(k) for k in range(seats))]
        if seat is not None:  # only the seat's own view, where the episode has that seat
            views = [Perspective(seat)] if seat < seats else []
        text: list[str] = []
        for seen in views:
            view = sources.episode(source, item["id"], seen)
            writer.data(episode_file(source, item["id"], seen), view)
            if seen == views[0]:
                _strings(view["steps"], text)
        texts.append("\n".join(text).lower())
        written[(source, item["id"])] = seats
    writer.data(f"{folder}/search.js", texts)


def _pairs(
    writer: _Writer,
    sources: Sources,
    source: str,
    experiment: str,
    written: dict[tuple[str, str], int],
    seat: int | None,
) -> None:
    """Each exported episode's pairs whose other episode is exported too, as the live server
    offers them (`Sources.pairs`), with each pair's alignment in every perspective written for
    both, up to `MAX_PAIRS` pairs an experiment; each episode's file counts what it leaves out."""
    ids = [i for s, i in written if s == source]
    held = 0
    for episode, found in sources.experiment_pairs(source, experiment, ids).items():
        kept = []
        for p in found:
            a, b = (p["a"]["source"], p["a"]["episode"]), (p["b"]["source"], p["b"]["episode"])
            if b not in written or held >= MAX_PAIRS:
                continue
            held += 1
            kept.append(p)
            seats = min(written[a], written[b])
            views = [Perspective(None), *(Perspective(k) for k in range(seats))]
            if seat is not None:
                views = [Perspective(seat)] if seat < seats else []
            for seen in views:
                writer.data(
                    compare_file(a, b, seen),
                    align(sources.episode(*a, seen), sources.episode(*b, seen)),
                )
        offered = {"pairs": kept, "left_out": len(found) - len(kept), "bound": MAX_PAIRS}
        writer.data(pairs_file(source, episode), offered)


def _diffs(writer: _Writer, sources: Sources, chosen: list[dict[str, Any]]) -> None:
    """The diffs of the exported experiments that share a cell, and their list (data/diffs.js,
    what the diff page offers in an export)."""
    refs = [(x["source"], x["id"]) for x in chosen]
    keys = {
        ref: {(c["model"], c["agent"], c["game"], c["opponent"], c["rounds"])
              for c in sources.cells(*ref)}
        for ref in refs
    }  # fmt: skip
    held: list[dict[str, Any]] = []
    for i, a in enumerate(refs):
        for b in refs[i + 1 :]:
            shared = len(keys[a] & keys[b])
            if shared and len(held) < MAX_DIFFS:
                got = sources.diff(a, b)
                writer.data(diff_file(a, b), got)
                for fmt in downloads.FORMATS:  # the diff.js page's download links
                    body = downloads.encode(downloads.diff_table(got), fmt)
                    writer.write(f"{diff_file(a, b).removesuffix('.js')}/download.{fmt}", body)
                refs_ab = {k: {"source": r[0], "experiment": r[1]} for k, r in (("a", a), ("b", b))}
                held.append({**refs_ab, "shared": shared})
    writer.data("data/diffs.js", held)


def _filter_values(
    cells: list[dict[str, Any]], items: list[dict[str, Any]], analysis: dict[str, Any]
) -> dict[str, set[str]]:
    """Each filter's values worth indexing: those the pages offer and the episodes hold, and
    every leaderboard row's group."""
    values: dict[str, set[str]] = {
        "game": {i["game"] for i in items} | {c["game"] for c in cells},
        "model": {i["model"] for i in items if i["model"]} | {c["model"] for c in cells},
        "agent": {i["agent"] for i in items if i["agent"]} | {c["agent"] for c in cells},
        "seat_kind": set(),
        "status": set(STATUSES),
        "invalid": {"0", "1"},
        "outcome": set(outcome_values(max((len(i["seats"]) for i in items), default=2))),
        GROUP: {r["group"] for board in analysis["leaderboards"] for r in board["rows"]},
        CELL: {c["cell"] for c in cells},
    }
    for item in items:
        for seat in item["seats"]:
            found = _KIND.search(seat)
            if found:
                values["seat_kind"].add(found.group(1))
    return {k: {str(v) for v in vs if v is not None} for k, vs in values.items()}


def _strings(value: Any, into: list[str]) -> None:
    """Every text in a view (events, messages, replies): what the export's search looks in."""
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, into)
    elif isinstance(value, list):
        for v in value:
            _strings(v, into)


DOWNLOAD_TABLES = ("episodes", "seats", "rounds")
"""The tables of `stratagem.open` an export writes for its episodes (issue 36 item 9; the live
server offers every table, filtered)."""


def _downloads(
    writer: _Writer,
    sources: Sources,
    source: str,
    experiment: str,
    written: dict[tuple[str, str], int],
) -> None:
    """The files cells.js links to in an export: the experiment's cells and its exported
    episodes' tables in every format, beside its data (`download/`), and each exported
    episode's record as JSONL; a table past `downloads.MAX_ROWS` rows is left out."""
    folder = f"{experiment_dir(source, experiment)}/download"
    cells = downloads.cells_table(sources.cells(source, experiment))
    ids = [i for s, i in written if s == source]
    with sources.reading(source, experiment) as store:
        tables = {}
        for table in DOWNLOAD_TABLES:
            try:
                tables[table] = downloads.episodes_table(store, experiment, ids, table)
            except StratagemError:  # too many rows: the live server or stratagem.open
                continue
        own = [i for i in ids if (e := store.episode(i)) and e.experiment_id == experiment]
        for episode in own:
            name = episode_file(source, episode, Perspective(None))
            writer.write(name.rsplit("/", 1)[0] + "/episode.jsonl",
                         downloads.episode_jsonl(store, episode))  # fmt: skip
    for fmt in downloads.FORMATS:
        writer.write(f"{folder}/cells.{fmt}", downloads.encode(cells, fmt))
        for table, frame in tables.items():
            writer.write(f"{folder}/{table}.{fmt}", downloads.encode(frame, fmt, table))
