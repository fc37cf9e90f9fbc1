"""What a rescore changes, and the settings of the experiment it writes (docs/rescore.md).

A rescore of the replies changes agent entries: `agent.<name>.<field>=<value>` sets a field of the
named entry (`options.<option>` one of its architecture's options), and `<name>=<kind>` gives it
another architecture, a plugin's (`<namespace>:<kind>`) included. A rescore of the metrics
(`--metric`) changes the analysis options (`<study>.<option>=<value>`, as `report --set`). Either
way the new experiment's settings are the source's with the change applied, checked as an
experiment file is, and stored with `rescored_from` (the source experiment's id) and `rescore`
(what changed), so a result never loses where it came from; a plugin file or module an agent's
new architecture comes from is added to its `plugins:`, as `run --plugin` stores it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from stratagem import plugins
from stratagem.agents.registry import get_architecture
from stratagem.errors import StratagemError
from stratagem.experiments.config import AgentEntry, ExperimentConfig, config_from_dict
from stratagem.experiments.ids import stable_id
from stratagem.experiments.records import ExperimentRecord

RESCORED_FROM = "rescored_from"
"""The stored settings' key naming the source experiment."""
RESCORE = "rescore"
"""The stored settings' key saying what changed, and the episode spec's key naming its source."""
FIXED = ("name", "repetitions")
"""Agent fields a rescore may not change: they make another grid, not another reading."""


@dataclass(frozen=True)
class Change:
    """Agent fields to set (`agents`: (agent, dotted field, value)), or analysis options
    (`analysis`: (study, option, value)) for a rescore of the metrics."""

    agents: tuple[tuple[str, str, Any], ...] = ()
    analysis: tuple[tuple[str, str, Any], ...] = ()

    @property
    def metric(self) -> bool:
        return bool(self.analysis)

    def lines(self) -> list[str]:
        """The change as it is written on the command line."""
        if self.metric:
            return [f"{study}.{option}={_text(v)}" for study, option, v in self.analysis]
        return [f"agent.{agent}.{name}={_text(v)}" for agent, name, v in self.agents]

    def stored(self) -> dict[str, Any]:
        return {"mode": "metric" if self.metric else "replies", "changes": self.lines()}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def agent_changes(
    assignments: Sequence[str], architectures: Sequence[str], agents: Sequence[str]
) -> Change:
    """`agent.<name>.<field>=<value>` items and `<name>=<kind>` items, against the agent
    entries `agents`; values are read as YAML scalars (`true`, `5`, `first`)."""
    out: list[tuple[str, str, Any]] = []
    for item in assignments:
        name, sep, text = item.partition("=")
        agent = _agent_named(name.strip(), agents)
        field = name.strip()[len(f"agent.{agent}.") :] if agent is not None else ""
        if not sep or agent is None or not field:
            known = ", ".join(agents)
            raise StratagemError(
                f"--set {item!r}: expected agent.NAME.FIELD=VALUE with NAME one of the "
                f"experiment's agents ({known}), e.g. agent.{agents[0]}.options.code_compat=true"
            )
        if field in FIXED:
            raise StratagemError(f"--set {item!r}: a rescore keeps the grid, so not the {field}")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            raise StratagemError(f"--set {item!r}: the value is not a YAML scalar") from None
        out.append((agent, field, value))
    for item in architectures:
        agent, sep, kind = item.partition("=")
        if not sep or agent.strip() not in agents or not kind.strip():
            raise StratagemError(
                f"--architecture {item!r}: expected NAME=KIND with NAME one of the experiment's "
                f"agents ({', '.join(agents)})"
            )
        out.append((agent.strip(), "kind", kind.strip()))
    if not out:
        raise StratagemError(
            "nothing to change: give --set agent.NAME.FIELD=VALUE or --architecture NAME=KIND "
            "(or --metric with --set STUDY.OPTION=VALUE)"
        )
    return Change(agents=tuple(out))


def _agent_named(name: str, agents: Sequence[str]) -> str | None:
    """The agent `agent.<agent>.<field>` names (the longest: a name may hold a dot)."""
    found = [a for a in agents if name.startswith(f"agent.{a}.")]
    return max(found, key=len) if found else None


