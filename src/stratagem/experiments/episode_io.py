"""Export and import of episodes as JSONL: one self-contained JSON object per line per episode.

The format (docs/episode-format.md) lets records leave the store for sharing, and lets records made
by other tools (seed-003's game.json, seed-001's CSVs, after a small conversion) come in, so every
metric can be computed on anyone's data. An import validates the whole file before writing
anything and names the file, line and field of each problem; each episode is written in its own
transaction, and episodes already in the store are skipped, never overwritten.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import IO, Any

from stratagem.errors import StratagemError
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

FORMAT_VERSION = 2
"""Version of the line format; a line with a newer version is refused. 2 added an event's
`visible_to` (a reader of version 1 would show hidden events to every seat)."""

_MAX_LISTED = 5
"""How many bad lines a refused import names in its message."""


class EpisodeFormatError(StratagemError):
    """A line that does not follow the format; `field` is a JSON path such as rounds[3].payoffs."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)


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


# -- export ---------------------------------------------------------------------------------------


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
    if bundle.events:
        out["events"] = [
            _drop_none(
                {
                    "seq": e.seq,
                    "round": e.round,
                    "kind": e.kind,
                    "player": e.player,
                    "data": e.data,
                    "visible_to": None if e.visible_to is None else list(e.visible_to),
                }
            )
            for e in bundle.events
        ]
    if bundle.llm_calls:
        out["llm_calls"] = [
            _drop_none(
                {
                    "seq": c.seq,
                    "player": c.player,
                    "round": c.round,
                    "model": c.model,
                    "cache_key": c.cache_key,
                    "request": c.request,
                    "response": c.response,
                    "text": c.text,
                    "input_tokens": c.input_tokens,
                    "output_tokens": c.output_tokens,
                    "cost_usd": c.cost_usd,
                    "latency_s": c.latency_s,
                    "cached": c.cached,
                    "error": c.error,
                    "created_at": c.created_at,
                }
            )
            for c in bundle.llm_calls
        ]
    if bundle.answers:
        out["answers"] = [
            _drop_none(
                {
                    "round": a.round,
                    "player": a.player,
                    "question_id": a.question_id,
                    "question": a.question,
                    "answer": a.answer,
                    "parsed": a.parsed,
                    "correct": a.correct,
                }
            )
            for a in bundle.answers
        ]
    if bundle.beliefs:
        out["beliefs"] = [
            _drop_none(
                {
                    "round": b.round,
                    "player": b.player,
                    "order": b.order,
                    "about_player": b.about_player,
                    "content": b.content,
                    "score": b.score,
                }
            )
            for b in bundle.beliefs
        ]
    return out


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
            line = episode_to_dict(bundle, experiments.get(ep.experiment_id))
            stream.write(
                json.dumps(line, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
            )
        return len(records)

    if not isinstance(path_or_stream, str | PathLike):
        return write(path_or_stream)
    path = Path(path_or_stream)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="\n") as stream:
            return write(stream)
    except OSError as exc:
        raise StratagemError(f"{path}: cannot write ({exc.strerror or exc})") from None


# -- validation -----------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) <= 40 else "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _bad(path: str, expected: str, value: Any) -> EpisodeFormatError:
    return EpisodeFormatError(path, f"expected {expected}, got {_kind(value)}")


def _obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(path, "an object", value)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(path, "a list", value)
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise _bad(path, "a non-empty string", value)
    return value


