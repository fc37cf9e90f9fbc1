"""The difference between two cells, paired where the design pairs, with an interval and a p-value.

Two cells of a grid are compared episode by episode: the episodes of cell A and cell B that share
a *pairing key* (what the design holds fixed between them: the seed, the opponent, the
repetition) form a pair, and d_i = b_i - a_i is one pair's difference. Pairing removes what the
two episodes share (the seed's chance moves, the opponent's draws), so the comparison is tighter
than one of two independent samples. The caller says what the pairs share (`paired_by`) and the
result repeats it, so a table can say how each number was made.

**Cluster-robust t (CR1).** Pairs that share more than their key (several repetitions of one
seed, or every pair against one opponent) are not independent: each such group is a *cluster*
g = 1..G. The mean difference d̄ = (1/n) Σ_i d_i is the OLS estimate of d on a constant, and its
Liang–Zeger sandwich variance with the CR1 small-sample factor is

    V(d̄) = G / (G - 1) · (1 / n²) · Σ_g (Σ_{i in g} (d_i - d̄))²

(Liang & Zeger 1986, Biometrika 73:13–22; the factor G/(G-1)·(n-1)/(n-k) with k = 1
regressor, as Stata and statsmodels use: Cameron & Miller 2015, J. Human Resources 50:317–372,
§VI.B). The interval is d̄ ± t_{1-(1-level)/2, G-1} · √V and the two-sided p-value is
2 · P(T_{G-1} > |d̄| / √V): with few clusters the t with G - 1 degrees of freedom is the usual
choice (Cameron & Miller 2015, §VI.C). With one pair per cluster V = s_d² / n, the paired t-test
(Student 1908) exactly. Fewer than 2 clusters give no interval and no p-value. When every
difference is the same, V = 0: the interval is that value and the p-value is undefined (None).

**Paired bootstrap.** `method="bootstrap"` keeps the percentile interval of
`analysis.paired.paired_difference` (pairs resampled with replacement); it carries no p-value.

`Comparison` carries either, the method named, and prints compactly:
`+0.12 [0.03, 0.21], p=0.008 (Holm 0.03), n=40 pairs in 10 seeds`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np
from scipy import stats

from stratagem.analysis.paired import paired_difference
from stratagem.errors import StratagemError

K = TypeVar("K", bound=Hashable)
"""A pairing key: what the two episodes of a pair share (a seed, a (seed, repetition) tuple)."""

CLUSTER_T = "cluster-robust t (CR1)"
PAIRED_T = "paired t"
BOOTSTRAP = "paired percentile bootstrap"


@dataclass(frozen=True)
class Comparison:
    """B minus A over paired episodes, with how it was computed."""

    estimate: float
    """Mean of b_i - a_i over the pairs (a difference in proportions for McNemar)."""
    ci_low: float | None
    ci_high: float | None
    level: float
    p: float | None
    """Two-sided p-value of "no difference"; None where the method gives none."""
    n: int
    """Pairs compared."""
    clusters: int
    """G: independent groups of pairs (n when every pair is its own)."""
    paired_by: str
    """What the two episodes of a pair share ("seed, repetition")."""
    method: str
    cluster_by: str | None = None
    """What the pairs of a cluster share ("seed"); None when each pair is its own cluster."""
    se: float | None = None
    df: int | None = None
    """Degrees of freedom of the t reference distribution."""
    mean_a: float | None = None
    mean_b: float | None = None
    unpaired_a: int = 0
    """Episodes of A (and of B) without a partner, left out."""
    unpaired_b: int = 0
    p_adjusted: float | None = None
    """The p-value adjusted across a table (`analysis.multiple`), when it was."""
    adjustment: str | None = None
    """The adjustment's name ("Holm")."""

    @property
    def significant(self) -> bool:
        """True when the interval excludes 0; without an interval nothing can be claimed."""
        if self.ci_low is None or self.ci_high is None:
            return False
        return self.ci_low > 0 or self.ci_high < 0

    def adjusted(self, p: float | None, adjustment: str) -> Comparison:
        """This comparison with its p-value adjusted across a table."""
        return dataclasses.replace(self, p_adjusted=p, adjustment=adjustment)

    def text(self, digits: int = 2) -> str:
        """`+0.12 [0.03, 0.21], p=0.008 (Holm 0.03), n=40 pairs in 10 seeds`."""
        out = f"{self.estimate:+.{digits}f}"
        if self.ci_low is not None and self.ci_high is not None:
            out += f" [{self.ci_low:.{digits}f}, {self.ci_high:.{digits}f}]"
        if self.p is not None:
            out += f", {format_p(self.p)}"
            if self.adjustment is not None and self.p_adjusted is not None:
                out += f" ({self.adjustment} {format_p(self.p_adjusted, prefix='')})"
        if self.paired_by == UNPAIRED:
            return out + f", n={self.unpaired_a} + {self.unpaired_b}, unpaired"
        out += f", n={self.n} {'pair' if self.n == 1 else 'pairs'}"
        if self.cluster_by is not None:
            out += f" in {self.clusters} {_plural(self.cluster_by, self.clusters)}"
        return out

    def __str__(self) -> str:
        return self.text()


