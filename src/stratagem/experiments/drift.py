"""An edited experiment file is not merged silently into what an earlier run stored.

Growing the grid (another seed, model, game or agent) adds episodes to the same experiment, as it
should. But changing what a named entry means (agent `plain` now with framing prisoner instead of
neutral, model id `gpt` now another model) would put episodes of two settings under one name, and
every table would average them into one cell. So a run compares the file with the one stored and
refuses such a change unless told to go on (`--force`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import ValidationError

from stratagem.errors import StratagemError
from stratagem.experiments.config import AgentEntry, ExperimentConfig, VariantEntry
from stratagem.experiments.model_entry import ModelEntry
from stratagem.experiments.prompt_entry import PromptEntry
from stratagem.games.catalog import check_game_options

E = TypeVar("E", AgentEntry, ModelEntry, VariantEntry, PromptEntry)

CONNECTION = frozenset(
    {"base_url", "endpoints", "endpoints_file", "api_key_env", "max_concurrency", "timeout_s",
     "limits", "price", "latency_s"}
)  # fmt: skip
"""How a model is reached and paid for: not part of what its episodes are."""


def changed_settings(stored: Mapping[str, Any], config: ExperimentConfig) -> list[str]:
    """'agents.0.framing: neutral -> prisoner' for every setting of a named entry that the file
    changes; entries added or removed are not changes."""
    out: list[str] = []
    out += _compare("agents", stored.get("agents"), config.agents, AgentEntry,
                    lambda e: e.name, {"repetitions"})  # fmt: skip
    out += _compare("models", stored.get("models"), config.models, ModelEntry,
                    lambda e: e.name, CONNECTION)  # fmt: skip
    out += _compare("variants", stored.get("variants"), config.variants, VariantEntry,
                    lambda e: e.name, frozenset())  # fmt: skip
    out += _compare("prompts", stored.get("prompts"), config.prompts, PromptEntry,
                    lambda e: e.name, frozenset())  # fmt: skip
    out += _game_options(stored, config)
    return out


def _game_options(stored: Mapping[str, Any], config: ExperimentConfig) -> list[str]:
    """A game the stored file played whose rule options now differ: its episodes would be new
    ids under the same game name, so every table would average two rule sets."""
    was = stored.get("game_options") or {}
    played = {str(g).partition("/")[0] for g in stored.get("games") or []}
    out = []
    for game in sorted(played & {g.partition("/")[0] for g in config.games}):
        before = _rules(game, was.get(game) or {})
        now = _rules(game, config.game_options.get(game) or {})
        if before != now:
            out.append(f"game_options.{game}: {dict(before)!r} -> {dict(now)!r}")
    return out


def _compare(
    field: str,
    old: Any,
    new: Sequence[E],
    model: type[E],
    name: Callable[[E], str],
    ignored: frozenset[str] | set[str],
) -> list[str]:
    before: dict[str, dict[str, Any]] = {}
    for item in old if isinstance(old, list) else []:
        try:
            entry = model.model_validate(item)  # defaults of settings added since then
        except ValidationError:
            continue
        before[name(entry)] = entry.model_dump(mode="json")
    out = []
    for i, entry in enumerate(new):
        was = before.get(name(entry))
        if was is None:
            continue
        now = entry.model_dump(mode="json")
        for key in sorted(set(was) | set(now)):
            if key not in ignored and was.get(key) != now.get(key):
                out.append(f"{field}.{i}.{key}: {was.get(key)!r} -> {now.get(key)!r}")
    return out


def _rules(game: str, options: Mapping[str, Any]) -> Mapping[str, Any]:
    """The options that differ from the game's defaults (as stored, when no longer valid)."""
    try:
        return check_game_options(game, options)
    except StratagemError:
        return options
