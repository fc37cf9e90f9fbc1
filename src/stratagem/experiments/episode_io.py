"""Export and import of episodes as JSONL: one self-contained JSON object per line per episode.

The format (docs/episode-format.md) lets records leave the store for sharing, and lets records made
by other tools (seed-003's game.json, seed-001's CSVs, after a small conversion) come in, so every
metric can be computed on anyone's data. An import validates the whole file before writing
anything (an episode of a catalog game is replayed by the engine: `episode_replay`) and names the
file, line and field of each problem; each episode is written in its own transaction, and episodes
already in the store are skipped, never overwritten.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from stratagem.errors import StratagemError
from stratagem.experiments.episode_export import (
    FORMAT_VERSION,
    episode_to_dict,
    export_episodes,
)
from stratagem.experiments.episode_fields import (
    EpisodeFormatError,
    as_int,
    as_list,
    as_numbers,
    as_object,
    as_player,
    as_str,
    bad_value,
    check_tensor,
    kind_of,
    opt_bool,
    opt_int,
    opt_number,
    opt_player,
    opt_str,
    storable,
)
from stratagem.experiments.episode_replay import check_by_engine
from stratagem.experiments.ids import stable_id
from stratagem.experiments.store import (
    STATUSES,
    AnswerRecord,
    BeliefRecord,
    EpisodeBundle,
    EpisodeRecord,
    EventRecord,
    ExperimentRecord,
    LlmCallRecord,
    ResultStore,
    RoundRecord,
)
from stratagem.games.catalog import catalog_labels, is_known

__all__ = [
    "FORMAT_VERSION",
    "EpisodeFormatError",
    "EpisodeImportError",
    "ImportReport",
    "episode_from_dict",
    "episode_to_dict",
    "export_episodes",
    "import_episodes",
]

_MAX_LISTED = 5
"""How many bad lines a refused import names in its message."""


class EpisodeImportError(StratagemError):
    """An import refused because of bad lines; `errors` holds one message per bad line."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        shown = "; ".join(self.errors[:_MAX_LISTED])
        more = len(self.errors) - _MAX_LISTED
        tail = f"; and {more} more bad lines" if more > 0 else ""
        super().__init__(f"{shown}{tail} (nothing imported)")


@dataclass
class ImportReport:
    path: str
    imported: int = 0
    skipped: int = 0
    skipped_ids: list[str] = field(default_factory=list)
    """Episodes already in the store, left as they were."""
    errors: list[str] = field(default_factory=list)
    """One "file:line: field: problem" message per bad line (only when not strict)."""


# -- parsing --------------------------------------------------------------------------------------


def _players(value: Any) -> tuple[dict[str, Any], ...]:
    items = as_list(value, "players")
    if not items:
        raise EpisodeFormatError("players", "expected at least one player")
    out = []
    for i, p in enumerate(items):
        if isinstance(p, str):
            out.append({"name": as_str(p, f"players[{i}]")})
            continue
        if not isinstance(p, dict):
            raise bad_value(f"players[{i}]", "a name or an object with a name", p)
        desc = p
        as_str(desc.get("name"), f"players[{i}].name")
        out.append(dict(desc))
    return tuple(out)


def _game(value: Any, n: int) -> tuple[str, tuple[tuple[str, ...], ...] | None, Any]:
    if isinstance(value, str):
        _check_known(value, "game")
        return value, None, None
    game = as_object(value, "game")
    name = as_str(game.get("name"), "game.name")
    labels = None
    if game.get("labels") is None:
        _check_known(name, "game.name")
    else:
        rows = as_list(game["labels"], "game.labels")
        if len(rows) != n:
            raise EpisodeFormatError(
                "game.labels", f"expected one label list per player ({n}), got {len(rows)}"
            )
        parsed = []
        for p, row in enumerate(rows):
            ls = tuple(
                as_str(x, f"game.labels[{p}][{i}]")
                for i, x in enumerate(as_list(row, f"game.labels[{p}]"))
            )
            if not ls or len(set(ls)) != len(ls):
                raise EpisodeFormatError(f"game.labels[{p}]", "expected distinct labels")
            parsed.append(ls)
        labels = tuple(parsed)
    tensor = game.get("payoffs")
    if tensor is not None:
        if labels is None:
            raise EpisodeFormatError("game.payoffs", "a payoff tensor needs game.labels")
        check_tensor(tensor, "game.payoffs", [len(ls) for ls in labels], n)
    return name, labels, tensor


