"""How the spread of paired differences splits between seeds and within them, so that a plan's
power matches the cluster-robust test its comparison will get.

Where the seeds of a comparison each hold several pairs, the analysis tests the mean difference
over clusters (`analysis.comparisons`: CR1 t, G - 1 degrees of freedom). With m pairs in each of
G clusters that statistic is exactly the one-sample t of the G cluster means: CR1's factor
G/(G-1) makes V(d̄) = s_c² / G, s_c the sample standard deviation of the cluster means. So its
power is the paired t's (`analysis.power`) with n = G and σ = σ_c, the standard deviation of one
cluster's mean difference.

**Model.** One-way random effects, d_gi = μ + b_g + w_gi with Var b_g = σ_b² (between seeds) and
Var w_gi = σ_w² (within a seed); σ² = σ_b² + σ_w² is one pair's variance and ρ = σ_b² / σ² the
intra-cluster correlation. With G clusters of sizes m_g (n = Σ m_g pairs), d̄ = Σ d_gi / n has
Var(d̄) = (σ_b² Σ m_g² + σ_w² n) / n², so the σ_c that gives the t over G clusters its
noncentrality λ = δ √G / σ_c is

    σ_c² = G · Var(d̄) = σ² · (1 + (m_w - 1) ρ) / m̄,     m̄ = n / G,  m_w = Σ m_g² / n

that is σ_b² + σ_w² / m for equal sizes m. 1 + (m - 1)ρ is the design effect (Kish 1965,
Survey Sampling, §5.4; Donner & Klar 2000, Design and Analysis of Cluster Randomization Trials
in Health Research, §5.2), and m_w = m̄ (1 + cv²) its form for unequal sizes (Eldridge, Ashby &
Kerry 2006, Int. J. Epidemiol. 35:1292-1300). With unequal sizes the t over clusters is an
approximation; with equal ones it is exact for normal differences.

**From a pilot.** The unbalanced one-way ANOVA estimators (Searle, Casella & McCulloch 1992,
Variance Components, §3.6), over G clusters of k_g pilot pairs (N in all):

    MSW = Σ_g Σ_i (d_gi - d̄_g)² / (N - G)       MSB = Σ_g k_g (d̄_g - d̄)² / (G - 1)
    k_0 = (N - Σ_g k_g² / N) / (G - 1)
    σ_w² = MSW                                  σ_b² = max(0, (MSB - MSW) / k_0)

They need at least 2 clusters and one with several pairs. For a balanced pilot whose clusters
have the planned size m, σ_b² + σ_w² / m = MSB / m = s_c²: the variance of the pilot's cluster
mean differences itself (unless σ_b² was truncated at 0).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from stratagem.errors import StratagemError


@dataclass(frozen=True)
class Spread:
    """σ_b² and σ_w² of paired differences, with the degrees of freedom they rest on (0 for
    an assumed split)."""

    between: float
    within: float
    df_between: int = 0
    df_within: int = 0

    @property
    def total(self) -> float:
        """σ²: one pair's variance."""
        return self.between + self.within

    @property
    def icc(self) -> float:
        """ρ = σ_b² / σ² (0 when there is no spread at all)."""
        return self.between / self.total if self.total > 0 else 0.0

    def cluster_sd(self, sizes: Sequence[int]) -> float:
        """σ_c for clusters of `sizes` pairs (module docstring)."""
        n, g = sum(sizes), len(sizes)
        if g == 0 or min(sizes) < 1:
            raise StratagemError(f"cluster sizes must be whole numbers >= 1, got {list(sizes)}")
        squares = sum(m * m for m in sizes)
        return math.sqrt(g * (self.between * squares + self.within * n) / (n * n))


def assumed(sd: float, icc: float) -> Spread:
    """The split of a pair's standard deviation `sd` under an intra-cluster correlation."""
    check_icc(icc)
    return Spread(icc * sd * sd, (1 - icc) * sd * sd)


def check_icc(icc: float) -> None:
    if not 0 <= icc <= 1:
        raise StratagemError(f"the intra-cluster correlation must be in [0, 1], got {icc:g}")


def design_effect(sizes: Sequence[int], icc: float) -> float:
    """1 + (m_w - 1)ρ, m_w = Σ m_g² / n (module docstring): how many times Var(d̄) exceeds
    that of n independent pairs."""
    n = sum(sizes)
    return 1 + (sum(m * m for m in sizes) / n - 1) * icc


def components(clusters: Sequence[Sequence[float]]) -> Spread | None:
    """σ_b² and σ_w² of pilot differences grouped by cluster (module docstring); None without
    2 clusters and one of several pairs."""
    groups = [list(map(float, c)) for c in clusters if c]
    g, n = len(groups), sum(len(c) for c in groups)
    if g < 2 or n <= g:
        return None
    grand = sum(map(sum, groups)) / n
    means = [statistics.fmean(c) for c in groups]
    ssw = sum((x - m) ** 2 for c, m in zip(groups, means, strict=True) for x in c)
    ssb = sum(len(c) * (m - grand) ** 2 for c, m in zip(groups, means, strict=True))
    msw, msb = ssw / (n - g), ssb / (g - 1)
    k0 = (n - sum(len(c) ** 2 for c in groups) / n) / (g - 1)
    return Spread(max(0.0, (msb - msw) / k0), msw, g - 1, n - g)


def pooled(spreads: Sequence[Spread]) -> Spread | None:
    """The components of several pilots, each weighted by its degrees of freedom; None when
    none carries any."""
    db = sum(s.df_between for s in spreads)
    dw = sum(s.df_within for s in spreads)
    if not db or not dw:
        return None
    between = sum(s.df_between * s.between for s in spreads) / db
    within = sum(s.df_within * s.within for s in spreads) / dw
    return Spread(between, within, db, dw)


__all__ = ["Spread", "assumed", "check_icc", "components", "design_effect", "pooled"]
