"""A study from a plugin file (issue 34): registered as `<namespace>:<name>` with its options and
formats, and composed into the report of results played with the plugin's game, in a later
session where the plugin is named but not loaded; its options set with `--set ns:study.x=...`
or the experiment's `analysis:`; a report whose plugin is missing still written, saying so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.plugin_files import named_plugin
from support.scripted_run import run_scripted

from stratagem import plugins
from stratagem.analysis.report_options import parse_assignments
from stratagem.analysis.report_registry import registered, resolve_options
from stratagem.errors import StratagemError
from stratagem.experiments.store import ResultStore
from stratagem.studies import build_report
from stratagem.studies.registry import (
    STUDIES,
    Study,
    check_analysis,
    get_exporter,
    get_importer,
    register,
)

PLUGIN = '''
"""A plugin: a small dilemma, a model provider, and a study of the episodes that play either,
with one option and one format."""
from dataclasses import dataclass

from stratagem import register
from stratagem.analysis.report_views import Paragraph, Section
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.llm.types import Response, Usage
from stratagem.studies.registry import Study


def small():
    return NormalFormGame.prisoners_dilemma(
        "small", t=5, r=3, p=1, s=0, description="A small dilemma, T5 R3 P1 S0"
    )


GAME = register.game("small", small, rounds=(2,))


class First:
    """A model that answers the first legal choice."""

    def __init__(self, model):
        self.model = model

    async def complete(self, request, sample):
        return Response(text=request.choices[0], usage=Usage(3, 1), model=self.model)

    async def aclose(self):
        pass


PROVIDER = register.provider("first", lambda config: First(config.model))


@dataclass(frozen=True)
class TallyOptions:
    cutoff: int = 2
    """Rounds at which a player counts as patient."""


def applies(episode):
    seats = episode.record.player_names
    return episode.record.game == GAME or any(f"{PROVIDER}/" in seat for seat in seats)


def sections(data, episodes):
    options = data.study_options("tally", TallyOptions)
    rounds = sum(len(e.rounds) for e in episodes)
    return [
        Section(
            "tally",
            "Tally of the small dilemma",
            [Paragraph(f"tally: {len(episodes)} episodes of {episodes[0].record.game}, "
                       f"{rounds} rounds, cutoff {options.cutoff}")],
        )
    ]


def export_count(store, target, experiment, options):
    return [f"{len(store.episodes(experiment))} episodes"]


STUDY = register.study(
    Study(
        name="tally",
        title="Tally",
        spec="tests/studies/test_plugin_study.py",
        applies=applies,
        sections=sections,
        options=TallyOptions,
        exporters={"count": export_count},
    )
)
'''


def choose_first(request: object, sample: int) -> str:
    return str(request.choices[0])  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plugin") / "tallies.py"
    path.write_text(PLUGIN, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def results(plugin_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Two episodes of the plugin's game against TitForTat, played in a session of their own."""
    out = tmp_path_factory.mktemp("results") / "out"
    with named_plugin(plugin_path):
        summary = run_scripted(
            out, "tally", choose_first, games=["tallies:small"], rounds=[2], seeds=[1, 2]
        )
    assert (summary.finished, summary.failed) == (2, 0), summary.errors
    yield out