def _catalog_labels(game: str, n: int) -> tuple[tuple[str, ...], ...] | None:
    labels = catalog_labels(game)
    return labels if labels is not None and len(labels) == n else None


def _check_known(game: str, field: str) -> None:
    """A game named without its own labels must be one the engine knows: a catalog game, or
    seed-003's `pd/<setting>` / `rps/<setting>` (docs/episode-format.md). A misspelt name would
    otherwise become a game of its own, with no moves checked and no metric defined (another
    library's game, `textarena:...`, is known: the engine replays it)."""
    if not is_known(game):
        raise EpisodeFormatError(
            field,
            f"unknown game '{game}': expected a catalog game (stratagem games), seed-003's "
            "pd/<setting> or rps/<setting>, or an object with the game's own labels",
        )


def _rounds(
    value: Any, episode_id: str, n: int, labels: tuple[tuple[str, ...], ...] | None
) -> tuple[RoundRecord, ...]:
    out: list[RoundRecord] = []
    last = 0
    for i, item in enumerate(as_list(value, "rounds")):
        at = f"rounds[{i}]"
        r = as_object(item, at)
        number = as_int(r.get("round", i + 1), f"{at}.round", 1)
        if number <= last:
            raise EpisodeFormatError(f"{at}.round", f"round {number} does not follow round {last}")
        last = number
        if "actions" not in r:
            raise EpisodeFormatError(f"{at}.actions", "missing")
        actions = as_list(r["actions"], f"{at}.actions")
        if len(actions) != n:
            raise EpisodeFormatError(f"{at}.actions", f"expected {n} actions, got {len(actions)}")
        if labels is not None:
            for p, a in enumerate(actions):
                if a is not None and a not in labels[p]:
                    raise EpisodeFormatError(
                        f"{at}.actions[{p}]",
                        f"{kind_of(a)} is not an action of player {p} ({', '.join(labels[p])})",
                    )
        payoffs = None if r.get("payoffs") is None else as_numbers(r["payoffs"], f"{at}.payoffs", n)
        valid = opt_bool(r.get("valid"), f"{at}.valid")
        tokens = None
        if r.get("tokens") is not None:
            toks = as_list(r["tokens"], f"{at}.tokens")
            if len(toks) != n:
                raise EpisodeFormatError(
                    f"{at}.tokens", f"expected {n} token counts, got {len(toks)}"
                )
            tokens = tuple(opt_int(t, f"{at}.tokens[{p}]", 0) for p, t in enumerate(toks))
        out.append(
            RoundRecord(
                episode_id,
                number,
                tuple(actions),
                payoffs,
                all(a is not None for a in actions) if valid is None else valid,
                tokens,
            )
        )
    return tuple(out)


def _events(value: Any, episode_id: str, n: int) -> tuple[EventRecord, ...]:
    out = []
    seen: set[int] = set()
    for i, item in enumerate(as_list(value, "events")):
        at = f"events[{i}]"
        e = as_object(item, at)
        seq = as_int(e.get("seq", i), f"{at}.seq", 0)
        if seq in seen:
            raise EpisodeFormatError(f"{at}.seq", f"sequence number {seq} appears twice")
        seen.add(seq)
        out.append(
            EventRecord(
                episode_id,
                seq,
                as_str(e.get("kind"), f"{at}.kind"),
                e.get("data", {}),
                opt_int(e.get("round"), f"{at}.round", 0),
                opt_player(e.get("player"), f"{at}.player", n),
                _visibility(e.get("visible_to"), f"{at}.visible_to", n),
            )
        )
    return tuple(out)


def _visibility(value: Any, at: str, n: int) -> tuple[int, ...] | None:
    """null (every seat may see the event) or the list of seats that may."""
    if value is None:
        return None
    return tuple(sorted({as_player(p, f"{at}[{i}]", n) for i, p in enumerate(as_list(value, at))}))


