"""The difference between two cells that share no pairing key: Welch's unequal-variances t.

Where the two cells of a comparison were not played on the same seeds, settings or instances,
no episode of one has a partner in the other, and the comparison falls back to two independent
samples. With sample means ā, b̄, variances s_a², s_b² (n - 1 in the denominator) and sizes
n_a, n_b, Welch's t (Welch 1947, Biometrika 34:28–35) is

    d = b̄ - ā,   SE = √(s_a² / n_a + s_b² / n_b),   t = d / SE

on the Welch–Satterthwaite degrees of freedom (Satterthwaite 1946, Biometrics Bulletin 2:110–114)

    ν = SE⁴ / ((s_a² / n_a)² / (n_a - 1) + (s_b² / n_b)² / (n_b - 1)),

the interval d ± t_{1-(1-level)/2, ν} · SE and the two-sided p-value 2 · P(T_ν > |t|). It is
`scipy.stats.ttest_ind(b, a, equal_var=False)`, which the tests check. It does not assume equal
variances, so it is the safe default for cells that differ in more than the compared factor.
Each cell needs at least 2 values; when both cells are constant (SE = 0) the interval is the
difference and the p-value is undefined (None), as for the paired comparisons.

The result is a `Comparison` (so tables adjust and print it as any other) whose `n` counts the
episodes of both cells, all of them without a partner (`unpaired_a`, `unpaired_b`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from stratagem.analysis.comparisons import UNPAIRED as UNPAIRED
from stratagem.analysis.comparisons import Comparison
from stratagem.errors import StratagemError

WELCH = "Welch t (unequal variances, unpaired)"


@dataclass(frozen=True)
class Welch:
    """Welch's t with its degrees of freedom, and the comparison it gives."""

    statistic: float | None
    """t; None when SE = 0."""
    df: float | None
    """ν, the Welch–Satterthwaite degrees of freedom (not a whole number)."""
    n_a: int
    n_b: int
    comparison: Comparison


def _values(values: Sequence[float], cell: str) -> np.ndarray:
    out = np.array([float(v) for v in values], dtype=np.float64)
    if out.size < 2:
        raise StratagemError(f"Welch's t needs at least 2 values in cell {cell}, got {out.size}")
    if not np.all(np.isfinite(out)):
        raise StratagemError(f"cell {cell} holds a value that is not a finite number")
    return out


def welch(a: Sequence[float], b: Sequence[float], *, level: float = 0.95) -> Welch:
    """B minus A for two independent samples (module docstring)."""
    if not 0 < level < 1:
        raise StratagemError(f"level must be strictly between 0 and 1, got {level!r}")
    va, vb = _values(a, "A"), _values(b, "B")
    n_a, n_b = int(va.size), int(vb.size)
    mean_a, mean_b = float(va.mean()), float(vb.mean())
    d = mean_b - mean_a
    qa, qb = float(va.var(ddof=1)) / n_a, float(vb.var(ddof=1)) / n_b
    base = Comparison(
        d, None, None, level, None, n_a + n_b, n_a + n_b, UNPAIRED, WELCH,
        mean_a=mean_a, mean_b=mean_b, unpaired_a=n_a, unpaired_b=n_b,
    )  # fmt: skip
    se = math.sqrt(qa + qb)
    if se == 0:
        return Welch(None, None, n_a, n_b, dataclasses.replace(base, ci_low=d, ci_high=d, se=0.0))
    df = (qa + qb) ** 2 / (qa**2 / (n_a - 1) + qb**2 / (n_b - 1))
    t = d / se
    half = float(stats.t.ppf(1 - (1 - level) / 2, df)) * se
    p = float(2 * stats.t.sf(abs(t), df))
    comparison = dataclasses.replace(base, ci_low=d - half, ci_high=d + half, p=p, se=se)
    return Welch(t, df, n_a, n_b, comparison)
