"""`stratagem rescore`: a stored experiment read again, written as a new experiment beside it.

Two kinds (docs/rescore.md). A rescore of the replies reads every stored reply again with changed
agent entries (`rescore_change`), through the engine (`rescore_read`): each episode is unchanged
(stored whole, so every metric is recomputed on it) or changed at a move (stored cut before it,
as a failed episode whose spec says so, never counted as finished), and with a fork the changed
ones are played on from there with new, paid calls (`rescore_fork`). A rescore of the metrics
copies the finished episodes unchanged under other analysis options. Either way the source is
only read: the new experiment has new episode ids, its settings name the source
(`rescored_from`), and each episode's spec names the episode it comes from (`rescore`).

Running the same rescore again continues it: episodes already stored are kept, and `--fork`
plays on the ones an earlier run cut.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments.call_writer import CallWriter
from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.grid import EpisodeSpec, Grid
from stratagem.experiments.lock import WriterLock
from stratagem.experiments.plan import Plan
from stratagem.experiments.records import EpisodeRecord, ExperimentRecord
from stratagem.experiments.rescore_change import (
    RESCORE,
    RESCORED_FROM,
    Change,
    changed_config,
    default_name,
    episode_id,
    source_config,
    stored_config,
)
from stratagem.experiments.rescore_fork import Fork, fork_plan, play_forks
from stratagem.experiments.rescore_read import (
    ClientsFor,
    Reading,
    Source,
    read_episode,
    source_of,
    write_episode,
)
from stratagem.experiments.rescore_record import (
    RecordClient,
    answers_of,
    scopes_of,
    unkeyed,
)
from stratagem.experiments.runner import STORE_FILE, RunSummary
from stratagem.experiments.store import ResultStore
from stratagem.llm.pipeline import CallRecorder, ModelClient
from stratagem.llm.types import Response


@dataclass
class Item:
    """One finished source episode and what the rescore made of it."""

    source: EpisodeRecord
    episode_id: str
    spec: EpisodeSpec | None = None
    """Its spec under the changed settings (a rescore of the replies)."""
    reading: Reading | None = None
    status: str = "pending"
    """unchanged | changed (stored cut) | forked | copied | failed (a fork that did not end)."""
    kept: bool = False
    """Stored by an earlier run of the same rescore: left as it is."""


@dataclass
class RescoreResult:
    source: str
    experiment: str
    store_file: Path
    change: Change
    items: list[Item]
    skipped: dict[str, list[str]] = field(default_factory=dict)
    """Why a finished source episode is not in the rescore -> its ids."""
    fork: RunSummary | None = None

    def readings(self) -> list[Reading]:
        return [i.reading for i in self.items if i.reading is not None]

    @property
    def moves(self) -> int:
        return sum(r.moves for r in self.readings())

    @property
    def flipped(self) -> int:
        return sum(len(r.flips) for r in self.readings())

    @property
    def changed(self) -> list[Item]:
        return [i for i in self.items if i.reading is not None and i.reading.changed_at is not None]

    def pairs(self) -> dict[str, str]:
        """New episode id -> source episode id, for the episodes stored whole (unchanged,
        forked or copied): what the old-vs-new comparison pairs."""
        whole = ("unchanged", "forked", "copied")
        return {i.episode_id: i.source.id for i in self.items if i.status in whole}


class Rescore:
    """One rescore of the experiment `experiment` (or the only one) stored in `source_file`."""

    def __init__(self, source_file: Path, experiment: str | None = None) -> None:
        self.source_file = source_file
        # Not `read_only`: that connection takes the file as immutable when no other has it
        # open, and this rescore may write to the same file while it reads.
        self.store = ResultStore(source_file)
        try:
            record = self._experiment(experiment)
            self.config = source_config(record, str(source_file))
        except BaseException:
            self.store.close()
            raise
        self.record = record
        self.change = Change()
        self.new_config: ExperimentConfig | None = None
        self.target_file = source_file
        self.items: list[Item] = []
        self.skipped: dict[str, list[str]] = {}

    def __enter__(self) -> Rescore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.store.close()

    def _experiment(self, name: str | None) -> ExperimentRecord:
        where = str(self.source_file)
        if name is not None:
            found = self.store.experiment(name)
            if found is None:
                known = ", ".join(e.id for e in self.store.experiments()) or "none"
                raise StratagemError(f"{where}: no experiment '{name}' (stored: {known})")
            return found
        experiments = self.store.experiments()
        played = [e for e in experiments if RESCORED_FROM not in e.config]
        if len(experiments) == 1 or len(played) == 1:  # rescores beside their source
            return experiments[0] if len(experiments) == 1 else played[0]
        known = ", ".join(e.id for e in experiments) or "none"
        raise StratagemError(
            f"{where}: {len(experiments)} experiments are stored ({known}); name one with "
            "--experiment"
        )

    @property
    def agents(self) -> list[str]:
        return [a.name for a in self.config.agents]

    def prepare(self, change: Change, *, name: str | None = None, out: Path | None = None) -> None:
        """The new experiment's settings and episodes; refused when an experiment of that name
        is stored with other settings (nothing is overwritten or mixed)."""
        self.change = change
        name = name or default_name(self.record.id, change)
        if name == self.record.id:
            raise StratagemError(f"--name {name}: that is the source experiment")
        folder = out if out is not None else self.source_file.parent
        self.target_file = folder / STORE_FILE
        config = self.new_config = changed_config(self.config, change, name, folder)
        self._check_target(stored_config(config, self.record.id, change))
        finished = self.store.episodes(self.record.id, status="finished")
        if not finished:
            raise StratagemError(f"{self.source_file}: '{self.record.id}' has no finished episode")
        specs = {} if change.metric else self._specs(config)
        for record in finished:
            item = Item(record, episode_id(name, record.id))
            if not change.metric:
                item.spec = specs.get(record.id)
                if item.spec is None:
                    self._skip("not in the stored settings' grid (run with --force?)", record.id)
                    continue
            self.items.append(item)

    def _check_target(self, stored: Mapping[str, Any]) -> None:
        if not self.target_file.is_file():
            return
        with ResultStore(self.target_file, read_only=True) as target:
            found = target.experiment(str(stored["name"]))
        if found is not None and _settings(found.config) != _settings(stored):
            raise StratagemError(
                f"{self.target_file}: experiment '{found.id}' is stored with other settings; "
                "give this rescore another --name"
            )

    def _specs(self, config: ExperimentConfig) -> dict[str, EpisodeSpec]:
        """Source episode id -> its spec under the changed settings (the two grids list the
        same episodes in the same order: a change of agent settings keeps the grid)."""
        old = list(Grid(self.config, humans=True).specs())
        new = list(Grid(config, humans=True).specs())
        if len(old) != len(new) or any(
            (a.game, a.seed, a.repetition, a.rounds) != (b.game, b.seed, b.repetition, b.rounds)
            for a, b in zip(old, new, strict=False)
        ):
            raise StratagemError(f"{'; '.join(self.change.lines())}: this changes the grid")
        return {a.id: b for a, b in zip(old, new, strict=True)}

    def _skip(self, reason: str, episode: str) -> None:
        self.skipped.setdefault(reason, []).append(episode)

    async def read(self) -> None:
        """Read every episode's stored replies again (nothing is written): each item gets its
        reading, or is left out with the reason (a record the engine no longer plays)."""
        assert self.new_config is not None
        kept = []
        for item in self.items:
            assert item.spec is not None
            try:
                source, answers = self._source(item.source)
                clients = self._record_clients(answers)
                item.reading = await read_episode(item.spec, source, item.episode_id, clients)
            except StratagemError as exc:
                self._skip(str(exc), item.source.id)
                continue
            if not _same_payoffs(item.reading.payoffs, item.source.payoffs):
                self._skip("the engine's payoffs differ from the record's", item.source.id)
                continue
            kept.append(item)
        self.items = kept

    def _record_clients(self, answers: Mapping[str, Response]) -> ClientsFor:
        """Record-only clients of every model entry, answering from `answers`."""
        assert self.new_config is not None
        models = self.new_config.models

        def clients(recorder: CallRecorder) -> Mapping[str, ModelClient]:
            return {e.name: RecordClient(e, answers, recorder) for e in models}

        return clients

    def _source(self, record: EpisodeRecord) -> tuple[Source, dict[str, Response]]:
        calls = self.store.llm_calls(record.id)
        scopes = scopes_of(self.config.models)
        if unkeyed(calls, scopes):
            raise StratagemError(
                "its replies are stored without the requests' keys (imported?), so none can be "
                "matched to a new request"
            )
        source = source_of(record.id, self.store.events(record.id), record.payoffs)
        return source, answers_of(calls, scopes)

    def forks(self) -> list[Fork]:
        """The changed episodes a fork plays on (those not already played on)."""
        out = []
        for item in self.changed():
            assert item.spec is not None and item.reading is not None
            source, _ = self._source(item.source)
            out.append(Fork(item.spec, source, item.episode_id, item.reading))
        return out

    def changed(self) -> list[Item]:
        """Changed episodes not yet played on in the target store."""
        done = self._stored("finished")
        return [
            i
            for i in self.items
            if i.reading is not None and i.reading.changed_at is not None
            and i.episode_id not in done
        ]  # fmt: skip

    def _stored(self, status: str) -> set[str]:
        if self.new_config is None or not self.target_file.is_file():
            return set()
        with ResultStore(self.target_file, read_only=True) as target:
            episodes = target.episodes(self.new_config.name, status=status)  # type: ignore[arg-type]
        return {e.id for e in episodes}

    def plan(self) -> Plan:
        """What `--fork` is expected to send and cost (`rescore_fork.fork_plan`)."""
        assert self.new_config is not None
        return fork_plan(self.forks(), self.new_config.models)

    async def write(self, *, fork: bool = False) -> RescoreResult:
        """Store the new experiment (module docstring); with `fork`, play changed episodes on."""
        config = self.new_config
        assert config is not None
        result = RescoreResult(
            self.record.id, config.name, self.target_file, self.change, self.items, self.skipped
        )
        with WriterLock(self.target_file.parent), ResultStore(self.target_file) as store:
            stored = stored_config(config, self.record.id, self.change)
            store.create_experiment(config.name, config.name, stored, update=True)  # checked
            summary = RunSummary(config.name, 0)
            writer = CallWriter(store, summary)
            forks: list[Fork] = []
            answers: dict[str, Response] = {}  # the forks' stored replies
            for item in self.items:
                existing = store.episode(item.episode_id)
                if self.change.metric:
                    self._copy(store, item, existing)
                    continue
                reading = item.reading
                assert reading is not None and item.spec is not None
                status = "unchanged" if reading.changed_at is None else "changed"
                if existing is not None and existing.status == "finished":
                    item.status, item.kept = ("forked" if status == "changed" else status), True
                    continue
                if status == "changed" and fork:
                    source, found = self._source(item.source)
                    forks.append(Fork(item.spec, source, item.episode_id, reading))
                    answers.update(found)
                    continue
                if status == "changed" and existing is not None and existing.status == "failed":
                    item.status, item.kept = status, True
                    continue
                await self._write(store, item, writer)
            if forks:
                result.fork = RunSummary(config.name, len(forks))
                by_id = {i.episode_id: i for i in self.items}
                await play_forks(
                    forks, config, store, answers, result.fork,
                    lambda f: self._open(store, by_id[f.episode_id]),
                )  # fmt: skip
                for f in forks:
                    done = store.episode(f.episode_id)
                    finished = done is not None and done.status == "finished"
                    by_id[f.episode_id].status = "forked" if finished else "failed"
        return result

    async def _write(self, store: ResultStore, item: Item, writer: CallWriter) -> None:
        """An unchanged episode whole, or a changed one cut before its changed move."""
        assert item.spec is not None and item.reading is not None and self.new_config
        source, answers = self._source(item.source)
        clients = {e.name: RecordClient(e, answers, writer) for e in self.new_config.models}
        self._open(store, item)
        cut = item.reading.changed_at
        state = await write_episode(store, item.spec, source, item.episode_id, clients, cut)
        if state is not None:
            store.finish_episode(item.episode_id, list(state.payoffs()))
            item.status = "unchanged"
            return
        store.fail_episode(
            item.episode_id,
            f"cut at move {cut} by a rescore: {item.reading.why}; --fork plays it on",
        )
        item.status = "changed"

    def _open(self, store: ResultStore, item: Item) -> None:
        """The rescored episode's row (its spec naming its source and where it changed),
        started: an earlier attempt's rows are cleared, its calls kept detached."""
        spec = item.spec
        assert spec is not None and item.reading is not None and self.new_config is not None
        origin = {
            "source_experiment": self.record.id,
            "source_episode": item.source.id,
            "changed_at": item.reading.changed_at,
        }
        stage = spec.build_game().matrix()
        store.add_episode(
            item.episode_id, self.new_config.name, spec.game, spec.players(), spec.seed,
            spec=spec.stored() | {RESCORE: origin},
            labels=None if stage is None else [list(ls) for ls in stage.labels],
            game_payoffs=None if stage is None else stage.payoffs.tolist(),
        )  # fmt: skip
        store.start_episode(item.episode_id)

    def _copy(self, store: ResultStore, item: Item, existing: EpisodeRecord | None) -> None:
        """A rescore of the metrics: the episode as stored, under the new experiment; its calls
        as cached ones at no cost (the source paid them, and its totals keep them)."""
        item.status = "copied"
        if existing is not None and existing.status == "finished":
            item.kept = True
            return
        bundle = self.store.load_episode(item.source.id)
        assert bundle is not None and self.new_config is not None
        origin = {"source_experiment": self.record.id, "source_episode": item.source.id}
        episode = dataclasses.replace(
            bundle.episode,
            id=item.episode_id,
            experiment_id=self.new_config.name,
            spec={**bundle.episode.spec, RESCORE: origin},
        )
        calls = tuple(
            dataclasses.replace(
                c, cached=True, cost_usd=None if c.cost_usd is None else 0.0, saved_usd=0.0
            )
            for c in bundle.llm_calls
        )
        store.put_episode(dataclasses.replace(bundle, episode=episode, llm_calls=calls))


def _settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Stored settings as a rescore compares them: where the results are written aside (a
    relative path may be written from another folder)."""
    return {k: v for k, v in config.items() if k != "output"}


def _same_payoffs(found: Sequence[float], stored: Sequence[float] | None) -> bool:
    if stored is None:
        return True
    return len(found) == len(stored) and all(
        math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(found, stored, strict=True)
    )
