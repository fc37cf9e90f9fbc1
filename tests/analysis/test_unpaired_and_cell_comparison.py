"""Welch's unpaired t against scipy, the choice of test by `compare_cells`, and the comparison
table: adjusted p-values beside each number, the adjustment stated under the table."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from stratagem.analysis.cell_comparison import compare_cells
from stratagem.analysis.comparison_table import (
    ComparedRow,
    adjust_rows,
    compared_row,
    comparison_table,
)
from stratagem.analysis.comparisons import CLUSTER_T, PAIRED_T, compare_paired, format_p
from stratagem.analysis.unpaired import WELCH, welch
from stratagem.errors import StratagemError

A = [0.2, 0.5, 0.4, 0.9, 0.1, 0.3]
B = [0.6, 0.7, 0.2, 1.0, 0.8, 0.9, 0.75, 0.4]


def test_welch_is_scipys_unequal_variances_t() -> None:
    w = welch(A, B)
    ref = stats.ttest_ind(B, A, equal_var=False)
    c = w.comparison
    assert w.statistic == pytest.approx(ref.statistic)
    assert c.p == pytest.approx(ref.pvalue)
    assert w.df == pytest.approx(ref.df)
    low, high = ref.confidence_interval(0.95)
    assert (c.ci_low, c.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert c.estimate == pytest.approx(np.mean(B) - np.mean(A))
    assert (c.mean_a, c.mean_b) == (pytest.approx(np.mean(A)), pytest.approx(np.mean(B)))
    assert (c.unpaired_a, c.unpaired_b, c.n, c.method) == (6, 8, 14, WELCH)
    low90, high90 = ref.confidence_interval(0.9)
    c90 = welch(A, B, level=0.9).comparison
    assert (c90.ci_low, c90.ci_high) == (pytest.approx(low90), pytest.approx(high90))


def test_welch_edges() -> None:
    constant = welch([1.0, 1.0], [3.0, 3.0, 3.0]).comparison
    assert (constant.estimate, constant.ci_low, constant.ci_high, constant.p) == (2, 2, 2, None)
    with pytest.raises(StratagemError, match="at least 2 values in cell A"):
        welch([1.0], B)
    with pytest.raises(StratagemError, match="not a finite number"):
        welch(A, [1.0, float("nan")])


def test_cells_without_a_shared_key_fall_back_to_welch() -> None:
    c = compare_cells(dict(enumerate(A)), {f"b{i}": v for i, v in enumerate(B)}, paired_by="seed")
    assert c.method == WELCH
    assert c.p == pytest.approx(stats.ttest_ind(B, A, equal_var=False).pvalue)
    with pytest.raises(StratagemError, match="too few episodes"):
        compare_cells({1: 0.5}, {2: 0.4, 3: 0.1}, paired_by="seed")


def test_paired_values_take_the_paired_t() -> None:
    a = dict(enumerate(A))
    b = {k: B[k] for k in range(len(A))}
    c = compare_cells(a, b, paired_by="seed")
    assert c.method == PAIRED_T
    assert c.p == pytest.approx(stats.ttest_rel(B[: len(A)], A).pvalue)


def test_paired_yes_no_outcomes_take_mcnemar() -> None:
    rng = np.random.default_rng(3)
    a = {k: float(x) for k, x in enumerate(rng.integers(0, 2, 30))}
    b = {k: float(x) for k, x in enumerate(rng.integers(0, 2, 30))}
    c = compare_cells(a, b, paired_by="seed")
    table = [[0, 0], [0, 0]]
    for k in a:
        table[1 - int(a[k])][1 - int(b[k])] += 1
    assert c.method.startswith("McNemar exact")
    assert c.p == pytest.approx(sm_mcnemar(table, exact=True).pvalue)
    assert c.estimate == pytest.approx(np.mean(list(b.values())) - np.mean(list(a.values())))


def test_clustered_pairs_take_the_cluster_robust_t() -> None:
    rng = np.random.default_rng(5)
    a = {k: float(rng.integers(0, 2)) for k in range(24)}
    b = {k: float(rng.integers(0, 2)) for k in range(24)}
    clusters = {k: k // 3 for k in range(24)}
    c = compare_cells(a, b, paired_by="seat", clusters=clusters, cluster_by="setting")
    d = np.array([b[k] - a[k] for k in range(24)])
    fit = sm.OLS(d, np.ones(24)).fit(
        cov_type="cluster", cov_kwds={"groups": np.array([k // 3 for k in range(24)])}, use_t=True
    )
    assert c.method == CLUSTER_T and (c.n, c.clusters) == (24, 8)
    assert c.p == pytest.approx(float(fit.pvalues[0]))
    low, high = fit.conf_int()[0]
    assert (c.ci_low, c.ci_high) == (pytest.approx(low), pytest.approx(high))
    singletons = compare_cells(a, b, paired_by="seat", clusters={k: k for k in a})
    assert singletons.method.startswith("McNemar")


def test_the_table_adjusts_across_its_rows_and_says_so() -> None:
    rng = np.random.default_rng(11)
    rows = []
    for i in range(4):
        a = {k: float(x) for k, x in enumerate(rng.normal(0, 1, 12))}
        b = {k: float(x) for k, x in enumerate(rng.normal(0.4 * i, 1, 12))}
        rows.append(ComparedRow((f"row {i}",), compare_paired(a, b, paired_by="seed")))
    rows.append(ComparedRow(("none",), None, "no pair"))
    adjusted, sentence = adjust_rows(rows)
    raw = [r.comparison.p for r in rows if r.comparison is not None]
    expected = multipletests(raw, method="holm")[1]
    got = [r.comparison.p_adjusted for r in adjusted if r.comparison is not None]
    assert got == pytest.approx(list(expected))
    assert sentence == "p-values Holm-adjusted (family-wise error rate) across 4 comparisons."
    table = comparison_table("T", "caption", ["What"], rows)
    assert table.columns[-7:] == (
        "Mean A",
        "Mean B",
        "B − A [95% CI]",
        "p",
        "Holm p",
        "n",
        "Test",
    )
    assert table.note == sentence
    first = [c.text for c in table.rows[0]]
    c0 = rows[0].comparison
    assert c0 is not None and c0.ci_low is not None and c0.ci_high is not None
    assert first[3] == f"{c0.estimate:+.2f} [{c0.ci_low:.2f}, {c0.ci_high:.2f}]"
    assert first[4] == format_p(raw[0], prefix="")
    assert first[5] == format_p(float(expected[0]), prefix="")
    assert first[6] == "12 pairs"
    assert [c.text for c in table.rows[-1]][6] == "no pair"


def test_one_test_is_not_adjusted() -> None:
    c = compare_paired({1: 0.0, 2: 1.0, 3: 0.5}, {1: 1.0, 2: 1.0, 3: 0.9}, paired_by="seed")
    table = comparison_table("T", "", ["What"], [ComparedRow(("x",), c)])
    assert table.rows[0][5].text == "–"
    assert table.note == "One p-value in the table: nothing to adjust."


def test_a_cluster_robust_error_that_is_zero_up_to_rounding_gives_no_p_value() -> None:
    """Three seats per setting, each setting's differences (-1, 0, 0): the CR1 variance is 0
    though the differences vary; rounding leaves about 1e-17, which must not read p < 0.001."""
    a = {(s, seat): 1.0 if seat == 0 else 0.0 for s in range(3) for seat in range(3)}
    b = dict.fromkeys(a, 0.0)
    clusters = {k: k[0] for k in a}
    raw = compare_paired(a, b, paired_by="seat", clusters=clusters, cluster_by="setting")
    c = compare_cells(a, b, paired_by="seat", clusters=clusters, cluster_by="setting")
    assert raw.se is not None and raw.se < 1e-12  # the residue the guard is for
    assert c.estimate == pytest.approx(-1 / 3)
    assert (c.p, c.se) == (None, 0.0) and c.ci_low == c.ci_high == c.estimate


def test_a_compared_row_says_why_a_comparison_was_refused() -> None:
    a, b = {0: 1.0, 1: 2.0, 2: 4.0}, {0: 2.0, 1: 2.5, 2: 5.0}
    paired = compared_row(("a",), lambda: compare_paired(a, b, paired_by="seed"))
    assert paired.comparison is not None and paired.reason == ""
    refused = compared_row(("b",), lambda: compare_cells({1: 1.0}, {2: 2.0}, paired_by="seed"))
    assert refused.comparison is None and refused.reason.startswith("not compared: ")
    assert refused.labels == ("b",)
