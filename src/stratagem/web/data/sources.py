"""The results directories being viewed, each store opened read-only for each question.

A store is opened anew for every call (SQLite opens in about half a millisecond), so each answer
sees the latest commit of a run writing to it, and no connection is held open between calls:
the viewer leaves a store exactly as it found it (`ResultStore(read_only=True)`). A batch of
calls on one thread (the static export, thousands of episodes) may hold one connection per store
with `held()`, only while no writer has it open and its file is unchanged. `cells()` reads
every finished episode, so its answer is kept per experiment and reused while `version()` is
unchanged: any commit changes the version, and then it is read again (`analysis.tallies`: a
few aggregate queries, not every round). The same read gives each episode's metrics for `diff()`.
An experiment's `analysis()` (its leaderboards, calibration and noise floors) is kept the same way.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import defaultdict
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stratagem.analysis.cells import CellKey, order_key, pooled_rates, share_invalid
from stratagem.analysis.episodes import seat_of
from stratagem.analysis.tallies import EpisodeTally, episode_tallies
from stratagem.errors import StratagemError
from stratagem.experiments.records import EpisodeRecord
from stratagem.experiments.store import ResultStore
from stratagem.experiments.store_files import stores_in
from stratagem.web.data.analysis import Analysis, experiment_analysis
from stratagem.web.data.applies import Applies, applying, game_facts
from stratagem.web.data.charts import experiment_charts
from stratagem.web.data.compare import pairs as compare_pairs
from stratagem.web.data.compare import pairs_of
from stratagem.web.data.diff import CellEpisodes, diff, episode_metrics, noise_floors
from stratagem.web.data.listing import (
    CELL,
    GROUP,
    BadQuery,
    cell_text,
    episode_ids,
    episode_page,
)
from stratagem.web.data.names import source_names
from stratagem.web.data.perspective import Perspective
from stratagem.web.data.replay import episode_view
from stratagem.web.data.reports import report_path, report_sections, report_url

_Metrics = dict[CellKey, CellEpisodes]
"""Each cell's episodes and their metrics (`diff.episode_metrics`)."""


_Costs = dict[str, dict[int, float]]
"""Dollars per episode and seat (`ResultStore.seat_costs`)."""
_Facts = dict[str, Applies]
"""What applies to each game of an experiment (`applies.game_facts`)."""


CELL_FOLLOWS = ("seat_kind", "status", "invalid", "outcome", GROUP)
"""The episode list's filters the cells are counted again under (issue 36 item 7): what an
episode is, not what a cell is made of (game, model, agent pick rows), nor `cell` (a row)."""


class _Read:
    """An experiment's cells as read at one store version, each cell's episode ids (a `cell`
    filter), and its episodes' metrics for `diff`, worked out when a diff first asks (a cells
    view need not wait for them)."""

    def __init__(self, tallies: list[EpisodeTally], costs: _Costs, facts: _Facts) -> None:
        self.rows = cell_rows(tallies, costs, facts)
        self._tallies = tallies
        self._costs = costs
        self.facts = facts
        self.ids: dict[str, list[str]] = defaultdict(list)
        for e in tallies:
            self.ids[cell_text(e.key)].append(e.id)

    def rows_of(self, ids: Container[str]) -> list[dict[str, Any]]:
        """The cells counted again over the episodes `ids` only (a filtered list's)."""
        return cell_rows([e for e in self._tallies if e.id in ids], self._costs, self.facts)

    @functools.cached_property
    def metrics(self) -> _Metrics:
        cooperation_in = {game for game, applies in self.facts.items() if applies.cooperation}
        return episode_metrics(self._tallies, self._costs, cooperation_in)