def _opt_str(value: Any, path: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _bad(path, "a string or null", value)
    return value


def _int(value: Any, path: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(path, "an integer", value)
    if minimum is not None and value < minimum:
        raise EpisodeFormatError(path, f"expected an integer >= {minimum}, got {value}")
    return value


def _opt_int(value: Any, path: str, minimum: int | None = None) -> int | None:
    return None if value is None else _int(value, path, minimum)


def _num(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(path, "a finite number", value)
    return float(value)


def _opt_num(value: Any, path: str) -> float | None:
    return None if value is None else _num(value, path)


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _bad(path, "true or false", value)
    return value


def _opt_bool(value: Any, path: str) -> bool | None:
    return None if value is None else _bool(value, path)


def _player(value: Any, path: str, n: int) -> int:
    p = _int(value, path, 0)
    if p >= n:
        raise EpisodeFormatError(path, f"player {p} does not exist (players are 0..{n - 1})")
    return p


def _opt_player(value: Any, path: str, n: int) -> int | None:
    return None if value is None else _player(value, path, n)


def _numbers(value: Any, path: str, n: int) -> tuple[float, ...]:
    values = _list(value, path)
    if len(values) != n:
        raise EpisodeFormatError(path, f"expected {n} numbers, got {len(values)}")
    return tuple(_num(x, f"{path}[{i}]") for i, x in enumerate(values))


def _check_tensor(value: Any, path: str, sizes: Sequence[int], n: int) -> None:
    """A payoff tensor: nested lists of shape (sizes..., n) holding finite numbers."""
    if not sizes:
        _numbers(value, path, n)
        return
    rows = _list(value, path)
    if len(rows) != sizes[0]:
        raise EpisodeFormatError(path, f"expected {sizes[0]} entries, got {len(rows)}")
    for i, row in enumerate(rows):
        _check_tensor(row, f"{path}[{i}]", sizes[1:], n)


def _players(value: Any) -> tuple[dict[str, Any], ...]:
    items = _list(value, "players")
    if not items:
        raise EpisodeFormatError("players", "expected at least one player")
    out = []
    for i, p in enumerate(items):
        if isinstance(p, str):
            out.append({"name": _str(p, f"players[{i}]")})
            continue
        if not isinstance(p, dict):
            raise _bad(f"players[{i}]", "a name or an object with a name", p)
        desc = p
        _str(desc.get("name"), f"players[{i}].name")
        out.append(dict(desc))
    return tuple(out)


def _game(value: Any, n: int) -> tuple[str, tuple[tuple[str, ...], ...] | None, Any]:
    if isinstance(value, str):
        return _str(value, "game"), None, None
    game = _obj(value, "game")
    name = _str(game.get("name"), "game.name")
    labels = None
    if game.get("labels") is not None:
        rows = _list(game["labels"], "game.labels")
        if len(rows) != n:
            raise EpisodeFormatError(
                "game.labels", f"expected one label list per player ({n}), got {len(rows)}"
            )
        parsed = []
        for p, row in enumerate(rows):
            ls = tuple(
                _str(x, f"game.labels[{p}][{i}]")
                for i, x in enumerate(_list(row, f"game.labels[{p}]"))
            )
            if not ls or len(set(ls)) != len(ls):
                raise EpisodeFormatError(f"game.labels[{p}]", "expected distinct labels")
            parsed.append(ls)
        labels = tuple(parsed)
    tensor = game.get("payoffs")
    if tensor is not None:
        if labels is None:
            raise EpisodeFormatError("game.payoffs", "a payoff tensor needs game.labels")
        _check_tensor(tensor, "game.payoffs", [len(ls) for ls in labels], n)
    return name, labels, tensor


def _rounds(
    value: Any, episode_id: str, n: int, labels: tuple[tuple[str, ...], ...] | None
) -> tuple[RoundRecord, ...]:
    out: list[RoundRecord] = []
    last = 0
    for i, item in enumerate(_list(value, "rounds")):
        at = f"rounds[{i}]"
        r = _obj(item, at)
        number = _int(r.get("round", i + 1), f"{at}.round", 1)
        if number <= last:
            raise EpisodeFormatError(f"{at}.round", f"round {number} does not follow round {last}")
        last = number
        if "actions" not in r:
            raise EpisodeFormatError(f"{at}.actions", "missing")
        actions = _list(r["actions"], f"{at}.actions")
        if len(actions) != n:
            raise EpisodeFormatError(f"{at}.actions", f"expected {n} actions, got {len(actions)}")
        if labels is not None:
            for p, a in enumerate(actions):
                if a is not None and a not in labels[p]:
                    raise EpisodeFormatError(
                        f"{at}.actions[{p}]",
                        f"{_kind(a)} is not an action of player {p} ({', '.join(labels[p])})",
                    )
        payoffs = None if r.get("payoffs") is None else _numbers(r["payoffs"], f"{at}.payoffs", n)
        valid = _opt_bool(r.get("valid"), f"{at}.valid")
        tokens = None
        if r.get("tokens") is not None:
            toks = _list(r["tokens"], f"{at}.tokens")
            if len(toks) != n:
                raise EpisodeFormatError(
                    f"{at}.tokens", f"expected {n} token counts, got {len(toks)}"
                )
            tokens = tuple(_opt_int(t, f"{at}.tokens[{p}]", 0) for p, t in enumerate(toks))
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
    for i, item in enumerate(_list(value, "events")):
        at = f"events[{i}]"
        e = _obj(item, at)
        seq = _int(e.get("seq", i), f"{at}.seq", 0)
        if seq in seen:
            raise EpisodeFormatError(f"{at}.seq", f"sequence number {seq} appears twice")
        seen.add(seq)
        out.append(
            EventRecord(
                episode_id,
                seq,
                _str(e.get("kind"), f"{at}.kind"),
                e.get("data", {}),
                _opt_int(e.get("round"), f"{at}.round", 0),
                _opt_player(e.get("player"), f"{at}.player", n),
                _visibility(e.get("visible_to"), f"{at}.visible_to", n),
            )
        )
    return tuple(out)


def _visibility(value: Any, at: str, n: int) -> tuple[int, ...] | None:
    """null (every seat may see the event) or the list of seats that may."""
    if value is None:
        return None
    return tuple(sorted({_player(p, f"{at}[{i}]", n) for i, p in enumerate(_list(value, at))}))


def _llm_calls(value: Any, episode_id: str, n: int) -> tuple[LlmCallRecord, ...]:
    out = []
    for i, item in enumerate(_list(value, "llm_calls")):
        at = f"llm_calls[{i}]"
        c = _obj(item, at)
        out.append(
            LlmCallRecord(
                episode_id=episode_id,
                model=_str(c.get("model"), f"{at}.model"),
                seq=_opt_int(c.get("seq"), f"{at}.seq", 0),
                player=_opt_player(c.get("player"), f"{at}.player", n),
                round=_opt_int(c.get("round"), f"{at}.round", 0),
                cache_key=_opt_str(c.get("cache_key"), f"{at}.cache_key"),
                request=c.get("request"),
                response=c.get("response"),
                text=_opt_str(c.get("text"), f"{at}.text"),
                input_tokens=_opt_int(c.get("input_tokens"), f"{at}.input_tokens", 0),
                output_tokens=_opt_int(c.get("output_tokens"), f"{at}.output_tokens", 0),
                cost_usd=_opt_num(c.get("cost_usd"), f"{at}.cost_usd"),
                latency_s=_opt_num(c.get("latency_s"), f"{at}.latency_s"),
                cached=bool(_opt_bool(c.get("cached"), f"{at}.cached")),
                error=_opt_str(c.get("error"), f"{at}.error"),
                created_at=_opt_str(c.get("created_at"), f"{at}.created_at") or "",
            )
        )
    return tuple(out)


def _answers(value: Any, episode_id: str, n: int) -> tuple[AnswerRecord, ...]:
    out = []
    seen: set[tuple[int | None, int, str]] = set()
    for i, item in enumerate(_list(value, "answers")):
        at = f"answers[{i}]"
        a = _obj(item, at)
        record = AnswerRecord(
            episode_id,
            _opt_int(a.get("round"), f"{at}.round", 0),
            _player(a.get("player"), f"{at}.player", n),
            _str(a.get("question_id"), f"{at}.question_id"),
            _opt_str(a.get("answer"), f"{at}.answer"),
            _opt_str(a.get("question"), f"{at}.question"),
            a.get("parsed"),
            _opt_bool(a.get("correct"), f"{at}.correct"),
        )
        key = (record.round, record.player, record.question_id)
        if record.round is not None and key in seen:
            raise EpisodeFormatError(at, "the same question, player and round appear twice")
        seen.add(key)
        out.append(record)
    return tuple(out)


def _beliefs(value: Any, episode_id: str, n: int) -> tuple[BeliefRecord, ...]:
    out = []
    for i, item in enumerate(_list(value, "beliefs")):
        at = f"beliefs[{i}]"
        b = _obj(item, at)
        if "content" not in b:
            raise EpisodeFormatError(f"{at}.content", "missing")
        out.append(
            BeliefRecord(
                episode_id,
                _opt_int(b.get("round"), f"{at}.round", 0),
                _player(b.get("player"), f"{at}.player", n),
                _int(b.get("order"), f"{at}.order", 0),
                b["content"],
                _opt_player(b.get("about_player"), f"{at}.about_player", n),
                _opt_num(b.get("score"), f"{at}.score"),
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
    o = _obj(value, "")
    fmt = _int(o.get("format", FORMAT_VERSION), "format", 1)
    if fmt > FORMAT_VERSION:
        raise EpisodeFormatError(
            "format", f"version {fmt} is newer than this stratagem reads ({FORMAT_VERSION})"
        )
    episode_id = _str(o["id"], "id") if o.get("id") is not None else stable_id(o)
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
        e = _obj(o["experiment"], "experiment")
        eid = _str(e.get("id"), "experiment.id")
        config = _obj(e.get("config", {}), "experiment.config")
        name = _opt_str(e.get("name"), "experiment.name") or eid
        created = _opt_str(e.get("created_at"), "experiment.created_at") or ""
        experiment = ExperimentRecord(eid, name, config, created)
    else:
        experiment = ExperimentRecord(default_experiment, default_experiment, {}, "")

    seed = o.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | str)):
        raise _bad("seed", "an integer, a string or null", seed)
    status = o.get("status", "finished")
    if status not in STATUSES:
        raise EpisodeFormatError("status", f"expected one of {', '.join(STATUSES)}, got {status!r}")
    if "rounds" not in o:
        raise EpisodeFormatError("rounds", "missing")
    rounds = _rounds(o["rounds"], episode_id, n, labels)
    if "payoffs" in o:
        totals = None if o["payoffs"] is None else _numbers(o["payoffs"], "payoffs", n)
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
        spec=_obj(o.get("spec", {}), "spec"),
        labels=labels,
        game_payoffs=tensor,
        payoffs=totals,
        started_at=_opt_str(o.get("started_at"), "started_at"),
        finished_at=_opt_str(o.get("finished_at"), "finished_at"),
        source=source or _opt_str(o.get("source"), "source") or "import",
        error=_opt_str(o.get("error"), "error"),
    )
    bundle = EpisodeBundle(
        episode,
        rounds,
        _events(o.get("events", []), episode_id, n),
        _llm_calls(o.get("llm_calls", []), episode_id, n),
        _answers(o.get("answers", []), episode_id, n),
        _beliefs(o.get("beliefs", []), episode_id, n),
    )
    return bundle, experiment


# -- import ---------------------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, parsed JSON, error) for each non-blank line."""
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise StratagemError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with stream:
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
