"""The report's prompt-variant section on a scripted run of two models under three variants: the
two-way tables (variant x model, an interval in each cell) agree with the same numbers computed
from the results' DataFrames, the spread sits beside each headline, and cells keep variants
apart."""

from __future__ import annotations

import asyncio
import random
import re
import statistics
from pathlib import Path

import pandas as pd
import pytest
from support.report_html import tables

import stratagem
from stratagem.analysis.cells import cell_table
from stratagem.analysis.report import build_report
from stratagem.analysis.tallies import episode_tallies
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

MODELS = ("scripted/pv-steady", "scripted/pv-swayed")
VARIANTS = [
    {"name": "base"},
    {"name": "p1", "templates": "paraphrase-1"},
    {"name": "table", "history": "table"},
]


def _steady(request: Request, sample: int) -> str:
    """Cooperates 60% of the time whatever the wording."""
    return "cooperate" if random.Random(str(request.to_json())).random() < 0.6 else "defect"


def _swayed(request: Request, sample: int) -> str:
    """Mostly cooperates, but mostly defects when paraphrase-1 asks "Which action do you pick?"."""
    share = 0.2 if "Which action do you pick?" in str(request.messages[-1].content) else 0.9
    return "cooperate" if random.Random(str(request.to_json())).random() < share else "defect"


def play(output: Path, prompts: list[dict[str, object]]) -> None:
    data = {
        "name": "pv",
        "output": str(output),
        "models": [{"model": m} for m in MODELS],
        "games": ["dilemma"],
        "opponents": ["TitForTat", "AlwaysDefect"],
        "rounds": [6],
        "seeds": list(range(6)),
        "prompts": prompts,
        "retry": {"base_delay": 0},
    }
    register_script("pv-steady", _steady)
    register_script("pv-swayed", _swayed)
    try:
        summary = asyncio.run(Runner(config_from_dict(data, "pv"), show_progress=False).run())
    finally:
        _REGISTERED.pop("pv-steady", None)
        _REGISTERED.pop("pv-swayed", None)
    assert summary.finished == summary.episodes > 0 and not summary.errors


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("prompt-variants")
    play(folder, VARIANTS)
    return folder


def expected(folder: Path) -> pd.DataFrame:
    """Seat 0's score and cooperation per variant and model, from the DataFrames."""
    with stratagem.open(folder) as results:
        episodes = results.episodes[["episode_id", "prompt"]]
        seat0 = results.seats[results.seats["seat"] == 0][["episode_id", "model", "payoff"]]
        rounds = results.rounds[results.rounds["seat"] == 0]
    moves = rounds.assign(coop=(rounds["action"] == "cooperate") & rounds["valid"])
    moves = moves.groupby("episode_id").agg(coop=("coop", "sum"), valid=("valid", "sum"))
    frame = episodes.merge(seat0, on="episode_id").merge(moves, on="episode_id")
    grouped = frame.groupby(["prompt", "model"])
    return pd.DataFrame(
        {
            "score": grouped["payoff"].mean(),
            "cooperation": grouped["coop"].sum() / grouped["valid"].sum(),
            "episodes": grouped.size(),
        }
    )


CELL = re.compile(r"(-?\d+\.\d\d) \[(-?\d+\.\d\d), (-?\d+\.\d\d)\]")


def test_the_two_way_tables_have_an_interval_in_every_cell(played: Path) -> None:
    found = tables(build_report(played).read_text(encoding="utf-8"))
    want = expected(played)
    assert set(want["episodes"]) == {12}
    for metric, title in (("cooperation", "Cooperation"), ("score", "Score")):
        table = found[f"{title} by prompt variant and model"]
        assert table[0] == ["Variant", *MODELS]
        assert [row[0] for row in table[1:]] == ["base", "p1", "table"]
        for row in table[1:]:
            for model, text in zip(MODELS, row[1:], strict=True):
                match = CELL.fullmatch(text)
                assert match is not None, text
                value, low, high = (float(x) for x in match.groups())
                assert f"{want.loc[(row[0], model), metric]:.2f}" == match[1]
                assert low <= value <= high and low < high
    # The interaction: the swayed model's cooperation drops under paraphrase-1, the steady one's
    # does not.
    coop = want["cooperation"]
    assert coop[("base", MODELS[1])] - coop[("p1", MODELS[1])] > 0.4
    assert abs(coop[("base", MODELS[0])] - coop[("p1", MODELS[0])]) < 0.3


def test_each_headline_has_its_spread_beside_it(played: Path) -> None:
    found = tables(build_report(played).read_text(encoding="utf-8"))
    spread = found["Each model's headline number and its spread across prompt variants"]
    assert spread[0] == ["Model", "Metric", "Headline", "Under", "Variants", "Min", "Max",
                         "Range", "SD"]  # fmt: skip
    want = expected(played)
    for row in spread[1:]:
        model, title = row[0], row[1]
        values = [float(want.loc[(v, model), title.lower()]) for v in ("base", "p1", "table")]
        headline = CELL.fullmatch(row[2])
        assert headline is not None and headline[1] == f"{values[0]:.2f}"  # base, not a mean
        assert row[3:] == [
            "base", "3", f"{min(values):.2f}", f"{max(values):.2f}",
            f"{max(values) - min(values):.2f}", f"{statistics.stdev(values):.2f}",
        ]  # fmt: skip
    assert {(r[0], r[1]) for r in spread[1:]} == {
        (m, t) for m in MODELS for t in ("Score", "Cooperation")
    }


def test_cells_and_frames_keep_the_variants_apart(played: Path) -> None:
    with ResultStore(played / STORE_FILE) as store:
        cells = cell_table(store, "pv")
        fast = {t.key for t in episode_tallies(store, "pv")}  # the viewer's count of cells
    assert fast == {c.key for c in cells}
    assert {(c.agent, c.prompt) for c in cells} == {
        ("plain", "base"),
        ("plain [p1]", "p1"),
        ("plain [table]", "table"),
    }
    assert all(c.episodes == 6 for c in cells)  # per model, variant and opponent
    with stratagem.open(played) as results:
        assert results.episodes["prompt"].value_counts().to_dict() == {
            "base": 24,
            "p1": 24,
            "table": 24,
        }


def test_one_variant_has_no_section(tmp_path: Path) -> None:
    play(tmp_path, [{"name": "p1", "templates": "paraphrase-1"}])
    html = build_report(tmp_path).read_text(encoding="utf-8")
    assert "Prompt variants" not in html and "by prompt variant" not in html