@pytest.fixture(scope="module")
def against(plugin_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One episode of the built-in PD played by the plugin's model: nothing the report resolves
    (the game, the opponent) names the plugin; only the episode's provenance record does."""
    out = tmp_path_factory.mktemp("against") / "out"
    models = [{"model": "tallies:first/one"}]
    with named_plugin(plugin_path):
        summary = run_scripted(out, "against", choose_first, models=models, rounds=[2])
    assert (summary.finished, summary.failed) == (1, 0), summary.errors
    yield out


def test_the_study_and_its_format_are_named_with_the_namespace(plugin_path: Path) -> None:
    with named_plugin(plugin_path) as plugin:
        assert not plugin.loaded
        study = STUDIES["tallies:tally"]  # loads the plugin
        assert plugin.loaded and study.name == "tallies:tally"
        assert set(study.exporters) == {"tallies:count"}
        assert list(STUDIES)[:4] == ["counterfactual", "magic", "thesis", "tom"]
        assert [s.name for s in registered()][-1] == "tallies:tally"
        assert get_exporter("tallies:count") is study.exporters["tallies:count"]
        with pytest.raises(StratagemError, match="allowed: jsonl, parquet, thesis-csv"):
            get_exporter("count")  # a plugin's format never takes a bare name
        with pytest.raises(StratagemError, match="--format: got 'tallies:count'"):
            get_importer("tallies:count")
    assert "tallies:tally" not in STUDIES  # forgotten with its plugin


@pytest.mark.parametrize("which", ["game", "seat"])
def test_the_report_loads_the_plugin_its_episodes_were_made_with(
    which: str, plugin_path: Path, results: Path, against: Path, tmp_path: Path
) -> None:
    source, line = {
        "game": (results, "tally: 2 episodes of tallies:small, 4 rounds, cutoff 2"),
        "seat": (against, "tally: 1 episodes of pd, 2 rounds, cutoff 2"),
    }[which]
    with named_plugin(plugin_path) as plugin:
        assert not plugin.loaded  # a new session: nothing has used a name of it yet
        html = build_report(source, out_path=tmp_path / "r.html").read_text(encoding="utf-8")
        assert plugin.loaded
    assert "Tally of the small dilemma" in html
    assert line in html
    assert "differ from the defaults" not in html


def test_set_options_of_a_plugin_study_load_it_and_resolve(
    plugin_path: Path, results: Path, tmp_path: Path
) -> None:
    settings = parse_assignments(["tallies:tally.cutoff=5"])
    assert settings == {"tallies:tally": {"cutoff": "5"}}
    with named_plugin(plugin_path) as plugin:
        options = resolve_options(settings)  # names the study only: loads its plugin
        assert plugin.loaded
        assert options["tallies:tally"].cutoff == 5  # type: ignore[attr-defined]
        html = build_report(results, out_path=tmp_path / "r.html", settings=settings)
        text = html.read_text(encoding="utf-8")
        with pytest.raises(StratagemError, match=r"'tallies:tally.speed'"):
            resolve_options(parse_assignments(["tallies:tally.speed=1"]))
    assert "tally: 2 episodes of tallies:small, 4 rounds, cutoff 5" in text
    assert "cutoff = 5 (default 2)" in text


def test_an_experiment_files_analysis_section_names_the_plugin_study(plugin_path: Path) -> None:
    with named_plugin(plugin_path) as plugin:
        check_analysis({"tallies:tally": {"cutoff": 3}})
        assert plugin.loaded
    with pytest.raises(StratagemError, match="is its plugin installed, or named with --plugin"):
        check_analysis({"tallies:tally": {"cutoff": 3}})  # the plugin is not named any more


def test_a_broken_plugin_study_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text('raise RuntimeError("no\\ntallies")\n', encoding="utf-8")
    with named_plugin(path), pytest.raises(StratagemError) as caught:
        check_analysis({"broken:tally": {"cutoff": 3}})
    message = str(caught.value)
    assert "\n" not in message
    assert "study 'broken:tally': plugin 'broken'" in message
    assert "failed to load: RuntimeError: no tallies" in message


def test_a_report_whose_plugin_is_missing_says_so(results: Path, tmp_path: Path) -> None:
    with plugins.isolated():
        html = build_report(results, out_path=tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Tally of the small dilemma" not in html
    assert "plugin &#39;tallies&#39; is not available here: name its file with --plugin" in html
    with ResultStore(results / "stratagem.db", read_only=True) as store:
        assert [r["plugin"] for r in store.plugin_records()] == ["tallies"]


def test_a_study_registered_in_process_cannot_take_a_built_in_format() -> None:
    importers = {"jsonl": get_importer("jsonl")}
    study = Study("csv-again", "CSV again", "-", lambda e: True, lambda d, e: [], importers)
    with pytest.raises(StratagemError, match="study 'csv-again': import format 'jsonl' is already"):
        register(study)
    assert "csv-again" not in STUDIES  # refused before anything was registered