def _llm_calls(value: Any, episode_id: str, n: int) -> tuple[LlmCallRecord, ...]:
    out = []
    for i, item in enumerate(as_list(value, "llm_calls")):
        at = f"llm_calls[{i}]"
        c = as_object(item, at)
        out.append(
            LlmCallRecord(
                episode_id=episode_id,
                model=as_str(c.get("model"), f"{at}.model"),
                seq=opt_int(c.get("seq"), f"{at}.seq", 0),
                player=opt_player(c.get("player"), f"{at}.player", n),
                round=opt_int(c.get("round"), f"{at}.round", 0),
                cache_key=opt_str(c.get("cache_key"), f"{at}.cache_key"),
                request=c.get("request"),
                response=c.get("response"),
                text=opt_str(c.get("text"), f"{at}.text"),
                input_tokens=opt_int(c.get("input_tokens"), f"{at}.input_tokens", 0),
                output_tokens=opt_int(c.get("output_tokens"), f"{at}.output_tokens", 0),
                cost_usd=opt_number(c.get("cost_usd"), f"{at}.cost_usd"),
                latency_s=opt_number(c.get("latency_s"), f"{at}.latency_s"),
                cached=bool(opt_bool(c.get("cached"), f"{at}.cached")),
                error=opt_str(c.get("error"), f"{at}.error"),
                created_at=opt_str(c.get("created_at"), f"{at}.created_at") or "",
                cached_input_tokens=_cache_count(c, "cached_input_tokens", at),
                cache_write_tokens=_cache_count(c, "cache_write_tokens", at),
                saved_usd=opt_number(c.get("saved_usd"), f"{at}.saved_usd") or 0.0,
            )
        )
    return tuple(out)


def _cache_count(call: dict[str, Any], key: str, at: str) -> int:
    """A model call's prompt-cache token count: 0 where a line predates them."""
    return opt_int(call.get(key), f"{at}.{key}", 0) or 0


def _answers(value: Any, episode_id: str, n: int) -> tuple[AnswerRecord, ...]:
    out = []
    seen: set[tuple[int | None, int, str]] = set()
    for i, item in enumerate(as_list(value, "answers")):
        at = f"answers[{i}]"
        a = as_object(item, at)
        record = AnswerRecord(
            episode_id,
            opt_int(a.get("round"), f"{at}.round", 0),
            as_player(a.get("player"), f"{at}.player", n),
            as_str(a.get("question_id"), f"{at}.question_id"),
            opt_str(a.get("answer"), f"{at}.answer"),
            opt_str(a.get("question"), f"{at}.question"),
            a.get("parsed"),
            opt_bool(a.get("correct"), f"{at}.correct"),
        )
        key = (record.round, record.player, record.question_id)
        if record.round is not None and key in seen:
            raise EpisodeFormatError(at, "the same question, player and round appear twice")
        seen.add(key)
        out.append(record)
    return tuple(out)


def _beliefs(value: Any, episode_id: str, n: int) -> tuple[BeliefRecord, ...]:
    out = []
    for i, item in enumerate(as_list(value, "beliefs")):
        at = f"beliefs[{i}]"
        b = as_object(item, at)
        if "content" not in b:
            raise EpisodeFormatError(f"{at}.content", "missing")
        out.append(
            BeliefRecord(
                episode_id,
                opt_int(b.get("round"), f"{at}.round", 0),
                as_player(b.get("player"), f"{at}.player", n),
                as_int(b.get("order"), f"{at}.order", 0),
                b["content"],
                opt_player(b.get("about_player"), f"{at}.about_player", n),
                opt_number(b.get("score"), f"{at}.score"),
            )
        )
    return tuple(out)


