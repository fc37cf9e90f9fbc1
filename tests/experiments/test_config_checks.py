"""The experiment file refuses, when it loads (so `run --dry-run` too), what the run would refuse
or silently ignore: infinite numbers, unknown providers, missing GGUF files, keys given twice,
settings an architecture ignores, an empty output path. One line, `file: field: why`, exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.small_experiment import experiment, write

from stratagem.agents.registry import ARCHITECTURES, SHARED_SETTINGS
from stratagem.experiments.config import AgentEntry


def refused(capsys: pytest.CaptureFixture[str], file: Path, *flags: str) -> str:
    """The one error line of `run FILE`, checked to be exit 2 with nothing created."""
    code, out, err = cli(capsys, "run", str(file), "--no-progress", *flags)
    assert (code, out) == (2, ""), err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: {file}") and "Traceback" not in err
    assert not (file.parent / "out").exists()
    return line.removeprefix("error: ")


def pgm(tmp_path: Path, options: dict[str, Any]) -> dict[str, Any]:
    return experiment(
        tmp_path,
        agents=[{"name": "pgm", "kind": "pgm", "options": options}],
        games=["chameleon/0"],
        opponents=[],
        lineups=[["pgm", "pgm", "pgm"]],
    )


@pytest.mark.parametrize("scale", [float("inf"), "1e309", float("nan")])
def test_an_infinite_factor_scale_is_refused_by_the_dry_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scale: object
) -> None:
    """`factor_scale: .inf` passed the dry run, then every episode failed."""
    file = write(tmp_path, pgm(tmp_path, {"factor_scale": 0.2}))
    code, _, err = cli(capsys, "run", str(file), "--dry-run")
    assert (code, err) == (0, "")  # the finite file plans
    file = write(tmp_path, pgm(tmp_path, {"factor_scale": scale}))
    line = refused(capsys, file, "--dry-run")
    assert line.startswith(f"{file}: agents.0.options.factor_scale: ")
    assert "finite number" in line


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"models": [{"model": "scripted/random:7", "timeout_s": "1e309"}]}, "models.0.timeout_s"),
        ({"models": [{"model": "scripted/x", "params": {"top_p": float("nan")}}]},
         "models.0.params.top_p"),
        ({"budget": {"max_usd": float("inf")}}, "budget.max_usd"),
        ({"agents": [{"name": "plain", "temperature": "inf"}]}, "agents.0.temperature"),
    ],
)  # fmt: skip
def test_every_number_of_the_file_is_finite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], overrides: dict[str, Any], field: str
) -> None:
    file = write(tmp_path, experiment(tmp_path, **overrides))
    line = refused(capsys, file, "--dry-run")
    assert line.startswith(f"{file}: {field}: ") and "finite number" in line


@pytest.mark.parametrize("dry_run", [True, False])
def test_the_dry_run_refuses_an_unknown_provider_and_a_missing_gguf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dry_run: bool
) -> None:
    """What the run refuses, the dry run refuses, with the same line (no model loaded)."""
    flags = ["--dry-run"] if dry_run else []
    file = write(tmp_path, experiment(tmp_path, models=[{"model": "openia/gpt-4o"}]))
    line = refused(capsys, file, *flags)
    assert line.startswith(f"{file}: models.0.model: unknown model provider 'openia': ")
    gguf = tmp_path / "models" / "missing.gguf"
    entry = {"model": "local/mine", "path": str(gguf)}
    file = write(tmp_path, experiment(tmp_path, models=[entry]))
    line = refused(capsys, file, *flags)
    assert line == (
        f"{file}: models.0: local/mine: path '{gguf}': cannot read it (No such file or directory)"
    )


def test_a_gguf_file_that_exists_is_planned_without_loading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF, but not a model: the dry run never loads it")
    entry = {"model": "local/tiny", "path": str(gguf)}
    file = write(tmp_path, experiment(tmp_path, models=[entry]))
    code, out, err = cli(capsys, "run", str(file), "--dry-run")
    assert (code, err) == (0, "") and out.startswith("plan: ")


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("rounds: [2]\nseeds: [0]\nrounds: [5]\n", 3, "rounds"),
        ("agents:\n  - name: plain\n    framing: prisoner\n    framing: neutral\n", 4, "framing"),
    ],
)
def test_a_key_given_twice_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, key: str
) -> None:
    base = experiment(tmp_path)
    for name in ("rounds", "seeds", "agents"):
        del base[name]
    file = tmp_path / "exp.yaml"
    file.write_text(text + yaml.safe_dump(base, sort_keys=False), encoding="utf-8")
    assert refused(capsys, file, "--dry-run") == f"{file}:{line}: duplicate key '{key}'"


def test_a_merge_key_may_still_be_overridden(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """YAML's `<<` merges defaults that the mapping's own keys override: not a duplicate."""
    base = experiment(tmp_path)
    del base["agents"]
    text = "x-agent: &agent {name: plain, framing: neutral}\n"
    text += "agents:\n  - <<: *agent\n    framing: prisoner\n"
    file = tmp_path / "exp.yaml"
    file.write_text(text + yaml.safe_dump(base, sort_keys=False), encoding="utf-8")
    code, _, err = cli(capsys, "run", str(file), "--dry-run")
    # the merge is read (x-agent is then an unknown field): no duplicate-key error
    assert code == 2 and "x-agent: unknown field" in err and "duplicate" not in err


def test_a_rotation_with_a_bad_by_names_the_field_and_the_choices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rotation = {"challenger": "plain", "defenders": "TitForTat", "by": "diagonal"}
    file = write(tmp_path, experiment(tmp_path, opponents=[], lineups=[["plain", "TitForTat"],
                                                                        rotation]))  # fmt: skip
    line = refused(capsys, file, "--dry-run")
    assert line == f"{file}: lineups.1.by: got 'diagonal', allowed: 'seat' or 'side'"


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ({"kind": "tom", "framing": "prisoner"},
         "framing: tom agents take no framing (only debate, plain, tool agents do)"),
        ({"kind": "tom", "output": "json"}, "output: tom agents take no output (only plain"),
        ({"kind": "tom", "history": "chat"}, "history: tom agents take no history (only plain"),
        ({"kind": "magic", "max_turns": 3}, "max_turns: magic agents take no max_turns"),
        ({"kind": "tool", "attitude": "defect", "output": "json"},
         "output: tool agents take no output"),
        ({"kind": "plain", "memory": "episode"}, "memory: plain agents take no memory"),
    ],
)  # fmt: skip
def test_settings_an_architecture_ignores_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: dict[str, Any], message: str
) -> None:
    file = write(tmp_path, experiment(tmp_path, agents=[{"name": "a", **agent}]))
    assert refused(capsys, file, "--dry-run").startswith(f"{file}: agents.0.{message}")


def test_each_architecture_says_which_settings_it_honours() -> None:
    """Every field of an agent entry is honoured by some architecture: the list lives with
    the architectures (registry metadata), and names only real fields."""
    honoured = SHARED_SETTINGS.union(*(a.settings for a in ARCHITECTURES.values()))
    assert honoured == set(AgentEntry.model_fields)


@pytest.mark.parametrize("output", ["", "   "])
def test_an_empty_output_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    output: str,
) -> None:  # fmt: skip
    """`output: ""` meant the current directory: the store and cache landed beside the file."""
    monkeypatch.chdir(tmp_path)
    file = write(tmp_path, experiment(tmp_path, output=output))
    for flags in (["--dry-run"], []):
        line = refused(capsys, file, *flags)
        assert line.startswith(f"{file}: output: must name a directory")
    assert [p.name for p in tmp_path.iterdir()] == ["exp.yaml"]


EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_a_stored_config_reads_back(example: Path) -> None:
    """A run stores its whole config, every default written out, and compares the next run's
    file with it (`drift`): a default written out is no setting an architecture ignores."""
    from stratagem.experiments.config import ExperimentConfig, load_config

    config = load_config(example)
    stored = config.model_dump(mode="json")
    assert ExperimentConfig.model_validate(stored) == config


def _pgm_ids(tmp_path: Path, options: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    from stratagem.experiments.config import ExperimentConfig
    from stratagem.experiments.grid import expand

    config = ExperimentConfig.model_validate(pgm(tmp_path, options))
    return [s.id for s in expand(config)], config.agents[0].options


@pytest.mark.parametrize(
    ("given", "canonical"),
    [("yes", True), ("on", True), ("true", True), (1, True), ("no", False), (0, False)],
)
def test_an_option_value_enters_the_episode_id_as_its_declared_type(
    tmp_path: Path, given: object, canonical: bool
) -> None:
    """`code_compat: "yes"` was stored raw and gave other episode ids than `true` (issue 33 item
    11): the same play under two ids, played and paid for twice."""
    ids, options = _pgm_ids(tmp_path, {"code_compat": given, "factor_scale": "0.5"})
    want, stored = _pgm_ids(tmp_path, {"code_compat": canonical, "factor_scale": 0.5})
    assert options == stored == {"code_compat": canonical, "factor_scale": 0.5}
    assert type(options["code_compat"]) is bool and ids == want


def test_canonical_option_values_keep_their_ids(tmp_path: Path) -> None:
    """Values already of their type stay as written, so stored episodes keep their ids: a whole
    number for a float option too (JSON writes 1 and 1.0 differently)."""
    ids, options = _pgm_ids(tmp_path, {"code_compat": True, "factor_scale": 1, "ties": None})
    assert options == {"code_compat": True, "factor_scale": 1, "ties": None}
    assert type(options["factor_scale"]) is int
    assert ids == _pgm_ids(tmp_path, {"code_compat": True, "factor_scale": 1, "ties": None})[0]


def test_an_option_value_its_type_cannot_read_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = write(tmp_path, pgm(tmp_path, {"code_compat": "maybe"}))
    line = refused(capsys, file, "--dry-run")
    assert line.startswith(f"{file}: agents.0.options.code_compat: ")


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"name": "plain", "samples": 10**9}, "agents.0.samples"),
        ({"name": "plain", "max_reasks": 10**9}, "agents.0.max_reasks"),
        ({"name": "d", "kind": "debate", "attitude": "compute", "max_turns": 10**9},
         "agents.0.max_turns"),
        ({"name": "t", "kind": "tool", "attitude": "compute", "max_tool_calls": 10**9},
         "agents.0.max_tool_calls"),
    ],
)  # fmt: skip
def test_every_count_of_an_agent_entry_has_a_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: dict[str, Any], field: str
) -> None:
    """Issue 33 item 6: a count with an extra zero or three (a billion samples or re-asks per
    decision) passed the dry run; each is refused in one line, naming the field."""
    file = write(tmp_path, experiment(tmp_path, agents=[entry]))
    line = refused(capsys, file, "--dry-run")
    assert line.startswith(f"{file}: {field}: ")
    assert "less than or equal to 100" in line or "to 100, or 'study'" in line


@pytest.mark.parametrize("kind", ["debate", "tool"])
def test_an_architecture_whose_templates_the_framing_lacks_is_refused_when_the_file_loads(
    kind: str,
) -> None:
    # A debate agent on the default (neutral) framing failed every episode at run time.
    with pytest.raises(ValueError, match=rf"framing: a {kind} agent renders .*'neutral' lacks; "
                       "framings that have them: prisoner"):  # fmt: skip
        AgentEntry(name="a", kind=kind, attitude="cooperate")
    assert AgentEntry(name="a", kind=kind, attitude="cooperate", framing="prisoner").framing
