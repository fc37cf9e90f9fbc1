"""The statistics layer (issue 35 item 1) against independent computations: statsmodels' OLS with
cluster-robust covariance, scipy's paired t-test, statsmodels' McNemar, multiple-testing and
power functions, and published worked examples (Agresti's presidential approval table; the
paired Newcombe interval of Fagerland, Lydersen & Laake's Cavo et al. example)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower, TTestPower
from statsmodels.stats.proportion import proportion_confint

from stratagem.analysis.comparisons import (
    BOOTSTRAP,
    CLUSTER_T,
    PAIRED_T,
    Comparison,
    cluster_t,
    compare_paired,
    format_p,
)
from stratagem.analysis.mcnemar import mcnemar, mcnemar_counts, newcombe_paired, wilson
from stratagem.analysis.multiple import adjust, adjust_comparisons, statement
from stratagem.analysis.paired import paired_difference
from stratagem.analysis.power import (
    detectable_effect,
    episodes_for,
    minimum_detectable,
    normal_detectable_effect,
    power_of,
)
from stratagem.errors import StratagemError

# -- cluster-robust paired difference ----------------------------------------------------------


def _statsmodels_cluster(
    d: np.ndarray, groups: np.ndarray, level: float
) -> tuple[float, float, float, float, float]:
    fit = sm.OLS(d, np.ones(len(d))).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    low, high = fit.conf_int(1 - level)[0]
    return float(fit.params[0]), float(fit.bse[0]), float(low), float(high), float(fit.pvalues[0])


@pytest.mark.parametrize("seed", range(6))
def test_the_cluster_robust_t_is_statsmodels_ols_with_clustered_errors(seed: int) -> None:
    rng = np.random.default_rng(seed)
    g = int(rng.integers(3, 12))
    sizes = rng.integers(1, 6, size=g)  # unbalanced clusters
    groups = np.repeat(np.arange(g), sizes)
    shared = rng.normal(0, 0.5, size=g)[groups]  # what a cluster's pairs have in common
    d = 0.2 + shared + rng.normal(0, 1, size=groups.size)
    level = [0.95, 0.9, 0.99][seed % 3]
    labels = [f"seed-{k}" for k in groups]
    got = cluster_t(d.tolist(), labels, paired_by="opponent, repetition", cluster_by="seed",
                    level=level)  # fmt: skip
    mean, se, low, high, p = _statsmodels_cluster(d, groups, level)
    assert got.method == CLUSTER_T and got.clusters == g and got.df == g - 1
    assert got.n == groups.size and got.cluster_by == "seed"
    assert got.estimate == pytest.approx(mean, rel=1e-12)
    assert got.se == pytest.approx(se, rel=1e-10)
    assert (got.ci_low, got.ci_high) == (
        pytest.approx(low, rel=1e-9),
        pytest.approx(high, rel=1e-9),
    )
    assert got.p == pytest.approx(p, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_one_pair_per_cluster_is_scipys_paired_t(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 30))
    a = rng.normal(0.5, 0.2, size=n)
    b = a + rng.normal(0.05, 0.1, size=n)
    got = compare_paired(dict(enumerate(a)), dict(enumerate(b)), paired_by="seed")
    ref = stats.ttest_rel(b, a)
    ci = ref.confidence_interval(0.95)
    assert got.method == PAIRED_T and got.clusters == n and got.cluster_by is None
    assert got.p == pytest.approx(ref.pvalue, rel=1e-9)
    assert got.ci_low == pytest.approx(ci.low, rel=1e-9)
    assert got.ci_high == pytest.approx(ci.high, rel=1e-9)
    assert got.mean_a == pytest.approx(a.mean()) and got.mean_b == pytest.approx(b.mean())


def test_pairs_are_matched_by_key_and_the_unpaired_counted() -> None:
    a = {("s0", 0): 1.0, ("s0", 1): 0.5, ("s1", 0): 0.25, ("s2", 0): 0.0}
    b = {("s1", 0): 0.75, ("s0", 1): 1.0, ("s0", 0): 1.0, ("s9", 0): 0.1, ("s8", 0): 0.2}
    got = compare_paired(
        a, b, paired_by="seed, repetition", clusters={k: k[0] for k in a}, cluster_by="seed"
    )
    # pairs: (s0,0): 0, (s0,1): 0.5, (s1,0): 0.5 in clusters s0 (2 pairs) and s1 (1 pair)
    ref = _statsmodels_cluster(np.array([0.0, 0.5, 0.5]), np.array([0, 0, 1]), 0.95)
    assert (got.n, got.clusters, got.unpaired_a, got.unpaired_b) == (3, 2, 1, 2)
    assert got.estimate == pytest.approx(1 / 3) and got.se == pytest.approx(ref[1])
    assert got.paired_by == "seed, repetition"


def test_the_bootstrap_is_the_existing_paired_bootstrap_named() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.random(12), rng.random(12)
    got = compare_paired(dict(enumerate(a)), dict(enumerate(b)), paired_by="seed",
                         method="bootstrap", n_boot=500, seed=3)  # fmt: skip
    ref = paired_difference(a.tolist(), b.tolist(), n_boot=500, seed=3)
    assert got.method == BOOTSTRAP and got.p is None
    assert (got.estimate, got.ci_low, got.ci_high) == (ref.mean_diff, ref.ci_low, ref.ci_high)
    with pytest.raises(StratagemError, match="resamples pairs, not clusters"):
        compare_paired({0: 1.0}, {0: 2.0}, paired_by="seed", clusters={0: 0}, method="bootstrap")


def test_edge_cases_say_what_cannot_be_claimed() -> None:
    same = cluster_t([0.25, 0.25, 0.25], paired_by="seed")
    assert (same.ci_low, same.ci_high, same.p, same.se) == (0.25, 0.25, None, 0.0)
    one_cluster = cluster_t([0.1, 0.3], ["s0", "s0"], paired_by="repetition", cluster_by="seed")
    assert one_cluster.clusters == 1 and one_cluster.ci_low is None and one_cluster.p is None
    assert not one_cluster.significant
    single = cluster_t([0.4], paired_by="seed")
    assert single.n == 1 and single.ci_low is None and single.estimate == 0.4
    with pytest.raises(StratagemError, match="no pairs: cell A and cell B share no pairing key"):
        compare_paired({1: 0.0}, {2: 0.0}, paired_by="seed")
    with pytest.raises(StratagemError, match="pair 2 has no cluster"):
        compare_paired({1: 0.0, 2: 1.0}, {1: 0.0, 2: 0.5}, paired_by="seed", clusters={1: "x"})
    with pytest.raises(StratagemError, match="is not a finite number"):
        compare_paired({1: math.nan}, {1: 0.0}, paired_by="seed")
    with pytest.raises(StratagemError, match="level must be strictly between 0 and 1"):
        cluster_t([0.0, 1.0], paired_by="seed", level=1.0)


def test_a_comparison_prints_compactly() -> None:
    c = Comparison(0.12, 0.03, 0.21, 0.95, 0.008, 40, 10, "seed, repetition", CLUSTER_T, "seed")
    assert c.adjusted(0.0301, "Holm").text() == (
        "+0.12 [0.03, 0.21], p=0.008 (Holm 0.03), n=40 pairs in 10 seeds"
    )
    assert str(Comparison(-0.5, None, None, 0.95, None, 1, 1, "seed", PAIRED_T)) == (
        "-0.50, n=1 pair"
    )
    assert (format_p(0.0004), format_p(0.41), format_p(1.0)) == ("p<0.001", "p=0.41", "p=1")


# -- McNemar ------------------------------------------------------------------------------------


def test_agrestis_presidential_approval_table() -> None:
    """Agresti (2013), Categorical Data Analysis 3rd ed., §11.1: 1,600 people asked twice
    (approve/approve 794, approve/disapprove 150, disapprove/approve 86, 570); McNemar's
    z² = (86 - 150)² / (86 + 150) = 17.36, the approval fell from 0.59 to 0.55, and the 95%
    interval of the change is (-0.06, -0.02)."""
    got = mcnemar_counts(794, 150, 86, 570, correction=False)
    assert not got.exact and got.statistic == pytest.approx(17.36, abs=0.005)
    assert got.p < 0.001 and got.n == 1600
    d = got.difference
    assert (d.mean_a, d.mean_b, d.estimate) == pytest.approx((0.59, 0.55, -0.04))
    assert (round(d.ci_low, 2), round(d.ci_high, 2)) == (-0.06, -0.02)
    assert got.odds_ratio == pytest.approx(86 / 150)


def test_newcombes_paired_interval_on_the_published_example() -> None:
    """Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables, ch. 8, on
    Cavo et al. (2012): the table (59, 6; 16, 80) gives the Newcombe square-and-add estimate
    -0.0621, 95% CI -0.1186 to -0.0046 for p_1 - p_2; ours is p_B - p_A, its mirror."""
    low, high = newcombe_paired(59, 6, 16, 80, 0.95)
    assert (round(low, 4), round(high, 4)) == (0.0046, 0.1186)
    got = mcnemar_counts(59, 6, 16, 80)
    assert got.difference.estimate == pytest.approx(10 / 161)
    assert round(got.difference.estimate, 4) == 0.0621


@pytest.mark.parametrize(("s", "t"), [(3, 9), (0, 7), (11, 12), (30, 12), (40, 55), (1, 0)])
def test_mcnemar_is_statsmodels(s: int, t: int) -> None:
    table = [[20, s], [t, 15]]
    got = mcnemar_counts(20, s, t, 15)
    ref = sm_mcnemar(table, exact=s + t < 25, correction=True)
    assert got.exact == (s + t < 25)
    assert got.p == pytest.approx(ref.pvalue, rel=1e-12)
    assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
    for exact in (True, False):
        forced = mcnemar_counts(20, s, t, 15, exact=exact)
        assert forced.p == pytest.approx(sm_mcnemar(table, exact=exact).pvalue, rel=1e-12)


def test_mcnemar_without_discordant_pairs_or_with_equal_ones() -> None:
    none = mcnemar_counts(5, 0, 0, 5)
    assert (none.p, none.odds_ratio, none.difference.estimate) == (1.0, None, 0.0)
    # Edwards' correction floored at 0: |s - t| - 1 < 0 is no evidence, p = 1 (statsmodels
    # squares the negative gap instead).
    equal = mcnemar_counts(1, 20, 20, 1, exact=False)
    assert (equal.statistic, equal.p) == (0.0, 1.0)
    assert mcnemar_counts(3, 0, 4, 3).odds_ratio == math.inf


def test_mcnemar_from_paired_outcomes() -> None:
    rng = np.random.default_rng(5)
    a = {k: bool(x) for k, x in enumerate(rng.random(60) < 0.4)}
    b = {k: bool(x) for k, x in enumerate(rng.random(60) < 0.6)}
    b[99] = True  # unpaired
    got = mcnemar(a, b, paired_by="seed")
    r = sum(a[k] and b[k] for k in a)
    s = sum(a[k] and not b[k] for k in a)
    t = sum(not a[k] and b[k] for k in a)
    assert (got.both, got.only_a, got.only_b, got.n) == (r, s, t, 60)
    assert got.p == pytest.approx(sm_mcnemar([[r, s], [t, 60 - r - s - t]],
                                             exact=s + t < 25).pvalue)  # fmt: skip
    assert got.difference.unpaired_b == 1 and got.difference.paired_by == "seed"
    with pytest.raises(StratagemError, match="is not a yes/no outcome"):
        mcnemar({0: 0.5}, {0: True}, paired_by="seed")


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (23, 60), (60, 60)])
def test_wilson_is_statsmodels(k: int, n: int) -> None:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert wilson(k, n, 0.95) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


# -- multiple comparisons -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("method", "name"), [("holm", "holm"), ("bh", "fdr_bh")])
def test_adjusted_p_values_are_statsmodels(seed: int, method: str, name: str) -> None:
    rng = np.random.default_rng(seed)
    p = rng.random(int(rng.integers(2, 15))) ** 3
    p[0] = p[-1]  # a tie
    got = adjust(p.tolist(), method)  # type: ignore[arg-type]
    ref = multipletests(p, method=name)[1]
    assert got == [pytest.approx(x, rel=1e-12) for x in ref]


def test_missing_p_values_stay_missing_and_out_of_the_count() -> None:
    got = adjust([0.01, None, 0.04, 0.03])
    ref = multipletests([0.01, 0.04, 0.03], method="holm")[1]
    assert got[1] is None and [got[0], got[2], got[3]] == pytest.approx(ref)
    assert adjust([None, None]) == [None, None]
    with pytest.raises(StratagemError, match="p-values must be numbers from 0 to 1"):
        adjust([1.5])
    with pytest.raises(StratagemError, match="adjustment must be one of holm, bh"):
        adjust([0.5], "bonferroni")  # type: ignore[arg-type]


def test_a_table_says_how_it_was_adjusted() -> None:
    base = Comparison(0.1, 0.0, 0.2, 0.95, 0.02, 10, 10, "seed", PAIRED_T)
    table = [base, base, Comparison(0.1, None, None, 0.95, None, 10, 10, "seed", BOOTSTRAP)]
    adjusted, sentence = adjust_comparisons(table)
    assert sentence == "p-values Holm-adjusted (family-wise error rate) across 2 comparisons."
    assert [c.p_adjusted for c in adjusted] == [0.04, 0.04, None]
    assert adjusted[0].text() == "+0.10 [0.00, 0.20], p=0.02 (Holm 0.04), n=10 pairs"
    alone, said = adjust_comparisons([base])
    assert alone == [base] and said == ""
    assert statement("bh", 6) == (
        "p-values Benjamini–Hochberg-adjusted (false discovery rate) across 6 comparisons."
    )


# -- power and the minimum detectable effect --------------------------------------------------


@pytest.mark.parametrize(
    ("n", "alpha", "power"),
    [(n, 0.05, 0.8) for n in (2, 3, 5, 12, 40, 250)]
    + [(n, 0.01, 0.9) for n in (5, 12, 40)]
    + [(n, 0.1, 0.5) for n in (2, 3, 12)],
)
def test_the_detectable_effect_is_statsmodels(n: int, alpha: float, power: float) -> None:
    paired = TTestPower().solve_power(nobs=n, alpha=alpha, power=power)
    two = TTestIndPower().solve_power(nobs1=n, alpha=alpha, power=power, ratio=1.0)
    assert detectable_effect(n, alpha=alpha, power=power) == pytest.approx(paired, rel=1e-5)
    assert detectable_effect(n, alpha=alpha, power=power, design="two-sample") == pytest.approx(
        two, rel=1e-5
    )


def test_a_root_statsmodels_solver_misses_is_checked_by_its_power_function() -> None:
    """At n = 2, α = 0.01, power 0.9 statsmodels' solve_power stops at d = 10, whose power (by
    its own `power`) is 0.18; the root is near 74."""
    d = detectable_effect(2, alpha=0.01, power=0.9)
    assert TTestPower().power(d, 2, 0.01) == pytest.approx(0.9, abs=1e-9)
    assert TTestPower().power(10.0, 2, 0.01) < 0.2


@pytest.mark.parametrize(("effect", "n"), [(0.2, 10), (0.5, 30), (1.3, 4), (0.05, 3000)])
def test_power_is_statsmodels(effect: float, n: int) -> None:
    assert power_of(effect, n) == pytest.approx(TTestPower().power(effect, n, 0.05), rel=1e-9)
    assert power_of(effect, n, design="two-sample") == pytest.approx(
        TTestIndPower().power(effect, n, 0.05, ratio=1.0), rel=1e-9
    )


@pytest.mark.parametrize(("delta", "sd"), [(0.1, 0.7071), (0.3, 0.5), (2.0, 10.0), (0.9, 0.4)])
@pytest.mark.parametrize("design", ["paired", "two-sample"])
def test_episodes_for_a_difference(delta: float, sd: float, design: str) -> None:
    solver = TTestPower() if design == "paired" else TTestIndPower()
    continuous = solver.solve_power(effect_size=delta / sd, alpha=0.05, power=0.8)
    got = episodes_for(delta, sd, "stated", design=design)  # type: ignore[arg-type]
    assert got.n == max(2, math.ceil(continuous))
    assert power_of(delta / sd, got.n, design=design) >= 0.8  # type: ignore[arg-type]
    if got.n > 2:
        assert power_of(delta / sd, got.n - 1, design=design) < 0.8  # type: ignore[arg-type]


def test_the_normal_approximation_is_the_formula_and_close_for_large_n() -> None:
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert normal_detectable_effect(400) == pytest.approx(z / 20)
    assert normal_detectable_effect(400, design="two-sample") == pytest.approx(
        z * math.sqrt(2 / 400)
    )
    assert normal_detectable_effect(1000) == pytest.approx(detectable_effect(1000), rel=0.002)
    assert normal_detectable_effect(5) < detectable_effect(5)  # optimistic for small n


def test_minimum_detectable_names_its_assumption() -> None:
    got = minimum_detectable(20, 0.5, "from pilot: 12 pairs")
    d = TTestPower().solve_power(nobs=20, alpha=0.05, power=0.8)
    assert got.mde == pytest.approx(0.5 * d, rel=1e-5)
    assert got.text() == f"MDE {0.5 * d:.2f} (n = 20 pairs, sd 0.50 from pilot: 12 pairs)"
    assert minimum_detectable(1, 0.5, "x").mde is None
    assert episodes_for(0.1, 0.0).n == 2
    assert episodes_for(1e-6, 1.0).n is None  # past 10^9 pairs
    with pytest.raises(StratagemError, match="the difference to detect must be a number > 0"):
        episodes_for(0.0, 1.0)
    with pytest.raises(StratagemError, match="power must be above alpha"):
        detectable_effect(10, power=0.01)


def test_clusters_whose_differences_cancel_give_no_p_value() -> None:
    # Each cluster's deviations from the mean cancel: the CR1 standard error is 0, which floating
    # point leaves at ~1e-17; a p-value from it claimed evidence (p<0.001) where there is none.
    result = cluster_t(
        [0.1, 0.7, 0.3, 0.5], ["a", "a", "b", "b"], paired_by="seed", cluster_by="seed"
    )
    assert result.p is None and result.se == 0.0
    assert result.ci_low == result.ci_high == pytest.approx(0.4)
