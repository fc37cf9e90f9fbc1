"""McNemar's test for paired binary outcomes (won, cooperated in round 1, moved validly).

Pairs of episodes (one in cell A, one in cell B, sharing a pairing key) with a yes/no outcome
make a 2x2 table of pairs:

                 B yes    B no
        A yes      r        s
        A no       t        u          n = r + s + t + u

Only the discordant pairs (s: A yes, B no; t: A no, B yes) carry evidence of a difference. Under
"no difference" each discordant pair is equally likely to go either way, so t ~ Binomial(s + t,
1/2) given s + t (McNemar 1947, Psychometrika 12:153–157):

- **exact** (small counts, s + t < `EXACT_BELOW`): p = min(1, 2 · P(X <= min(s, t))), X ~
  Binomial(s + t, 1/2), the two-sided conditional binomial test;
- **chi-square** otherwise: X² = (|s - t| - 1)² / (s + t) on 1 degree of freedom, with Edwards'
  continuity correction (Edwards 1948, Psychometrika 13:185–187); the correction is floored at 0,
  so s = t gives X² = 0 and p = 1. `correction=False` gives McNemar's original (s - t)² / (s + t).

With no discordant pair there is no evidence either way: p = 1.

**Effect sizes.** The difference in proportions is p_B - p_A = (t - s) / n. Its interval is
Newcombe's hybrid score interval for paired proportions, method 10 of Newcombe 1998 (Stat Med
17:2635–2650): with p_A = (r + s)/n, p_B = (r + t)/n, their Wilson score intervals (l_A, u_A) and
(l_B, u_B) at `level` (Wilson 1927), and the correction for the pairs' correlation

    φ = C / √((r + s)(t + u)(r + t)(s + u)),  C = ru - st - n/2 if ru - st > n/2,
        C = 0 if 0 <= ru - st <= n/2,  C = ru - st if ru - st < 0     (φ = 0 if the product is 0)
    L = D - √((p_B - l_B)² - 2φ (p_B - l_B)(u_A - p_A) + (u_A - p_A)²)
    U = D + √((u_B - p_B)² - 2φ (u_B - p_B)(p_A - l_A) + (p_A - l_A)²),   D = p_B - p_A.

The conditional odds ratio of B against A is t / s (the Mantel–Haenszel estimate for matched
pairs; Agresti 2013, Categorical Data Analysis, 3rd ed., §11.1.4): inf when s = 0 < t, None
when s = t = 0.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from scipy import stats

from stratagem.analysis.comparisons import Comparison, K
from stratagem.errors import StratagemError

EXACT_BELOW = 25
"""Discordant pairs below which the exact binomial test is used (the chi-square's
approximation is poor for fewer; the threshold statsmodels and most texts suggest)."""


@dataclass(frozen=True)
class McNemar:
    """The 2x2 table of pairs, the test, and the difference in proportions."""

    both: int
    """r: A yes and B yes."""
    only_a: int
    """s: A yes, B no."""
    only_b: int
    """t: A no, B yes."""
    neither: int
    """u: A no and B no."""
    exact: bool
    statistic: float
    """X² for the chi-square test; min(s, t) for the exact test."""
    p: float
    odds_ratio: float | None
    """t / s: the conditional odds of B's yes against A's."""
    difference: Comparison
    """p_B - p_A with Newcombe's interval and this test's p-value."""

    @property
    def n(self) -> int:
        return self.both + self.only_a + self.only_b + self.neither

    @property
    def method(self) -> str:
        return self.difference.method


def mcnemar(
    a: Mapping[K, bool],
    b: Mapping[K, bool],
    *,
    paired_by: str,
    exact: bool | None = None,
    correction: bool = True,
    level: float = 0.95,
) -> McNemar:
    """McNemar's test on the episodes of A and B paired by key (`a[k]`, `b[k]`: the outcome of
    the pair's episode in each cell). Keys of one cell only are left out and counted."""
    keys = [k for k in a if k in b]
    if not keys:
        raise StratagemError(
            f"no pairs: cell A and cell B share no pairing key ({paired_by}); "
            f"A has {len(a)} episodes, B {len(b)}"
        )
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for k in keys:
        counts[(_flag(a[k], "A", k), _flag(b[k], "B", k))] += 1
    result = mcnemar_counts(
        counts[(True, True)], counts[(True, False)], counts[(False, True)], counts[(False, False)],
        paired_by=paired_by, exact=exact, correction=correction, level=level,
    )  # fmt: skip
    difference = dataclasses.replace(
        result.difference, unpaired_a=len(a) - len(keys), unpaired_b=len(b) - len(keys)
    )
    return dataclasses.replace(result, difference=difference)