class Sources:
    """The results directories being viewed, opened read-only (SQLite `mode=ro` URIs: browsing
    never changes a store's bytes, and it works while a run is writing)."""

    def __init__(self, dirs: Sequence[Path]) -> None:
        """Each of `dirs` a results directory, a store file or a folder of results directories
        (as every command finds them); each store is checked once here, and named by its
        folder (`names.source_names`), so a link names it whatever the order of `dirs`."""
        found: list[Path] = []
        for d in dirs:
            for path in stores_in(Path(d)):
                if path.resolve() not in {p.resolve() for p in found}:
                    found.append(path)
        self._paths = dict(zip(source_names(found), found, strict=True))
        """Each store by its name (`names.source_names`), in the order given."""
        self._holding = False
        self._held: dict[str, tuple[ResultStore, tuple[int, int, int]]] = {}
        self._cells: dict[tuple[str, str], tuple[str, _Read]] = {}
        self._analyses: dict[tuple[str, str], tuple[str, Analysis]] = {}
        self._charts: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
        self._summaries: dict[str, tuple[str, list[dict[str, Any]]]] = {}
        for name in self._paths:
            with self._open(name):
                pass

    def close(self) -> None:
        """Nothing is held open between calls; kept so callers need not know that."""

    @contextmanager
    def held(self) -> Iterator[None]:
        """Within this block every call on this thread reuses one read-only connection per
        store instead of opening one per call (the export's thousands of episode views), while
        no writer has the store open; it is opened again if the file changes."""
        if self._holding:
            yield
            return
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
            for store, _ in self._held.values():
                store.close()
            self._held.clear()

    @contextmanager
    def _open(self, source: str) -> Iterator[ResultStore]:
        path = self._paths.get(source)
        if path is None:
            known = ", ".join(f"'{n}'" for n in self._paths)
            raise StratagemError(f"unknown source '{source}': expected one of {known}")
        wal = Path(f"{path}-wal")
        if not self._holding or wal.exists():
            # While a writer has the store open (its -wal), each call opens its own reader, so
            # a reader held open never keeps the writer from removing its -wal and -shm.
            with ResultStore(path, read_only=True) as store:
                yield store
            return
        # Read as immutable: held while the file (inode, size, time) is unchanged.
        stat = path.stat()
        state = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        kept = self._held.get(source)
        if kept is None or kept[1] != state:
            if kept is not None:
                kept[0].close()
            kept = self._held[source] = (ResultStore(path, read_only=True), state)
        yield kept[0]

    @contextmanager
    def reading(self, source: str, experiment: str | None = None) -> Iterator[ResultStore]:
        """The source's store, read-only, for what reads it whole (`downloads`); `experiment`
        checked to be one of it."""
        with self._open(source) as store:
            if experiment is not None:
                self._experiment(store, source, experiment)
            yield store

    def _experiment(self, store: ResultStore, source: str, experiment: str) -> None:
        if store.experiment(experiment) is None:
            raise StratagemError(f"source {source}: unknown experiment '{experiment}'")

    def sources(self) -> list[dict[str, Any]]:
        out = []
        for name, path in self._paths.items():
            with self._open(name) as store:
                out.append({"id": name, "path": str(path), "experiments": len(store.experiments())})
        return out

    def experiments(self) -> list[dict[str, Any]]:
        """Every experiment of every source, with its games, models, episodes by status and
        what its calls cost (`call_totals`: every call paid for, restarted episodes' too)."""
        out = []
        for name in self._paths:
            # Kept while the store's version is unchanged, as `cells` (an imported log's tokens
            # sum every round); the report is looked for each time: it is written beside it.
            version = self.version(name)
            kept = self._summaries.get(name)
            if kept is None or kept[0] != version:
                with self._open(name) as store:
                    rows = [_experiment_summary(store, name, exp.id, exp.name)
                            for exp in store.experiments()]  # fmt: skip
                kept = self._summaries[name] = (version, rows)
            for row in kept[1]:
                copied = {k: v.copy() if isinstance(v, list | dict) else v for k, v in row.items()}
                out.append({**copied, "report": self._report(name, row["id"])})
        return out

    def report_file(self, source: str, experiment: str) -> Path:
        """The experiment's HTML report (`stratagem report` wrote it next to the store)."""
        with self._open(source) as store:
            self._experiment(store, source, experiment)
        path = report_path(self._paths[source], experiment)
        if path is None:
            raise StratagemError(f"source {source}: experiment '{experiment}' has no report")
        return path

    def _report(self, source: str, experiment: str) -> dict[str, Any] | None:
        """Where the report is and its study sections, for the cells' links; None without one."""
        path = report_path(self._paths[source], experiment)
        if path is None:
            return None
        return {"url": report_url(source, experiment), "sections": report_sections(path)}

    def cells(
        self,
        source: str,
        experiment: str,
        filters: Mapping[str, str] | None = None,
        query: str | None = None,
    ) -> list[dict[str, Any]]:
        """One row per cell of the finished episodes (`analysis.cells`): every seat's mean
        payoff, seat 0's cooperation and invalid rate, the invalid rate of every LLM seat's
        moves (`Cell.llm_invalid_rate`, None without an LLM seat; what the page shows), and the
        cell's spend. Kept while the store's `version()` is unchanged (read first, so a commit
        during the read only makes the next call read again). With the episode list's
        `filters` (those of `CELL_FOLLOWS`; game, model and agent pick whole rows on the page)
        or its search `query`, the cells are counted again over the finished episodes the list
        shows."""
        read = self._kept(source, experiment)
        chosen = {k: v for k, v in (filters or {}).items() if v != "" and k in CELL_FOLLOWS}
        rows = read.rows
        if chosen or query:
            groups = None
            if GROUP in chosen:
                groups = self._analysis(source, experiment, latest=False).groups
            with self._open(source) as store:
                ids = episode_ids(store, experiment, chosen, query, groups)
            rows = read.rows_of(ids)
        # A copy (a row's values are numbers, text or flat lists), so no caller changes it.
        return [{k: list(v) if isinstance(v, list) else v for k, v in r.items()} for r in rows]

    def _kept(self, source: str, experiment: str) -> _Read:
        version = self.version(source)
        kept = self._cells.get((source, experiment))
        if kept is None or kept[0] != version:
            kept = (version, self._read_cells(source, experiment))
            self._cells[(source, experiment)] = kept
        return kept[1]

    def _read_cells(self, source: str, experiment: str) -> _Read:
        with self._open(source) as store:
            self._experiment(store, source, experiment)
            tallies = episode_tallies(store, experiment)
            costs = store.seat_costs([e.id for e in tallies])
            facts = game_facts(store, experiment)
        return _Read(tallies, costs, facts)

    def analysis(self, source: str, experiment: str) -> dict[str, Any]:
        """The experiment's leaderboards (each row with its group key and episode count), the
        calibration of its stored beliefs per model and game, and its noise floors
        (`web.data.analysis`). Kept while the store's `version()` is unchanged, as `cells`."""
        return self._analysis(source, experiment).answer

    def _analysis(self, source: str, experiment: str, *, latest: bool = True) -> Analysis:
        """Computed again when the store changed; with `latest` False, the one computed last
        where there is one (what a `group` filter resolves: the rows the page shows)."""
        kept = self._analyses.get((source, experiment))
        if kept is not None and not latest:
            return kept[1]
        version = self.version(source)
        if kept is None or kept[0] != version:
            with self._open(source) as store:
                self._experiment(store, source, experiment)
                kept = (version, experiment_analysis(store, experiment))
            self._analyses[(source, experiment)] = kept
        return kept[1]

    def charts(self, source: str, experiment: str) -> dict[str, Any]:
        """The numbers of the experiment's charts (`web.data.charts`), from the episode metrics
        its cells were read with. Kept while the store's `version()` is unchanged, as `cells`:
        the ratings chart refits the Bradley–Terry bootstrap."""
        version = self.version(source)
        kept = self._charts.get((source, experiment))
        if kept is None or kept[0] != version:
            metrics = self._kept(source, experiment).metrics
            with self._open(source) as store:
                kept = (version, experiment_charts(store, experiment, metrics))
            self._charts[(source, experiment)] = kept
        return kept[1]

    def diff(self, a: tuple[str, str], b: tuple[str, str]) -> dict[str, Any]:
        """The cell-level diff of experiment `b` against `a`, each (source, experiment id)
        (`diff`: paired differences with t intervals and Holm-adjusted p-values, each beyond the
        noise or not), from the episodes' metrics read with each side's `cells`."""
        sides = [self._kept(*a), self._kept(*b)]
        floors = noise_floors(*(side._tallies for side in sides))
        refs = {k: {"source": s, "experiment": x} for k, (s, x) in zip("ab", (a, b), strict=True)}
        return {**refs, **diff(sides[0].metrics, sides[1].metrics, floors)}

    def cell_of_episodes(self, source: str, experiment: str) -> dict[str, str]:
        """Each finished episode's cell (as `cells` groups them), by episode id: what the
        static export's `--max-per-cell` counts; from the cells' own read, not every round again."""
        cells = self._kept(source, experiment).ids
        return {episode: cell for cell, ids in cells.items() for episode in ids}

    def filter_ids(
        self, source: str, experiment: str, values: Mapping[str, Iterable[str]]
    ) -> dict[str, dict[str, set[str]]]:
        """For each filter and each of its `values`, the ids `episodes` lists under that filter
        alone: the static export's filter index, one query of ids a value instead of every
        page of items, the cells and the analysis looked up once."""
        asked = {name for name, vs in values.items() if any(vs)}
        groups = self._analysis(source, experiment, latest=False).groups if GROUP in asked else None
        cells = self._kept(source, experiment).ids if CELL in asked else None
        with self._open(source) as store:
            self._experiment(store, source, experiment)
            out: dict[str, dict[str, set[str]]] = {}
            for name, vs in values.items():
                out[name] = {}
                for v in vs:
                    if name == CELL and v and cells is not None:  # its ids: `listing._cell`
                        if v not in cells:
                            raise BadQuery(f"filter cell='{v}': no cell of this experiment has it")
                        out[name][v] = set(cells[v])
                    else:
                        chosen = {name: v} if v else {}
                        out[name][v] = episode_ids(store, experiment, chosen, None, groups, cells)
        return out

    def episodes(
        self,
        source: str,
        experiment: str,
        *,
        filters: Mapping[str, str] | None = None,
        query: str | None = None,
        page: int = 0,
        per_page: int = 50,
    ) -> dict[str, Any]:
        """A page of an experiment's episodes in store order (`listing`); a filter set to ""
        is no filter (an empty field of a form); `cell` a cell's key (its row's `cell`),
        resolved to its finished episodes; `group` a leaderboard row's key, resolved to
        the row's episodes as last computed (`analysis`): while a run adds episodes, a row's
        list stays the one its count was computed from, until the analysis is asked again."""
        chosen = {k: v for k, v in (filters or {}).items() if v != ""}
        groups = None
        if GROUP in chosen:
            groups = self._analysis(source, experiment, latest=False).groups
        cells = self._kept(source, experiment).ids if CELL in chosen else None
        with self._open(source) as store:
            self._experiment(store, source, experiment)
            return episode_page(store, experiment, chosen, query, page, per_page, groups, cells)

    def episode(self, source: str, episode_id: str, perspective: Perspective) -> dict[str, Any]:
        """An episode step by step, holding only what `perspective` may see (`replay`)."""
        with self._open(source) as store:
            record = store.episode(episode_id)
            if record is None:
                raise StratagemError(f"source {source}: unknown episode '{episode_id}'")
            n = len(record.players)
            if perspective.seat is not None and perspective.seat >= n:
                raise StratagemError(
                    f"perspective {perspective}: episode '{episode_id}' has seats 0 to {n - 1}"
                )
            return episode_view(store, record, perspective)

    def pairs(self, source: str, episode_id: str) -> list[dict[str, Any]]:
        """Every pair one episode has (`compare.pairs_of`): the same id in the other sources,
        and its twins within its experiment, each found by a query on the store."""
        twins: dict[str, EpisodeRecord] = {}
        for name in self._paths:
            if name != source:
                with self._open(name) as other:
                    twin = other.episode(episode_id)
                if twin is not None:
                    twins[name] = twin
        with self._open(source) as store:
            record = store.episode(episode_id)
            if record is None:
                raise StratagemError(f"source {source}: unknown episode '{episode_id}'")
            return pairs_of(store, source, record, twins)

    def experiment_pairs(
        self, source: str, experiment: str, ids: Sequence[str]
    ) -> dict[str, list[dict[str, Any]]]:
        """`pairs` of each of an experiment's episodes `ids` at once (the static export's), in
        one pass over the experiment's records."""
        with self._open(source) as store:
            self._experiment(store, source, experiment)
            records = store.episodes(experiment)
        wanted = set(ids)
        others: dict[str, dict[str, EpisodeRecord]] = {}
        for name in self._paths:
            if name != source:
                with self._open(name) as store:
                    others[name] = {r.id: r for r in store.episodes() if r.id in wanted}
        found = compare_pairs(source, records, others, wanted)
        return {i: found[i] for i in ids if i in found}

    def version(self, source: str) -> str:
        """A token that changes with every commit to the store: the largest row ids and the
        episodes by status, and the files' sizes and times (a commit in WAL mode writes the
        -wal file; events and rounds have no row ids to watch)."""
        with self._open(source) as store:
            row = store._rows(
                "SELECT (SELECT MAX(rowid) FROM episodes), (SELECT MAX(id) FROM llm_calls), "
                "(SELECT MAX(id) FROM beliefs), (SELECT MAX(id) FROM answers), "
                "(SELECT group_concat(status || ':' || n) FROM "
                "(SELECT status, COUNT(*) AS n FROM episodes GROUP BY status))"
            )[0]
            files = [Path(store.path), Path(f"{store.path}-wal")]
            stats = [(s.st_size, s.st_mtime_ns) for s in (f.stat() for f in files if f.exists())]
        token = repr((tuple(row), stats))
        return hashlib.sha256(token.encode()).hexdigest()[:16]


