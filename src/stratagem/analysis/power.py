"""Power and the minimum detectable effect of a comparison, before the money is spent.

A paired comparison of two cells with n pairs is a one-sample t-test on the n differences, whose
standard deviation is σ_d. For a true difference δ (effect size d = δ / σ_d) the test statistic
follows the noncentral t with ν = n - 1 degrees of freedom and noncentrality λ = d √n, so the
power of the two-sided test at level α is

    power(δ) = P(T'_{ν,λ} > t_{1-α/2,ν}) + P(T'_{ν,λ} < -t_{1-α/2,ν})

(Cohen 1988, Statistical Power Analysis for the Behavioral Sciences, 2nd ed., ch. 2; the
exact form with the noncentral t, as statsmodels' `TTestPower` computes it). For two independent
samples of n each (an unpaired comparison), ν = 2n - 2 and λ = d √(n/2) with σ the standard
deviation within a cell (`TTestIndPower`).

- The **minimum detectable effect** (MDE) is the δ at which power(δ) = 1 - β, solved for d with
  scipy's brentq: δ = d · σ_d.
- The **episodes needed** for a difference δ are the least whole n >= 2 with power(δ) >= 1 - β
  (the continuous root, solved with brentq, rounded up).

The normal approximation, for reading the numbers (and shown beside them):

    paired:      δ ≈ (z_{1-α/2} + z_{1-β}) · σ_d / √n,      n ≈ ((z_{1-α/2} + z_{1-β}) σ_d / δ)²
    two-sample:  δ ≈ (z_{1-α/2} + z_{1-β}) · σ √(2 / n),    n ≈ 2 ((z_{1-α/2} + z_{1-β}) σ / δ)²

(Chow, Shao & Wang 2008, Sample Size Calculations in Clinical Research, 2nd ed., §3.1–3.2). It
is a little optimistic for small n, where the t's heavier tails cost power.

The standard deviation comes from pilot episodes when there are some; otherwise it is a stated
default, and the result says which (`sd_source`). Where the pairs are clustered (several pairs of
one seed) the test runs over the clusters, so n counts clusters and σ is that of a cluster's
mean difference (`analysis.cluster_spread`, as `analysis.plan_power` plans it).
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass
from typing import Literal

from scipy import optimize, stats

from stratagem.errors import StratagemError

Design = Literal["paired", "two-sample"]

ALPHA = 0.05
POWER = 0.8
MAX_N = 10**9
"""The most pairs `episodes_for` will answer with; a difference needing more is undetectable in
practice."""


def _check_test(alpha: float, design: str) -> None:
    if not 0 < alpha < 1:
        raise StratagemError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if design not in ("paired", "two-sample"):
        raise StratagemError(f"design must be 'paired' or 'two-sample', got {design!r}")


def _check(alpha: float, power: float, design: str) -> None:
    _check_test(alpha, design)
    if not alpha < power < 1:
        raise StratagemError(f"power must be above alpha ({alpha}) and below 1, got {power!r}")


def _df_nc(effect: float, n: float, design: Design) -> tuple[float, float]:
    if design == "paired":
        return n - 1, effect * math.sqrt(n)
    return 2 * n - 2, effect * math.sqrt(n / 2)


def power_of(effect: float, n: float, *, alpha: float = ALPHA, design: Design = "paired") -> float:
    """The two-sided t-test's power for a standardised effect `effect` (δ/σ) with n pairs
    (paired) or n per cell (two-sample)."""
    _check_test(alpha, design)
    if n < 2:
        raise StratagemError(f"power needs at least 2 pairs per cell, got {n}")
    df, nc = _df_nc(effect, n, design)
    crit = float(stats.t.ppf(1 - alpha / 2, df))
    # P(T'(λ) < -c) = P(T'(-λ) > c): scipy's nct.cdf gives NaN in parts of the far tail.
    return float(stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc))


def _z(alpha: float, power: float) -> float:
    """z_{1-α/2} + z_{1-β}."""
    unit = statistics.NormalDist()
    return unit.inv_cdf(1 - alpha / 2) + unit.inv_cdf(power)


@functools.lru_cache(maxsize=1024)
def detectable_effect(
    n: int, *, alpha: float = ALPHA, power: float = POWER, design: Design = "paired"
) -> float:
    """The standardised effect d = δ/σ detected with probability `power` (module docstring);
    kept per (n, α, power, design), since a grid's cell pairs mostly share their n."""
    _check(alpha, power, design)
    if n < 2:
        raise StratagemError(f"a detectable effect needs at least 2 pairs per cell, got {n}")
    high = 1.0
    while power_of(high, n, alpha=alpha, design=design) < power:
        high *= 2
    root = optimize.brentq(
        lambda d: power_of(d, n, alpha=alpha, design=design) - power, 0.0, high, xtol=1e-12
    )
    return float(root)


