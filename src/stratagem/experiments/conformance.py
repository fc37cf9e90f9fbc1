"""Conformance checks that play a game through the real episode loop, runner and store
(`stratagem.testing` calls them): what a rendered prompt lets a seat see, the export and import
round trip with its replay by the engine, and an architecture's answers to every action space.

Seats are LLM agents of one architecture on a scripted model (`scripted/stratagem-conformance`,
answering with a replier the caller picks: `answer` by default), or, with no architecture, seeded
random legal players seated through the runner's human-seat hook, so every check runs offline.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from stratagem.agents.base import Agent, Decision
from stratagem.agents.registry import ARCHITECTURES
from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.episode import DECISION_EVENT
from stratagem.experiments.episode_io import export_episodes, import_episodes
from stratagem.experiments.episode_replay import check_by_engine
from stratagem.experiments.grid import build_game
from stratagem.experiments.lineups import HUMAN
from stratagem.experiments.records import EventRecord, LlmCallRecord
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.games.base import Event, Game, Observation
from stratagem.games.catalog import get_game
from stratagem.games.conformance import hidden_words, leaked, random_action
from stratagem.llm.providers.scripted import register_script
from stratagem.llm.types import Request

SCRIPT = "stratagem-conformance"
"""The scripted model the LLM seats of a conformance run call."""
EXPERIMENT = "conformance"

Replier = Callable[[Request], str]
_replier: list[Replier] = []
"""The replier of the run in progress (one at a time: the runner blocks its caller)."""


def answer(request: Request) -> str:
    """A model that keeps to the format a request constrains: one of its `choices`, or JSON
    that its `json_schema` accepts; otherwise one line of text. Drawn from a hash of the request,
    so a replay gets the same answers."""
    digest = hashlib.sha256(json.dumps(request.to_json(), default=str).encode()).digest()
    rng = random.Random(digest)
    if request.choices:
        return rng.choice(request.choices)
    if request.json_schema is not None:
        return json.dumps(schema_instance(request.json_schema, rng))
    return "I will play fairly."


def schema_instance(schema: Mapping[str, Any], rng: random.Random) -> Any:
    """A value a JSON schema accepts (the subset reply formats use: objects, enums, ranges)."""
    if "enum" in schema:
        return rng.choice(list(schema["enum"]))
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return schema_instance(schema[key][0], rng)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: schema_instance(v, rng) for k, v in props.items()}
    if kind == "array":
        item = schema.get("items", {"type": "string"})
        return [schema_instance(item, rng) for _ in range(int(schema.get("minItems", 1)))]
    if kind == "integer":
        return rng.randint(int(schema.get("minimum", 0)), int(schema.get("maximum", 10)))
    if kind == "number":
        return rng.uniform(float(schema.get("minimum", 0)), float(schema.get("maximum", 1)))
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return "ok"


class RandomPlayer(Agent):
    """A seat that plays `random_action`, seeded by the episode: a player without a model."""

    name = "random"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        self.rng = random.Random(f"{seed}:{episode_id}")

    async def act(self, observation: Observation) -> Decision:
        if observation.legal is None:
            raise AssertionError(
                f"seat {observation.player} must act, and its observation has no action space"
            )
        return Decision(action=random_action(observation.legal, self.rng), valid=True)


def claiming(game: Game) -> str | None:
    """The first registered architecture that plays `game`, if any."""
    return next((a.name for a in ARCHITECTURES.values() if a.plays(game) is None), None)


def play(
    game: str,
    directory: Path,
    *,
    seeds: Sequence[int],
    rounds: int,
    options: Mapping[str, Any],
    architecture: str | None,
    reply: Replier | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Path:
    """Run one experiment of `game` (every seat `architecture`, with the agent entry's other
    `settings`, or random players) into `directory`; its store. Every episode must finish."""
    base = game.partition("/")[0]
    n = get_game(game, **options).n_players
    seat = architecture or HUMAN
    kind = architecture or "plain"  # unseated when the seats are random players
    data: dict[str, Any] = {
        "name": EXPERIMENT,
        "output": str(directory),
        "models": [{"model": f"scripted/{SCRIPT}"}],
        "agents": [{"max_reasks": 1, **(settings or {}), "name": kind, "kind": kind}],
        "games": [game],
        "lineups": [[seat] * n],
        "rounds": [rounds],
        "seeds": list(seeds),
        "retry": {"base_delay": 0},
    }
    if options:
        data["game_options"] = {base: dict(options)}
    register_script(SCRIPT, lambda request, sample: _replier[-1](request))
    _replier.append(reply or answer)
    try:
        config = config_from_dict(data, EXPERIMENT)
        human = None if architecture else (lambda g, index: RandomPlayer())
        runner = Runner(config, show_progress=False, human=human, console=_quiet())
        summary = asyncio.run(runner.run())
    except StratagemError as exc:
        raise AssertionError(f"{game}: the runner refuses to play it: {exc}") from None
    finally:
        _replier.pop()
    if summary.failed:
        raise AssertionError(f"{game}: episodes failed: {'; '.join(summary.errors[:3])}")
    return directory / STORE_FILE


def _quiet() -> Console:
    return Console(file=io.StringIO())


def _event(record: EventRecord) -> Event:
    visible = None if record.visible_to is None else frozenset(record.visible_to)
    return Event(record.kind, record.data if isinstance(record.data, dict) else {}, visible)


def _prompt(request: Any) -> str:
    messages = request.get("messages", ()) if isinstance(request, dict) else ()
    return "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))


def check_prompts_private(store_file: Path, name: str, ignore: Iterable[str] = ()) -> int:
    """Every prompt rendered for seat k holds no word of a game event hidden from k that was
    recorded before the call (`hidden_words`), words of the labels k is asked to choose from
    aside (its own options: OpenSpiel shows a seat its own move "Pass" only, yet "Pass" is the
    other seat's option too); returns how many prompts were read."""
    ignored = tuple(ignore)
    read = 0
    with ResultStore(store_file) as store:
        for ep in store.episodes():
            events = sorted(store.events(ep.id), key=lambda e: e.seq)
            for call in store.llm_calls(ep.id):
                if call.player is None or not isinstance(call.request, dict):
                    continue
                known = [_event(e) for e in events if e.player is None and _before(e, call)]
                own = [str(c) for c in call.request.get("choices") or ()]  # its own options
                hidden = hidden_words(known, call.player, (*ignored, *own))
                found = leaked(_prompt(call.request), hidden)
                read += 1
                if found is not None:
                    raise AssertionError(
                        f"{name}, seed {ep.seed}, round {call.round}: the prompt of seat "
                        f"{call.player} contains {found.word!r}, from a {found.event.kind!r} "
                        f"event visible only to seats {sorted(found.event.visible_to or ())}"
                    )
    return read


def _before(event: EventRecord, call: LlmCallRecord) -> bool:
    """Whether an event was recorded before a model call: by the call's count of the events
    before it, or where a record lacks it, by round."""
    count = call.request.get("after_events") if isinstance(call.request, dict) else None
    if isinstance(count, int):
        return event.seq < count
    return call.round is None or (event.round or 0) <= call.round


def check_round_trip(store_file: Path, directory: Path, name: str) -> None:
    """Each stored episode replayed by the engine from its seed and moves is what was played;
    exported, imported into a fresh store (which replays it again) and exported once more, every
    line is byte-equal."""
    first, second = directory / "exported.jsonl", directory / "reexported.jsonl"
    with ResultStore(store_file) as store:
        for ep in store.episodes():
            bundle = store.load_episode(ep.id)
            assert bundle is not None
            try:
                check_by_engine(bundle)
            except StratagemError as exc:
                raise AssertionError(
                    f"{name}, seed {ep.seed}: the engine's replay differs from the episode "
                    f"played: {exc}"
                ) from None
        exported = export_episodes(store, first)
    with ResultStore(directory / "imported.db") as copy:
        try:
            report = import_episodes(copy, first)
        except StratagemError as exc:
            raise AssertionError(f"{name}: the exported episodes do not import: {exc}") from None
        if report.imported != exported:
            raise AssertionError(f"{name}: {exported} exported, {report.imported} imported")
        export_episodes(copy, second)
    a = first.read_bytes().splitlines()
    b = second.read_bytes().splitlines()
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            raise AssertionError(
                f"{name}: line {i + 1} of the export differs after an import: "
                f"{_difference(json.loads(x), json.loads(y))}"
            )
    if len(a) != len(b):
        raise AssertionError(f"{name}: {len(a)} lines exported, {len(b)} after an import")


def _difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key) or (key in a) != (key in b):
                return _difference(a.get(key), b.get(key), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _difference(x, y, f"{path}[{i}]")
    return f"{path or 'line'}: {json.dumps(a)[:100]} then {json.dumps(b)[:100]}"


def check_decisions(store_file: Path, kind: str, name: str) -> set[str]:
    """Every decision of the stored episodes was valid at the first answer the engine took;
    returns the kinds of action space answered. An invalid one names its space and error."""
    answered: set[str] = set()
    with ResultStore(store_file) as store:
        for ep in store.episodes():
            events = store.events(ep.id)
            decisions = [e for e in events if e.kind == DECISION_EVENT]
            errors = {
                (e.round, e.player): e.data.get("error")
                for e in events
                if e.kind == "invalid" and isinstance(e.data, dict)
            }
            game = build_game(ep.game, None, ep.spec.get("rounds"), ep.spec.get("game_options"))
            assert isinstance(ep.seed, int)
            state = game.initial_state(ep.seed)
            i = 0
            while i < len(decisions):
                group = decisions[i : i + len(state.to_act())]
                for d in group:
                    space = type(state.legal(d.player or 0)).__name__
                    if not d.data.get("valid"):
                        why = errors.get((d.round, d.player)) or "no valid action"
                        raise AssertionError(
                            f"{name}, seed {ep.seed}, round {d.round}: the {kind} agent in seat "
                            f"{d.player} gave no valid answer to a {space}: {_one_line(why)}"
                        )
                    answered.add(space)
                state, _ = state.apply({d.player or 0: d.data["action"] for d in group})
                i += len(group)
            if not decisions:
                raise AssertionError(f"{name}, seed {ep.seed}: the {kind} agents made no decision")
    return answered


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).strip()[:200]