UNPAIRED = "nothing (independent samples)"
"""`Comparison.paired_by` of an unpaired comparison (`analysis.unpaired`)."""


def format_p(p: float, prefix: str = "p") -> str:
    """'p=0.008', 'p<0.001', 'p=0.41': two significant digits, as tables print them."""
    sep = "=" if prefix else ""
    if p < 0.001:
        return f"{prefix}<0.001"
    return f"{prefix}{sep}{float(f'{p:.2g}'):g}"


def _plural(noun: str, count: int) -> str:
    return noun if count == 1 or noun.endswith("s") else f"{noun}s"


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise StratagemError(f"level must be strictly between 0 and 1, got {level!r}")


def _number(value: object, where: str) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise StratagemError(f"{where}: {value!r} is not a number") from None
    if not math.isfinite(x):
        raise StratagemError(f"{where}: {x} is not a finite number")
    return x


def matched(a: Mapping[K, float], b: Mapping[K, float]) -> tuple[list[K], np.ndarray, np.ndarray]:
    """The pairing keys both cells have (in A's order) and their values in A and in B."""
    keys = [k for k in a if k in b]
    va = np.array([_number(a[k], f"cell A, pair {k!r}") for k in keys], dtype=np.float64)
    vb = np.array([_number(b[k], f"cell B, pair {k!r}") for k in keys], dtype=np.float64)
    return keys, va, vb


def compare_paired(
    a: Mapping[K, float],
    b: Mapping[K, float],
    *,
    paired_by: str,
    clusters: Mapping[K, Hashable] | None = None,
    cluster_by: str | None = None,
    level: float = 0.95,
    method: Literal["t", "bootstrap"] = "t",
    n_boot: int = 2000,
    seed: int = 0,
) -> Comparison:
    """B minus A over the episodes paired by key: `a` and `b` map each pairing key to that
    episode's value. `clusters` maps a pairing key to its cluster (several pairs of one seed);
    without it every pair is its own cluster and the t is the paired t. Keys of one cell only
    are left out and counted."""
    _check_level(level)
    if not paired_by:
        raise StratagemError("paired_by must say what the episodes of a pair share")
    keys, va, vb = matched(a, b)
    if not keys:
        raise StratagemError(
            f"no pairs: cell A and cell B share no pairing key ({paired_by}); "
            f"A has {len(a)} episodes, B {len(b)}"
        )
    mean_a, mean_b = float(va.mean()), float(vb.mean())
    unpaired_a, unpaired_b = len(a) - len(keys), len(b) - len(keys)
    if method == "bootstrap":
        if clusters is not None:
            raise StratagemError(
                "the paired bootstrap resamples pairs, not clusters: use method 't' for "
                "clustered pairs"
            )
        boot = paired_difference(va.tolist(), vb.tolist(), n_boot=n_boot, level=level, seed=seed)
        return Comparison(
            boot.mean_diff, boot.ci_low, boot.ci_high, level, None, len(keys), len(keys),
            paired_by, BOOTSTRAP, mean_a=mean_a, mean_b=mean_b, unpaired_a=unpaired_a,
            unpaired_b=unpaired_b,
        )  # fmt: skip
    if method != "t":
        raise StratagemError(f"method must be 't' or 'bootstrap', got {method!r}")
    labels: list[Hashable] | None = None
    if clusters is not None:
        missing = [k for k in keys if k not in clusters]
        if missing:
            raise StratagemError(f"pair {missing[0]!r} has no cluster ({cluster_by or 'cluster'})")
        labels = [clusters[k] for k in keys]
    return cluster_t(
        (vb - va).tolist(), labels, paired_by=paired_by, cluster_by=cluster_by, level=level,
        mean_a=mean_a, mean_b=mean_b, unpaired_a=unpaired_a, unpaired_b=unpaired_b,
    )  # fmt: skip