def _flag(value: object, cell: str, key: Hashable) -> bool:
    if isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    raise StratagemError(f"cell {cell}, pair {key!r}: {value!r} is not a yes/no outcome")


def mcnemar_counts(
    both: int,
    only_a: int,
    only_b: int,
    neither: int,
    *,
    paired_by: str = "",
    exact: bool | None = None,
    correction: bool = True,
    level: float = 0.95,
) -> McNemar:
    """McNemar's test from the table's counts r, s, t, u (module docstring). `exact`: None
    chooses by the number of discordant pairs (`EXACT_BELOW`), True/False forces it."""
    if not 0 < level < 1:
        raise StratagemError(f"level must be strictly between 0 and 1, got {level!r}")
    cells = (both, only_a, only_b, neither)
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in cells):
        raise StratagemError(f"the table's counts must be whole numbers >= 0, got {cells}")
    n = sum(cells)
    if n == 0:
        raise StratagemError("no pairs: the table is empty")
    s, t = only_a, only_b
    discordant = s + t
    use_exact = discordant < EXACT_BELOW if exact is None else exact
    if discordant == 0:
        statistic, p = 0.0, 1.0
    elif use_exact:
        statistic = float(min(s, t))
        p = min(1.0, 2 * float(stats.binom.cdf(min(s, t), discordant, 0.5)))
    else:
        gap = max(abs(s - t) - 1, 0) if correction else abs(s - t)
        statistic = gap**2 / discordant
        p = float(stats.chi2.sf(statistic, 1))
    odds = None if discordant == 0 else (math.inf if s == 0 else t / s)
    low, high = newcombe_paired(both, s, t, neither, level)
    test = "McNemar exact binomial" if use_exact else "McNemar chi-square"
    if not use_exact and correction:
        test += " (continuity-corrected)"
    difference = Comparison(
        (t - s) / n, low, high, level, p, n, n, paired_by or "pairing key",
        f"{test}; Newcombe hybrid score interval",
        mean_a=(both + s) / n, mean_b=(both + t) / n,
    )  # fmt: skip
    return McNemar(both, s, t, neither, use_exact, statistic, p, odds, difference)


def wilson(successes: int, n: int, level: float) -> tuple[float, float]:
    """Wilson's score interval for one proportion (Wilson 1927, JASA 22:209–212):
    (p + z²/2n ± z √(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    z = float(stats.norm.ppf(1 - (1 - level) / 2))
    p = successes / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    return (centre - half) / denominator, (centre + half) / denominator


def newcombe_paired(r: int, s: int, t: int, u: int, level: float) -> tuple[float, float]:
    """Newcombe's method 10 interval for p_B - p_A (module docstring), clipped to [-1, 1]."""
    n = r + s + t + u
    p_a, p_b = (r + s) / n, (r + t) / n
    l_a, u_a = wilson(r + s, n, level)
    l_b, u_b = wilson(r + t, n, level)
    product = (r + s) * (t + u) * (r + t) * (s + u)
    phi = 0.0
    if product > 0:
        cross = r * u - s * t
        c = cross - n / 2 if cross > n / 2 else (0.0 if cross >= 0 else float(cross))
        phi = c / math.sqrt(product)
    d = p_b - p_a
    down_b, up_a = p_b - l_b, u_a - p_a
    up_b, down_a = u_b - p_b, p_a - l_a
    low = d - math.sqrt(max(down_b**2 - 2 * phi * down_b * up_a + up_a**2, 0.0))
    high = d + math.sqrt(max(up_b**2 - 2 * phi * up_b * down_a + down_a**2, 0.0))
    return max(-1.0, low), min(1.0, high)
