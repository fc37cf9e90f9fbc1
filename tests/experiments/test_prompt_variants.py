"""The `prompts:` axis: validation that names the field, episode ids (a file without the axis and
its `base` variant keep theirs), every LLM seat under the episode's variant, and a finished
experiment that gains the axis plays only the new variants."""

from __future__ import annotations

import asyncio
import gzip
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.small_experiment import experiment, write

from stratagem.agents.history_views import FULL, HistoryView
from stratagem.agents.prompt_variants import variant_folder
from stratagem.errors import StratagemError
from stratagem.experiments.config import ExperimentConfig, config_from_dict, load_config
from stratagem.experiments.drift import changed_settings
from stratagem.experiments.grid import Grid, expand
from stratagem.experiments.runner import CACHE_FILE, STORE_FILE, Runner

DATA = Path(__file__).resolve().parents[1] / "data"

VARIANTS = [
    {"name": "base"},
    {"name": "p1", "templates": "paraphrase-1"},
    {"name": "last2", "history": {"last": 2}},
    {"name": "table", "history": "table"},
]


def config(tmp_path: Path, **overrides: Any) -> ExperimentConfig:
    data = experiment(tmp_path, opponents=["TitForTat", "AlwaysDefect"], seeds=[0, 1])
    return config_from_dict({**data, **overrides}, "exp.yaml", base=tmp_path)


def test_a_file_without_prompts_and_the_base_variant_keep_their_ids(tmp_path: Path) -> None:
    plain = expand(config(tmp_path))
    assert all("prompt" not in s.key() and s.prompt is None for s in plain)
    specs = expand(config(tmp_path, prompts=VARIANTS))
    assert len(specs) == 4 * len(plain) == Grid(config(tmp_path, prompts=VARIANTS)).size()
    base = [s for s in specs if s.prompt is not None and s.prompt.is_base]
    assert [s.id for s in base] == [s.id for s in plain]
    assert [s.stored() for s in base] == [s.stored() for s in plain]
    others = [s for s in specs if s not in base]
    assert len({s.id for s in others}) == len(others)
    assert {str(s.key()["prompt"]) for s in others} == {
        "{'name': 'p1', 'templates': 'paraphrase-1'}",
        "{'name': 'last2', 'history': {'last': 2}}",
        "{'name': 'table', 'history': 'table'}",
    }


def test_the_variant_enters_ids_as_written_so_a_renamed_one_plays_again(tmp_path: Path) -> None:
    one = expand(config(tmp_path, prompts=[{"name": "p1", "templates": "paraphrase-1"}]))
    again = expand(config(tmp_path, prompts=[{"name": "p1", "templates": "paraphrase-1"}]))
    renamed = expand(config(tmp_path, prompts=[{"name": "para", "templates": "paraphrase-1"}]))
    assert [s.id for s in one] == [s.id for s in again]
    assert not {s.id for s in one} & {s.id for s in renamed}


def test_every_llm_seat_plays_under_the_episodes_variant(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        agents=[{"name": "plain"}, {"name": "other", "output": "json"}],
        opponents=["TitForTat", "agent:other"],
        lineups=[["other", "plain"], ["TitForTat", "plain"]],
        prompts=VARIANTS[:3],
    )
    specs = expand(cfg)
    assert {s.prompt.name for s in specs if s.prompt is not None} == {"base", "p1", "last2"}
    for spec in specs:
        assert spec.prompt is not None
        wanted = spec.prompt.prompt_set()
        for seat in spec.seats:
            if seat.agent is None:
                continue
            found = seat.agent.prompts
            if wanted.changes_nothing:
                assert found is None
            else:
                assert found == wanted
    seated = [
        (s.prompt.name, seat.agent.prompts)
        for s in specs
        for seat in s.seats
        if s.prompt is not None and seat.agent is not None and seat.agent.prompts is not None
    ]
    assert {(name, p.templates) for name, p in seated if name == "p1"} == {
        ("p1", variant_folder("paraphrase-1"))
    }
    assert {(name, p.history) for name, p in seated if name == "last2"} == {
        ("last2", HistoryView("last", 2))
    }
    assert HistoryView("last", 2) != FULL and {name for name, _ in seated} == {"p1", "last2"}


@pytest.mark.parametrize(
    ("prompts", "field", "message"),
    [
        ([{"name": "a"}, {"name": "a"}], "prompts.1.name", "'a' is listed twice"),
        ([{"name": "a b"}], "prompts.0.name", "use letters, digits"),
        ([{"name": "a", "templates": "paraphrase-9"}], "prompts.0.templates",
         "unknown prompt variant 'paraphrase-9': did you mean paraphrase-"),
        ([{"name": "a", "templates": "./missing"}], "prompts.0.templates", "no folder "),
        ([{"name": "base", "templates": "paraphrase-1"}], "prompts.0.templates",
         "the variant named 'base' is the agents' own prompts"),
        ([{"name": "base", "history": "table"}], "prompts.0.history", "'base' is the agents'"),
        ([{"name": "a", "history": "tabel"}], "prompts.0.history",
         "got 'tabel', allowed: full, table or {last: <rounds>}"),
        ([{"name": "a", "history": {"last": 0}}], "prompts.0.history.last", "greater than"),
        ([{"name": "a", "history": {"first": 2}}], "prompts.0.history.last", "Field required"),
        ([{"name": "a", "colour": "red"}], "prompts.0.colour", "unknown field"),
    ],
)  # fmt: skip
def test_a_bad_variant_is_one_line_naming_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prompts: list[Any], field: str,
    message: str,
) -> None:  # fmt: skip
    file = write(tmp_path, experiment(tmp_path, prompts=prompts))
    code, out, err = cli(capsys, "run", str(file), "--dry-run")
    assert (code, out) == (2, ""), err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: {file}: {field}: ") and message in line, line