def metric_changes(settings: Mapping[str, Mapping[str, Any]]) -> Change:
    """Analysis options `{study: {option: value}}` (`report --set`'s, already checked)."""
    items = tuple((s, o, v) for s, options in settings.items() for o, v in options.items())
    if not items:
        raise StratagemError("--metric: give the analysis options with --set STUDY.OPTION=VALUE")
    return Change(analysis=items)


def source_config(record: ExperimentRecord, where: str) -> ExperimentConfig:
    """The settings a stored experiment was run with (a rescored one's, without its origin)."""
    data = {k: v for k, v in record.config.items() if k not in (RESCORED_FROM, RESCORE)}
    if not data:
        raise StratagemError(
            f"{where}: experiment '{record.id}' has no stored settings (imported?): a rescore "
            "needs the agents it was played with"
        )
    return config_from_dict(data, f"{where}: the stored settings of '{record.id}'")


def changed_config(
    source: ExperimentConfig, change: Change, name: str, output: Path
) -> ExperimentConfig:
    """The source's settings with `change` applied, under `name`, writing to `output`."""
    data = source.model_dump(mode="json")
    data["name"], data["output"] = name, str(output)
    for agent, field, value in change.agents:
        for entry in data["agents"]:
            if entry["name"] == agent:
                _set(entry, field.split("."), value)
    for study, option, value in change.analysis:
        analysis = data.setdefault("analysis", {})
        analysis.setdefault(study, {})[option] = value
    named = data.setdefault("plugins", [])
    named += [p for p in _plugins_of(data["agents"]) if p not in named]
    config = config_from_dict(data, f"rescore ({'; '.join(change.lines())})")
    if change.agents and list(map(_reads, config.agents)) == list(map(_reads, source.agents)):
        raise StratagemError(
            f"{'; '.join(change.lines())}: this leaves every agent as it was; nothing to rescore"
        )
    if change.metric and config.study_options == source.study_options:
        raise StratagemError(
            f"{'; '.join(change.lines())}: these are the options already in use; nothing to rescore"
        )
    return config


def _plugins_of(agents: Sequence[Mapping[str, Any]]) -> list[str]:
    """The plugins named by file or module (not installed ones, found by their entry point)
    that the agents' architectures come from, as an experiment file names them: stored with the
    new experiment, so the commands that read it name them again."""
    out = []
    for entry in agents:
        namespace, _ = plugins.split(str(entry.get("kind") or ""))
        plugin = None if namespace is None else plugins.find(namespace)
        if plugin is not None and plugin.origin != "entry point":
            out.append(plugin.target)
    return out


def _reads(entry: AgentEntry) -> dict[str, Any]:
    """An agent entry as it plays: its options with their defaults filled in (an option set to
    its default changes nothing)."""
    data = entry.model_dump(mode="json")
    options = get_architecture(entry.kind).options
    if options is not None:
        data["options"] = options.model_validate(entry.options).model_dump(mode="json")
    return data


def _set(entry: dict[str, Any], path: list[str], value: Any) -> None:
    where = entry
    for part in path[:-1]:
        inner = where.get(part)
        if inner is None:
            inner = where[part] = {}
        if not isinstance(inner, dict):
            raise StratagemError(f"agent.{entry['name']}.{'.'.join(path)}: {part} is not a mapping")
        where = inner
    where[path[-1]] = value


def stored_config(config: ExperimentConfig, source: str, change: Change) -> dict[str, Any]:
    """The settings the new experiment is stored with: its own, its source and the change."""
    return config.model_dump(mode="json") | {RESCORED_FROM: source, RESCORE: change.stored()}


def default_name(source: str, change: Change) -> str:
    """`<source>-rescore-<8 hex digits of the change>`: the same change, the same experiment (a
    second run continues it, `--fork` plays its cut episodes on)."""
    return f"{source}-rescore-{stable_id([source, change.lines()], 8)}"


def episode_id(experiment: str, source_episode: str) -> str:
    """A rescored episode's id: new (never a source's, never another rescore's), stable."""
    return stable_id({RESCORED_FROM: source_episode, "experiment": experiment})
