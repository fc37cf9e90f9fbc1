"""The thesis' comparisons table (beyond seed-001), on its own Appendix A: each configuration's
cooperation rate against the plain agent's and the debate agent's against the tool agent's,
paired by model, opponent, rounds and game, checked against scipy's paired t and statsmodels'
Holm computed here from the CSV; the thesis' own tables stay where and as they were."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from stratagem.analysis.comparison_table import ComparedRow, adjust_rows
from stratagem.analysis.comparisons import PAIRED_T, format_p
from stratagem.analysis.episodes import load_episodes
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import Heading, TableView
from stratagem.experiments.store import ResultStore
from stratagem.studies.thesis.importer import DEFAULT_EXPERIMENT, import_thesis_csv
from stratagem.studies.thesis.report_comparisons import comparison_rows
from stratagem.studies.thesis.report_data import ThesisData
from stratagem.studies.thesis.report_tables import tables_section
from stratagem.studies.thesis.tables import thesis_tables

SETTING = ("Model", "OppStr", "NR", "Game")


@pytest.fixture(scope="module")
def csv_rows(appendix_a: Path) -> list[dict[str, str]]:
    with appendix_a.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def data(appendix_a: Path) -> Iterator[ThesisData]:
    with ResultStore() as db:
        import_thesis_csv(db, appendix_a)
        experiment = next(e for e in db.experiments() if e.id == DEFAULT_EXPERIMENT)
        report = ReportData(db, experiment, load_episodes(db, experiment.id), {})
        yield ThesisData.with_dataset(report, report.episodes)


@pytest.fixture(scope="module")
def found(data: ThesisData) -> list[ComparedRow]:
    return comparison_rows(data.dataset)


def _cr(rows: list[dict[str, str]], arch: str, att: str) -> dict[tuple[str, ...], float]:
    return {
        tuple(r[c] for c in SETTING): float(r["CR"])
        for r in rows
        if r["Arch"] == arch and r["Att"] == att
    }


EXPECTED = [
    ("Tool-based (compute)", "Plain LLM", "Tool", "compute", "Plain_LLM", "NA"),
    ("Tool-based (cooperate)", "Plain LLM", "Tool", "cooperate", "Plain_LLM", "NA"),
    ("Tool-based (defect)", "Plain LLM", "Tool", "defect", "Plain_LLM", "NA"),
    ("Debate-based (compute)", "Plain LLM", "Assistant", "compute", "Plain_LLM", "NA"),
    ("Debate-based (cooperate)", "Plain LLM", "Assistant", "cooperate", "Plain_LLM", "NA"),
    ("Debate-based (defect)", "Plain LLM", "Assistant", "defect", "Plain_LLM", "NA"),
    ("Debate-based (compute)", "Tool-based (compute)", "Assistant", "compute", "Tool", "compute"),
    ("Debate-based (cooperate)", "Tool-based (cooperate)", "Assistant", "cooperate", "Tool",
     "cooperate"),
    ("Debate-based (defect)", "Tool-based (defect)", "Assistant", "defect", "Tool", "defect"),
]  # fmt: skip


def test_each_configuration_against_the_plain_agent_and_debate_against_tool(
    found: list[ComparedRow],
) -> None:
    assert [r.labels for r in found] == [e[:2] for e in EXPECTED]


@pytest.mark.parametrize("k", range(len(EXPECTED)))
def test_each_comparison_is_scipys_paired_t(
    found: list[ComparedRow], csv_rows: list[dict[str, str]], k: int
) -> None:
    _, _, arch_b, att_b, arch_a, att_a = EXPECTED[k]
    a, b = _cr(csv_rows, arch_a, att_a), _cr(csv_rows, arch_b, att_b)
    keys = sorted(a)
    assert sorted(b) == keys and len(keys) == 36
    ref = stats.ttest_rel([b[x] for x in keys], [a[x] for x in keys])
    c = found[k].comparison
    assert c is not None and c.method == PAIRED_T and c.n == 36
    assert c.p == pytest.approx(ref.pvalue)
    low, high = ref.confidence_interval(0.95)
    assert (c.ci_low, c.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert c.mean_b - c.mean_a == pytest.approx(c.estimate)  # type: ignore[operator]


def test_the_p_values_are_holm_adjusted_across_the_table(found: list[ComparedRow]) -> None:
    adjusted, sentence = adjust_rows(found)
    raw = [r.comparison.p for r in found if r.comparison is not None]
    assert len(raw) == 9
    expected = multipletests(raw, method="holm")[1]
    assert [r.comparison.p_adjusted for r in adjusted if r.comparison] == pytest.approx(
        list(expected)
    )
    assert sentence == "p-values Holm-adjusted (family-wise error rate) across 9 comparisons."


def test_the_section_puts_the_table_after_the_thesis_tables(
    data: ThesisData, found: list[ComparedRow]
) -> None:
    section = tables_section(data)
    titles = [b.title for b in section.blocks if isinstance(b, TableView)]
    own = [t.title.partition(": ")[2] for t in thesis_tables(data.dataset).values() if t.number]
    at = titles.index("Cooperation rate compared")
    assert all(titles.index(t) < at for t in own) and titles[at + 1].startswith("Per-game data")
    assert any(isinstance(b, Heading) and b.text == "Comparisons" for b in section.blocks)
    table = next(b for b in section.blocks if isinstance(b, TableView) and b.title == titles[at])
    adjusted, sentence = adjust_rows(found)
    assert table.note == sentence
    for line, r in zip(table.rows, adjusted, strict=True):
        c = r.comparison
        assert c is not None and c.p is not None and c.p_adjusted is not None
        assert line[0].text == r.labels[0] and line[1].text == r.labels[1]
        assert line[5].text == format_p(c.p, prefix="")
        assert line[6].text == format_p(c.p_adjusted, prefix="")