def cell_rows(tallies: list[EpisodeTally], costs: _Costs, facts: _Facts) -> list[dict[str, Any]]:
    """The cells table's rows over `tallies` (`Sources.cells`), in the cells' order."""
    groups: dict[CellKey, list[EpisodeTally]] = defaultdict(list)
    for e in tallies:
        groups[e.key].append(e)
    out = []
    for key in sorted(groups, key=order_key):
        rows = groups[key]
        model, agent, game, opponent, rounds = key
        cooperation, invalid_rate = pooled_rates(
            [(e.cooperative, e.valid, e.invalid) for e in rows]
        )
        width = max(len(e.totals) for e in rows)
        applies = applying(rows, facts.get(game))
        if "cooperation" not in applies["metrics"]:
            cooperation = None  # RPS, a chat game: no cooperate/defect choice to count
        out.append({
            "cell": cell_text(key),
            "model": model, "agent": agent, "game": game, "opponent": opponent,
            "lineup": list(rows[0].lineup), "rounds": rounds, "episodes": len(rows),
            "score": [sum(e.totals[i] for e in rows if i < len(e.totals)) / len(rows)
                      for i in range(width)],
            "cooperation": cooperation, "invalid_rate": invalid_rate,
            "llm_invalid_rate": share_invalid([m for e in rows for m in e.llm]),
            "cost_usd": sum(sum(costs.get(e.id, {}).values()) for e in rows),
            **applies,
        })  # fmt: skip
    return out


