"""Episodes out of the store as JSONL lines (docs/episode-format.md): each line self-contained,
naming its experiment and game, with the game's labels and payoffs when known."""

from __future__ import annotations

import dataclasses
import gzip
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import IO, Any

from stratagem.errors import StratagemError
from stratagem.experiments.store import (
    EpisodeBundle,
    ExperimentRecord,
    ResultStore,
)

FORMAT_VERSION = 2
"""Version of the line format; a line with a newer version is refused. 2 added an event's
`visible_to` (a reader of version 1 would show hidden events to every seat)."""


def _drop_none(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def episode_to_dict(bundle: EpisodeBundle, experiment: ExperimentRecord | None) -> dict[str, Any]:
    """One episode as a line object of the format."""
    ep = bundle.episode
    game: dict[str, Any] = {"name": ep.game}
    if ep.labels is not None:
        game["labels"] = [list(ls) for ls in ep.labels]
    if ep.game_payoffs is not None:
        game["payoffs"] = ep.game_payoffs
    out: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "id": ep.id,
        "experiment": (
            {
                "id": experiment.id,
                "name": experiment.name,
                "config": experiment.config,
                "created_at": experiment.created_at,
            }
            if experiment is not None
            else {"id": ep.experiment_id}
        ),
        "game": game,
        "players": [dict(p) for p in ep.players],
        "seed": ep.seed,
        "status": ep.status,
        "source": ep.source,
        "spec": ep.spec,
        "payoffs": None if ep.payoffs is None else list(ep.payoffs),
        "rounds": [
            _drop_none(
                {
                    "round": r.round,
                    "actions": list(r.actions),
                    "payoffs": None if r.payoffs is None else list(r.payoffs),
                    "valid": r.valid,
                    "tokens": None if r.tokens is None else list(r.tokens),
                }
            )
            for r in bundle.rounds
        ],
    }
    out.update(
        _drop_none({"started_at": ep.started_at, "finished_at": ep.finished_at, "error": ep.error})
    )
    for name, records in (
        ("events", bundle.events),
        ("llm_calls", bundle.llm_calls),
        ("answers", bundle.answers),
        ("beliefs", bundle.beliefs),
    ):
        if records:
            out[name] = [_record(r) for r in records]
    return out


_IMPLIED = frozenset({"episode_id", "id"})
"""Fields a line does not repeat: the episode it is about, and a store's own row id."""


def _record(record: Any) -> dict[str, Any]:
    """An event, model call, answer or belief as a line's object: every field of its record
    but the implied ones, the empty ones left out."""
    return _drop_none(
        {
            f.name: list(v) if isinstance(v := getattr(record, f.name), tuple) else v
            for f in dataclasses.fields(record)
            if f.name not in _IMPLIED
        }
    )


def _line(bundle: EpisodeBundle, experiment: ExperimentRecord | None) -> str:
    line = episode_to_dict(bundle, experiment)
    return json.dumps(line, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def export_episodes(
    store: ResultStore,
    path_or_stream: str | PathLike[str] | IO[str],
    experiment_id: str | None = None,
    episode_ids: Iterable[str] | None = None,
) -> int:
    """Write episodes as JSONL (all, one experiment's, or the given ids); returns how many."""
    if episode_ids is not None:
        records = []
        for eid in episode_ids:
            ep = store.episode(eid)
            if ep is None:
                raise StratagemError(f"unknown episode '{eid}'")
            if experiment_id is None or ep.experiment_id == experiment_id:
                records.append(ep)
    else:
        if experiment_id is not None and store.experiment(experiment_id) is None:
            raise StratagemError(f"unknown experiment '{experiment_id}'")
        records = store.episodes(experiment_id)
    experiments = {e.id: e for e in store.experiments()}

    def write(stream: IO[str]) -> int:
        for ep in records:
            bundle = store.load_episode(ep.id)
            assert bundle is not None
            stream.write(_line(bundle, experiments.get(ep.experiment_id)))
        return len(records)

    if not isinstance(path_or_stream, str | PathLike):
        return write(path_or_stream)
    return _to_file(Path(path_or_stream), write)


def _to_file(path: Path, write: Callable[[IO[str]], int]) -> int:
    """Write to `path`, through gzip when it ends in `.gz` (so logs stay compressed)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".gz":
            with gzip.open(path, "wt", encoding="utf-8", newline="\n") as stream:
                return write(stream)
        with path.open("w", encoding="utf-8", newline="\n") as stream:
            return write(stream)
    except FileExistsError:  # only `mkdir` raises it: the folder to write in is a file
        raise StratagemError(f"{path}: cannot write ({path.parent} is a file)") from None
    except OSError as exc:
        raise StratagemError(f"{path}: cannot write ({exc.strerror or exc})") from None


@dataclass
class Salvage:
    """What `export_readable` got out of a damaged store."""

    exported: int = 0
    finished: int = 0
    unreadable: list[str] = field(default_factory=list)
    """Finished episodes whose records no longer read back."""


def export_readable(store: ResultStore, path: str | PathLike[str]) -> Salvage:
    """Export every finished episode that still reads back in full, skipping those a damaged page
    made unreadable, so a damaged store's good results can be imported into a new one."""
    salvage = Salvage()
    experiments = {e.id: e for e in store.experiments()}
    finished = [ep for ep in store.episodes() if ep.status == "finished"]
    salvage.finished = len(finished)

    def write(stream: IO[str]) -> int:
        for ep in finished:
            try:
                bundle = store.load_episode(ep.id)
            except StratagemError:
                salvage.unreadable.append(ep.id)
                continue
            assert bundle is not None
            stream.write(_line(bundle, experiments.get(ep.experiment_id)))
            salvage.exported += 1
        return salvage.exported

    _to_file(Path(path), write)
    return salvage
