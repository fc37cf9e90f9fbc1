"""`stratagem rescore --architecture NAME=NS:KIND` with an out-of-tree plugin's parser (issue 35,
item 4): a plugin file named with `--plugin` registers an architecture that reads a reply's first
decision where `plain` reads its last; the rescore reports every move flipped, writes the new
experiment beside its source, and records the plugin where a later command finds it (the
experiment's `plugins:`, each episode's provenance), so the results read back without naming
the plugin again. The store, the engine, the plugin loader and the command are real; the
model is a scripted one that always drafts one move and settles on another."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support.cli import cli

from stratagem import plugins
from stratagem.agents.registry import ARCHITECTURES
from stratagem.experiments.rescore_change import RESCORED_FROM
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

PLUGIN = '''
"""An architecture whose parser reads the first {"DECISION": ...} of a reply, not the last."""
from stratagem import register
from stratagem.agents.parsing import JsonDecisionParser, find_key_values
from stratagem.agents.plain import PlainLLMAgent, common_settings
from stratagem.agents.prompt_variants import prompter_for
from stratagem.agents.registry import Architecture, repeated_matrix_only


class FirstDecision(JsonDecisionParser):
    def _value(self, text):
        found = find_key_values(text, self.key)
        return found[0] if found else super()._value(text)


def build(settings, client, game):
    agent = PlainLLMAgent(client, prompter_for(settings), **common_settings(settings))
    agent.parser = FirstDecision()
    return agent


register.architecture(
    Architecture(
        "first", "plain, reading a reply's first decision", build, repeated_matrix_only,
        settings=frozenset({"framing", "output", "history", "prompting"}),
    )
)
'''
SCRIPT = "drafts"
ROUNDS = 3


def drafts(request: Request, sample: int) -> str:
    """A draft of the first label, then a final answer of the last (the labels from the
    request's JSON schema)."""
    assert request.json_schema is not None
    labels = request.json_schema["properties"]["DECISION"]["enum"]
    first, last = json.dumps({"DECISION": labels[0]}), json.dumps({"DECISION": labels[-1]})
    return f"Draft: {first}. On reflection, final: {last}"


@pytest.fixture
def fresh() -> Iterator[None]:
    """The scripted model; no plugin before the test, and none (nor its names) after it."""
    register_script(SCRIPT, drafts)
    with plugins.isolated():
        yield
    _REGISTERED.pop(SCRIPT, None)
    for name in [n for n in ARCHITECTURES if n.startswith("firstdraft:")]:
        ARCHITECTURES.remove(name)


def _played(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """The plugin file, and a stored run of `plain` (which reads the last decision)."""
    plugin = tmp_path / "lib" / "firstdraft.py"
    plugin.parent.mkdir()
    plugin.write_text(PLUGIN, encoding="utf-8")
    data = {
        "name": "drafts",
        "output": str(tmp_path / "out"),
        "models": [{"model": f"scripted/{SCRIPT}"}],
        "agents": [{"name": "zs", "framing": "prisoner", "output": "json"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat", "AlwaysDefect"],
        "rounds": [ROUNDS],
        "seeds": [0, 1],
    }
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, _, err = cli(capsys, "run", str(exp), "--yes", "--no-progress")
    assert code == 0, err
    return plugin, tmp_path / "out"


def test_a_plugins_parser_rescores_and_the_new_experiment_records_the_plugin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fresh: None
) -> None:
    plugin, out = _played(tmp_path, capsys)
    with ResultStore(out / STORE_FILE) as store:
        played = {e.id: store.rounds(e.id) for e in store.episodes("drafts")}
    assert all(r.actions[0] == "defect" for rounds in played.values() for r in rounds)

    code, printed, err = cli(
        capsys, "rescore", str(out), "--architecture", "zs=firstdraft:first",
        "--plugin", str(plugin),
    )  # fmt: skip
    assert code == 0, err
    episodes, moves = len(played), len(played) * ROUNDS
    # Each move's first decision is "cooperate": every one flips, and each episode is cut at
    # its first move.
    assert f"moves: {moves} LLM moves read again, {moves} flipped (100.0%)" in printed
    assert f"episodes: {episodes} read, 0 unchanged, {episodes} changed (at move 1)" in printed
    report = Path(printed.rsplit("report: ", 1)[1].strip()).read_text(encoding="utf-8")
    flips = [line for line in report.splitlines() if '"defect" -> "cooperate"' in line]
    assert len(flips) == moves, report

    with ResultStore(out / STORE_FILE) as store:
        (new,) = [e for e in store.experiments() if e.config.get(RESCORED_FROM) == "drafts"]
        assert [a["kind"] for a in new.config["agents"]] == ["firstdraft:first"]
        assert new.config["plugins"] == [str(plugin.resolve())]  # named again by later commands
        rescored = store.episodes(new.id)
        assert len(rescored) == episodes
        for episode in rescored:
            (record,) = episode.spec["plugins"]
            assert record["plugin"] == "firstdraft" and record["sha256"]

    plugins.rediscover()  # a later command, the plugin not named: the store names it
    code, printed, err = cli(capsys, "show", str(out), rescored[0].id[:8])
    assert code == 0, err
    assert "firstdraft" not in err  # no warning that the plugin is missing
    plugins.rediscover()  # the same rescore again continues it, the plugin found the same way
    code, printed, err = cli(capsys, "rescore", str(out), "--architecture", "zs=firstdraft:first")
    assert code == 0, err
    assert printed.startswith(f"rescore of 'drafts' as '{new.id}'"), printed