def _experiment_summary(store: ResultStore, source: str, exp: str, name: str) -> dict[str, Any]:
    games = [r[0] for r in store._rows(
        "SELECT DISTINCT game FROM episodes WHERE experiment_id = ? ORDER BY game", (exp,)
    )]  # fmt: skip
    models: set[str] = set()
    for (players,) in store._rows(
        "SELECT DISTINCT players FROM episodes WHERE experiment_id = ?", (exp,)
    ):
        models.update(s.model for s in map(seat_of, _descriptors(players)) if s.model)
    totals = store.call_totals(exp)
    return {
        "source": source, "id": exp, "name": name, "games": games, "models": sorted(models),
        "status": store.status_counts(exp), "calls": totals["calls"],
        "tokens": totals["tokens"] + _logged_tokens(store, exp), "cost_usd": totals["cost_usd"],
    }  # fmt: skip


def _logged_tokens(store: ResultStore, exp: str) -> int:
    """The tokens an imported log states per round (seed-003's `tokens`) for its episodes that
    hold no model calls: what they spent, which `call_totals` cannot count (a played episode's
    rounds count its calls' tokens again, so only episodes without calls are read)."""
    return int(store._rows(
        "SELECT COALESCE(SUM(t.value), 0) FROM episodes e JOIN rounds r ON r.episode_id = e.id, "
        "json_each(r.tokens) t WHERE e.experiment_id = ? AND r.tokens IS NOT NULL "
        "AND t.type = 'integer' AND NOT EXISTS "
        "(SELECT 1 FROM llm_calls c WHERE c.episode_id = e.id)", (exp,)
    )[0][0])  # fmt: skip


def _descriptors(players: str) -> list[dict[str, Any]]:
    loaded = json.loads(players)
    return [p for p in loaded if isinstance(p, dict)] if isinstance(loaded, list) else []