def normal_detectable_effect(
    n: float, *, alpha: float = ALPHA, power: float = POWER, design: Design = "paired"
) -> float:
    """The normal approximation of `detectable_effect` (module docstring)."""
    _check(alpha, power, design)
    z = _z(alpha, power)
    return z / math.sqrt(n) if design == "paired" else z * math.sqrt(2 / n)


@dataclass(frozen=True)
class Detectable:
    """The smallest difference a planned comparison can detect, and what it assumed."""

    mde: float | None
    """In the metric's units; None with fewer than 2 pairs per cell."""
    n: int
    sd: float
    sd_source: str
    """Where σ comes from: "pilot: 12 pairs" or the stated default and why."""
    alpha: float = ALPHA
    power: float = POWER
    design: Design = "paired"
    normal_mde: float | None = None
    """The normal approximation, for reading."""

    def text(self, digits: int = 2) -> str:
        """'MDE 0.31 (n = 20 pairs, sd 0.50 from pilot: 12 pairs)'."""
        unit = "pairs" if self.design == "paired" else "per cell"
        if self.mde is None:
            return f"MDE undefined (n = {self.n} {unit}: at least 2 needed)"
        return (
            f"MDE {self.mde:.{digits}f} (n = {self.n} {unit}, sd {self.sd:.{digits}f} "
            f"{self.sd_source})"
        )


def minimum_detectable(
    n: int,
    sd: float,
    sd_source: str,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    design: Design = "paired",
) -> Detectable:
    """The MDE δ = d · σ of a comparison with n pairs (or n per cell) and standard deviation
    `sd` of the paired differences (or within a cell, two-sample)."""
    _check(alpha, power, design)
    if not math.isfinite(sd) or sd < 0:
        raise StratagemError(f"the standard deviation must be a finite number >= 0, got {sd!r}")
    if n < 2:
        return Detectable(None, n, sd, sd_source, alpha, power, design)
    d = detectable_effect(n, alpha=alpha, power=power, design=design)
    approx = normal_detectable_effect(n, alpha=alpha, power=power, design=design)
    return Detectable(d * sd, n, sd, sd_source, alpha, power, design, approx * sd)


@dataclass(frozen=True)
class Needed:
    """Pairs per cell (or episodes per cell, two-sample) a difference needs."""

    n: int | None
    """None when more than `MAX_N` would be needed."""
    delta: float
    sd: float
    sd_source: str
    alpha: float = ALPHA
    power: float = POWER
    design: Design = "paired"
    normal_n: float | None = None


def episodes_for(
    delta: float,
    sd: float,
    sd_source: str = "",
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    design: Design = "paired",
) -> Needed:
    """The least n >= 2 whose test detects a difference `delta` with probability `power`."""
    _check(alpha, power, design)
    if not math.isfinite(delta) or delta <= 0:
        raise StratagemError(f"the difference to detect must be a number > 0, got {delta!r}")
    if not math.isfinite(sd) or sd < 0:
        raise StratagemError(f"the standard deviation must be a finite number >= 0, got {sd!r}")
    z = _z(alpha, power)
    normal = (z * sd / delta) ** 2 * (1 if design == "paired" else 2)
    base = Needed(None, delta, sd, sd_source, alpha, power, design, normal)
    if sd == 0:
        return Needed(2, delta, sd, sd_source, alpha, power, design, normal)
    n = _least_n(delta / sd, alpha, power, design)
    return base if n is None else Needed(n, delta, sd, sd_source, alpha, power, design, normal)


@functools.lru_cache(maxsize=1024)
def _least_n(effect: float, alpha: float, power: float, design: Design) -> int | None:
    """The least whole n >= 2 with the power asked for a standardised effect; None past MAX_N."""

    def gap(n: float) -> float:
        return power_of(effect, n, alpha=alpha, design=design) - power

    if gap(2) >= 0:
        return 2
    if gap(MAX_N) < 0:
        return None
    root = float(optimize.brentq(gap, 2.0, float(MAX_N), xtol=1e-9))
    n = math.ceil(root - 1e-9)
    while gap(n) < 0:  # the root's rounding, never more than a step
        n += 1
    return n