def cluster_t(
    differences: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    *,
    paired_by: str,
    cluster_by: str | None = None,
    level: float = 0.95,
    mean_a: float | None = None,
    mean_b: float | None = None,
    unpaired_a: int = 0,
    unpaired_b: int = 0,
) -> Comparison:
    """The mean of paired differences with its CR1 cluster-robust t interval (module docstring);
    `clusters[i]` is pair i's cluster, None for one pair per cluster (the paired t)."""
    _check_level(level)
    d, codes, g = _clustered(differences, clusters)
    n = int(d.size)
    mean, se = _mean_se(d, codes, g)
    method = PAIRED_T if clusters is None or g == n else CLUSTER_T
    by = None if clusters is None else cluster_by or "cluster"
    base = Comparison(
        mean, None, None, level, None, n, g, paired_by, method, by,
        mean_a=mean_a, mean_b=mean_b, unpaired_a=unpaired_a, unpaired_b=unpaired_b,
    )  # fmt: skip
    if se is None:
        return base
    df = g - 1
    if se == 0.0:
        return dataclasses.replace(base, ci_low=mean, ci_high=mean, se=0.0, df=df)
    half = t_quantile(level, df) * se
    p = float(2 * stats.t.sf(abs(mean) / se, df))
    return dataclasses.replace(base, ci_low=mean - half, ci_high=mean + half, p=p, se=se, df=df)


def mean_interval(
    values: Sequence[float], clusters: Sequence[Hashable] | None = None, level: float = 0.95
) -> tuple[float, float | None, float | None, int]:
    """`cluster_t`'s estimate, interval and count without its p-value or record: the same
    numbers, for the viewer's charts, which ask it of thousands of small means."""
    _check_level(level)
    d, codes, g = _clustered(values, clusters)
    mean, se = _mean_se(d, codes, g)
    if se is None:
        return mean, None, None, int(d.size)
    half = t_quantile(level, g - 1) * se if se else 0.0
    return mean, mean - half, mean + half, int(d.size)


@functools.lru_cache(maxsize=4096)
def t_quantile(level: float, df: int) -> float:
    """The two-sided t quantile of `level`, kept: scipy's ppf costs more than the rest of a
    small interval."""
    return float(stats.t.ppf(1 - (1 - level) / 2, df))


def _clustered(
    values: Sequence[float], clusters: Sequence[Hashable] | None
) -> tuple[np.ndarray, np.ndarray, int]:
    """The values as an array (each checked a finite number), each one's cluster code, and the
    number of clusters (each value its own without `clusters`)."""
    try:
        d = np.array(values, dtype=np.float64) if len(values) else np.zeros(0)
        checked = d.ndim == 1 and bool(np.all(np.isfinite(d)))
    except (TypeError, ValueError):
        checked = False
    if not checked:  # each value as a number, naming the first that is not
        d = np.array([_number(x, f"difference {i}") for i, x in enumerate(values)])
    n = int(d.size)
    if n == 0:
        raise StratagemError("no pairs to compare")
    if clusters is not None and len(clusters) != n:
        raise StratagemError(f"{n} differences but {len(clusters)} cluster labels")
    if clusters is None:
        codes = np.arange(n)
    else:
        _, codes = np.unique(np.array([repr(c) for c in clusters]), return_inverse=True)
    return d, codes, int(codes.max()) + 1


def _mean_se(d: np.ndarray, codes: np.ndarray, g: int) -> tuple[float, float | None]:
    """The mean and its CR1 standard error: None under two clusters, 0.0 when every value is
    the same or the error is rounding noise."""
    n = int(d.size)
    mean = float(d.mean())
    same = bool(np.all(d == d[0]))
    if same:
        mean = float(d[0])  # exact, not up to rounding
    if g < 2:
        return mean, None
    sums = np.bincount(codes, weights=d - mean, minlength=g)
    se = math.sqrt(g / (g - 1) * float(np.sum(sums**2)) / n**2)
    # A standard error that is rounding noise (clusters whose differences cancel exactly leave
    # ~1e-17) is zero: a p-value from it would claim evidence where there is none.
    scale = max(float(np.max(np.abs(d))), 1.0)
    if se <= 1e-9 * scale or same:
        return mean, 0.0
    return mean, se