@pytest.mark.parametrize(
    ("agents", "prompts", "start", "message"),
    [
        ([{"name": "p", "framing": "prisoner", "output": "json"}],
         [{"name": "a", "templates": "paraphrase-1"}], "prompts.0.templates",
         "has no 'prisoner' folder, so agent 'p' would play its usual prompts in 'dilemma'"),
        ([{"name": "p", "framing": "prisoner", "output": "json"}],
         [{"name": "a", "history": "table"}], "prompts.0.history",
         "framing 'prisoner' has no history_table.j2"),
        ([{"name": "p", "history": "chat"}], [{"name": "a"}, {"name": "b", "history": {"last": 3}}],
         "prompts.1.history", "a chat history tells every round as it ends"),
    ],
)  # fmt: skip
def test_a_variant_a_seat_cannot_play_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agents: list[Any], prompts: list[Any],
    start: str, message: str,
) -> None:  # fmt: skip
    file = write(tmp_path, experiment(tmp_path, agents=agents, prompts=prompts))
    code, out, err = cli(capsys, "run", str(file), "--dry-run")
    assert (code, out) == (2, ""), err
    (line,) = err.strip().splitlines()
    assert f": {start}: " in line and message in line, line
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_an_architecture_with_prompts_of_its_own_takes_no_variant(tmp_path: Path) -> None:
    data = experiment(
        tmp_path, agents=[{"name": "pgm", "kind": "pgm"}], games=["chameleon/0"], opponents=[],
        lineups=[["pgm", "pgm", "pgm"]],
    )  # fmt: skip
    with pytest.raises(StratagemError, match=r"^prompts\.0\.history: agent 'pgm' \(pgm\) "
                       r"renders prompts of its own"):  # fmt: skip
        expand(config_from_dict({**data, "prompts": [{"name": "t", "history": "table"}]}, "f"))
    same = config_from_dict({**data, "prompts": [{"name": "base"}]}, "f")
    assert len(expand(same)) == 1


def test_a_folder_of_ones_own_is_read_relative_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "mine" / "neutral"
    folder.mkdir(parents=True)
    (folder / "system.j2").write_text("Play {{ labels | alternatives }}, {{ rounds }} rounds.\n")
    file = write(tmp_path, experiment(tmp_path, prompts=[{"name": "m", "templates": "./mine"}]))
    monkeypatch.chdir(tmp_path.parent)
    (spec,) = expand(load_config(file))
    assert spec.prompt is not None and spec.prompt.prompt_set().templates == tmp_path / "mine"
    assert spec.key()["prompt"] == {"name": "m", "templates": "./mine"}
    # The stored config (every default written out) reads back, as a run compares it.
    loaded = load_config(file)
    assert ExperimentConfig.model_validate(loaded.model_dump(mode="json")) == loaded


def test_a_variant_changed_under_its_name_is_drift(tmp_path: Path) -> None:
    before = config(tmp_path, prompts=[{"name": "v", "templates": "paraphrase-1"}])
    stored = before.model_dump(mode="json")
    after = config(tmp_path, prompts=[{"name": "v", "templates": "paraphrase-2"}])
    assert changed_settings(stored, after) == [
        "prompts.0.templates: 'paraphrase-1' -> 'paraphrase-2'"
    ]
    grown = config(tmp_path, prompts=[{"name": "v", "templates": "paraphrase-1"}, {"name": "w"}])
    assert changed_settings(stored, grown) == []


def test_a_finished_experiment_that_gains_the_axis_plays_only_the_new_variant(
    tmp_path: Path,
) -> None:
    """The release before line-ups' results (tests/data/legacy-v1) resume with 0 calls under
    `prompts: [base, ...]`: only the other variant's episodes are played."""
    out = tmp_path / "out"
    out.mkdir()
    for name in (STORE_FILE, CACHE_FILE):
        with gzip.open(DATA / "legacy-v1" / f"{name}.gz") as src, open(out / name, "wb") as dst:
            shutil.copyfileobj(src, dst)
    data = yaml.safe_load((DATA / "legacy-v1" / "experiment.yaml").read_text(encoding="utf-8"))
    data |= {"output": str(out), "prompts": [{"name": "base"}]}
    file = tmp_path / "exp.yaml"
    file.write_text(yaml.safe_dump(data), encoding="utf-8")
    summary = asyncio.run(Runner(load_config(file), show_progress=False).run())
    assert (summary.episodes, summary.skipped, summary.calls) == (6, 6, 0)
    data["prompts"].append({"name": "last1", "history": {"last": 1}})
    file.write_text(yaml.safe_dump(data), encoding="utf-8")
    summary = asyncio.run(Runner(load_config(file), show_progress=False).run())
    assert (summary.episodes, summary.skipped, summary.finished) == (12, 6, 6), summary.errors
