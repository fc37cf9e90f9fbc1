"""The plan's power where pairs are clustered by seed (issue 35 item 1), against independent
computations: statsmodels' TTestPower on the cluster-level data, statsmodels' ANOVA table for the
variance components, and a seeded simulation that runs the analysis's own cluster-robust t on
data drawn with the planned effect and checks that it rejects 80% of the time."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.power import TTestPower

from stratagem.analysis.cluster_spread import (
    Spread,
    assumed,
    components,
    design_effect,
    pooled,
)
from stratagem.analysis.comparisons import cluster_t
from stratagem.analysis.power import minimum_detectable
from stratagem.errors import StratagemError


def _draw(
    rng: np.random.Generator, sizes: list[int], between: float, within: float
) -> list[list[float]]:
    return [
        list(rng.normal(rng.normal(0, math.sqrt(between)), math.sqrt(within), m)) for m in sizes
    ]


def test_a_balanced_pilot_gives_the_variance_of_its_cluster_means() -> None:
    """σ_b² + σ_w²/m = MSB/m: the MDE is statsmodels' one-sample power on the G seed means."""
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(40):
        seeds = _draw(rng, [4] * 6, 0.05, 0.04)
        spread = components(seeds)
        assert spread is not None
        means = [float(np.mean(s)) for s in seeds]
        if spread.between == 0:  # cut at 0: then σ_c² = MSW / m instead
            continue
        sd_c = float(np.std(means, ddof=1))
        assert spread.cluster_sd([4] * 6) == pytest.approx(sd_c, rel=1e-12)
        got = minimum_detectable(6, spread.cluster_sd([4] * 6), "pilot")
        assert got.mde == pytest.approx(
            TTestPower().solve_power(nobs=6, alpha=0.05, power=0.8) * sd_c, 1e-5
        )
        checked += 1
    assert checked > 20


def test_unbalanced_components_are_the_anova_tables() -> None:
    """MSB and MSW from statsmodels' one-way ANOVA; σ_b² = (MSB - MSW) / k_0 with
    k_0 = (N - Σ k_g² / N) / (G - 1) (Searle, Casella & McCulloch 1992, §3.6)."""
    rng = np.random.default_rng(11)
    sizes = [1, 2, 5, 3, 4, 2]
    seeds = _draw(rng, sizes, 0.3, 0.1)
    frame = pd.DataFrame(
        [(f"s{g}", d) for g, values in enumerate(seeds) for d in values], columns=["seed", "d"]
    )
    table = anova_lm(smf.ols("d ~ C(seed)", data=frame).fit())
    msb, msw = table["mean_sq"].iloc[0], table["mean_sq"].iloc[1]
    n = sum(sizes)
    k0 = (n - sum(m * m for m in sizes) / n) / (len(sizes) - 1)
    spread = components(seeds)
    assert spread is not None
    assert spread.within == pytest.approx(msw, rel=1e-10)
    assert spread.between == pytest.approx(max(0.0, (msb - msw) / k0), rel=1e-10)
    assert (spread.df_between, spread.df_within) == (5, n - 6)


def test_without_two_clusters_and_a_repeated_one_nothing_is_measured() -> None:
    assert components([[0.1, 0.2, 0.3]]) is None  # one seed
    assert components([[0.1], [0.2], [0.4]]) is None  # one pair per seed
    assert pooled([Spread(0.1, 0.2)]) is None  # assumed: no degrees of freedom
    both = pooled([Spread(0.2, 0.1, 2, 4), Spread(0.5, 0.4, 1, 2)])
    assert both == Spread((2 * 0.2 + 0.5) / 3, (4 * 0.1 + 2 * 0.4) / 6, 3, 6)


@pytest.mark.parametrize("icc", [0.0, 0.3, 1.0])
def test_the_cluster_sd_is_the_design_effect(icc: float) -> None:
    """σ_c² = σ² · (1 + (m_w - 1)ρ) / m̄ (Donner & Klar 2000; Eldridge et al. 2006 for unequal
    sizes): the same number two ways."""
    for sizes in ([3, 3, 3, 3], [1, 2, 6, 3]):
        n, g = sum(sizes), len(sizes)
        got = assumed(0.4, icc).cluster_sd(sizes) ** 2
        assert got == pytest.approx(0.16 * design_effect(sizes, icc) * g / n, rel=1e-12)
    assert assumed(0.4, 1.0).cluster_sd([5, 5]) == pytest.approx(0.4)  # a seed is one pair
    with pytest.raises(StratagemError, match=r"intra-cluster correlation must be in \[0, 1\]"):
        assumed(0.4, 1.2)


def _power_by_simulation(
    sizes: list[int], between: float, within: float, delta: float, runs: int, seed: int
) -> float:
    """The share of datasets (true mean `delta`) in which the analysis's CR1 t over the
    clusters rejects at 5%."""
    rng = np.random.default_rng(seed)
    labels = [g for g, m in enumerate(sizes) for _ in range(m)]
    rejected = 0
    for _ in range(runs):
        d = np.concatenate([np.array(c) + delta for c in _draw(rng, sizes, between, within)])
        p = cluster_t(d.tolist(), labels, paired_by="seed and repetition", cluster_by="seed").p
        rejected += p is not None and p < 0.05
    return rejected / runs


@pytest.mark.parametrize(
    ("sizes", "tolerance"),
    [([3] * 8, 0.025), ([1, 2, 3, 4, 4, 3, 2, 1, 2, 3], 0.04)],
    ids=["balanced", "unbalanced"],
)
def test_the_planned_mde_is_detected_80_percent_of_the_time(
    sizes: list[int], tolerance: float
) -> None:
    """Drawn with the MDE the plan gives, the cluster-robust t of the analysis rejects about 80%
    of the time (exact for equal sizes, the t over clusters an approximation otherwise); the
    MDE of independent pairs would be detected far less often."""
    between, within = 0.04, 0.06
    spread = Spread(between, within)
    plan = minimum_detectable(len(sizes), spread.cluster_sd(sizes), "true components")
    assert plan.mde is not None
    power = _power_by_simulation(sizes, between, within, plan.mde, 4000, seed=len(sizes))
    assert abs(power - 0.8) < tolerance, power
    naive = minimum_detectable(sum(sizes), math.sqrt(spread.total), "pairs as independent")
    assert naive.mde is not None and naive.mde < plan.mde
    assert _power_by_simulation(sizes, between, within, naive.mde, 2000, seed=1) < 0.65