def episode_from_dict(
    value: Any,
    *,
    experiment_id: str | None = None,
    source: str | None = None,
    default_experiment: str = "imported",
) -> tuple[EpisodeBundle, ExperimentRecord]:
    """Validate one line object and build the episode and its experiment.

    `experiment_id` puts the episode into that experiment whatever the line says; a line with no
    experiment goes into `default_experiment`. An episode without an "id" gets a hash of the line,
    so importing the same external file twice does not duplicate it.
    """
    o = as_object(value, "")
    fmt = as_int(o.get("format", FORMAT_VERSION), "format", 1)
    if fmt > FORMAT_VERSION:
        raise EpisodeFormatError(
            "format", f"version {fmt} is newer than this stratagem reads ({FORMAT_VERSION})"
        )
    episode_id = as_str(o["id"], "id") if o.get("id") is not None else stable_id(o)
    if "players" not in o:
        raise EpisodeFormatError("players", "missing")
    players = _players(o["players"])
    n = len(players)
    if "game" not in o:
        raise EpisodeFormatError("game", "missing")
    game, labels, tensor = _game(o["game"], n)

    if experiment_id is not None:
        experiment = ExperimentRecord(experiment_id, experiment_id, {}, "")
    elif o.get("experiment") is not None:
        e = as_object(o["experiment"], "experiment")
        eid = as_str(e.get("id"), "experiment.id")
        config = as_object(e.get("config", {}), "experiment.config")
        name = opt_str(e.get("name"), "experiment.name") or eid
        created = opt_str(e.get("created_at"), "experiment.created_at") or ""
        experiment = ExperimentRecord(eid, name, config, created)
    else:
        experiment = ExperimentRecord(default_experiment, default_experiment, {}, "")

    seed = o.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | str)):
        raise bad_value("seed", "an integer, a string or null", seed)
    if isinstance(seed, int):
        storable(seed, "seed")
    status = o.get("status", "finished")
    if status not in STATUSES:
        raise EpisodeFormatError("status", f"expected one of {', '.join(STATUSES)}, got {status!r}")
    if "rounds" not in o:
        raise EpisodeFormatError("rounds", "missing")
    # Moves are checked against the game's labels: the line's own, or else those of the catalog
    # game it names (`pd/sh` is seed-003's `sh`), so a misspelt move is refused here, not
    # dropped later by the report with a vaguer reason.
    known = labels if labels is not None else _catalog_labels(game, n)
    rounds = _rounds(o["rounds"], episode_id, n, known)
    if "payoffs" in o:
        totals = None if o["payoffs"] is None else as_numbers(o["payoffs"], "payoffs", n)
    elif status == "finished" and rounds and all(r.payoffs is not None for r in rounds):
        totals = tuple(sum(r.payoffs[p] for r in rounds if r.payoffs) for p in range(n))
    else:
        totals = None

    episode = EpisodeRecord(
        id=episode_id,
        experiment_id=experiment.id,
        game=game,
        players=players,
        seed=seed,
        status=status,
        spec=as_object(o.get("spec", {}), "spec"),
        labels=labels,
        game_payoffs=tensor,
        payoffs=totals,
        started_at=opt_str(o.get("started_at"), "started_at"),
        finished_at=opt_str(o.get("finished_at"), "finished_at"),
        source=source or opt_str(o.get("source"), "source") or "import",
        error=opt_str(o.get("error"), "error"),
    )
    bundle = EpisodeBundle(
        episode,
        rounds,
        _events(o.get("events", []), episode_id, n),
        _llm_calls(o.get("llm_calls", []), episode_id, n),
        _answers(o.get("answers", []), episode_id, n),
        _beliefs(o.get("beliefs", []), episode_id, n),
    )
    check_by_engine(bundle, "game" if isinstance(o["game"], str) else "game.name")
    return bundle, experiment


# -- import ---------------------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, parsed JSON, error) for each non-blank line; `.gz` files are read through
    gzip, so compressed logs import as they are."""
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as stream:
            yield from _parsed(stream)
    except (OSError, EOFError, zlib.error) as exc:  # also a .gz file that is not gzip, or cut short
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise StratagemError(f"{path}: cannot read ({why})") from None


def _parsed(stream: Iterable[bytes]) -> Iterator[tuple[int, Any, str | None]]:
    for number, raw in enumerate(stream, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield number, None, "not UTF-8 text"
            continue
        if not text.strip():
            continue
        try:
            yield number, json.loads(text), None
        except json.JSONDecodeError as exc:
            yield number, None, f"not valid JSON: {exc.msg} (column {exc.colno})"


def import_episodes(
    store: ResultStore,
    path: str | PathLike[str],
    experiment_id: str | None = None,
    source: str | None = None,
    *,
    strict: bool = True,
) -> ImportReport:
    """Import a JSONL file of episodes; existing episodes are skipped and listed in the report.

    With `strict` (the default) the whole file is validated first and nothing is imported if any
    line is bad (EpisodeImportError names the first few). Otherwise good lines are imported and
    bad ones listed in the report's errors.
    """
    file = Path(path)
    report = ImportReport(str(path))
    default_experiment = f"import:{file.stem}"

    def parse(number: int, value: Any, error: str | None) -> tuple[Any, str | None]:
        if error is not None:
            return None, f"{path}:{number}: {error}"
        try:
            return episode_from_dict(
                value,
                experiment_id=experiment_id,
                source=source,
                default_experiment=default_experiment,
            ), None
        except EpisodeFormatError as exc:
            return None, f"{path}:{number}: {exc}"

    if strict:
        errors = [e for e in (parse(*line)[1] for line in _lines(file)) if e is not None]
        if errors:
            raise EpisodeImportError(errors)
    for line in _lines(file):
        parsed, error = parse(*line)
        if error is not None:
            report.errors.append(error)
            continue
        bundle, experiment = parsed
        try:
            written = store.put_episode(bundle, experiment=experiment, skip_existing=True)
        except StratagemError as exc:
            raise StratagemError(f"{path}:{line[0]}: {exc}") from None
        if written:
            report.imported += 1
        else:
            report.skipped += 1
            report.skipped_ids.append(bundle.episode.id)
    return report
