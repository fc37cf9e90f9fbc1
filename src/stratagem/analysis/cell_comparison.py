"""Two cells compared the way their design allows, so every study table picks its test alike.

A study table compares cells whose episodes may or may not line up. `compare_cells` takes each
cell's values by pairing key and chooses, in this order:

1. **clustered pairs**: the cells share keys and some cluster holds more than one shared pair
   (several seeds of one setting): the cluster-robust t of `analysis.comparisons` (CR1);
2. **paired yes/no**: the cells share keys, each pair is its own cluster and every value is 0
   or 1 (won, cooperated): McNemar's test with Newcombe's interval (`analysis.mcnemar`);
3. **pairs**: the cells share keys otherwise: the paired t (`analysis.comparisons`);
4. **no pair**: the cells share no key: Welch's unpaired t (`analysis.unpaired`), which needs
   2 values in each cell.

Keys of one cell only are left out of a paired comparison and counted in it. A comparison that
cannot be made raises `StratagemError` with the reason, for the table to print instead.

**A vanishing standard error.** The cluster-robust variance is 0 whenever every cluster's
differences sum to its share of the mean (three seats of each setting with the same total,
say), and in floating point it is then a rounding residue of about 1e-17, whose t would print
p < 0.001. `settled` treats a standard error below `SE_RESOLUTION` times the size of the
differences as the 0 it is: the interval is the estimate and there is no p-value, as
`analysis.comparisons` does for an exact 0.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Hashable, Mapping

from stratagem.analysis.comparisons import Comparison, K, compare_paired
from stratagem.analysis.mcnemar import mcnemar
from stratagem.analysis.unpaired import welch
from stratagem.errors import StratagemError

SE_RESOLUTION = 1e-9
"""A standard error below this fraction of the values' scale is a rounding residue of 0."""


def settled(c: Comparison) -> Comparison:
    """The comparison with a standard error that is 0 up to rounding taken as 0 (docstring)."""
    if c.se is None or c.se == 0:
        return c
    scale = max(1.0, abs(c.estimate), abs(c.mean_a or 0.0), abs(c.mean_b or 0.0))
    if c.se > SE_RESOLUTION * scale:
        return c
    return dataclasses.replace(c, ci_low=c.estimate, ci_high=c.estimate, p=None, se=0.0)


def _binary(values: Mapping[K, float], keys: list[K]) -> bool:
    return all(float(values[k]) in (0.0, 1.0) for k in keys)


def compare_cells(
    a: Mapping[K, float],
    b: Mapping[K, float],
    *,
    paired_by: str,
    clusters: Mapping[K, Hashable] | None = None,
    cluster_by: str | None = None,
    level: float = 0.95,
) -> Comparison:
    """B minus A by the first test of the module docstring that the cells allow."""
    shared = [k for k in a if k in b]
    if not shared:
        if len(a) < 2 or len(b) < 2:
            raise StratagemError(
                f"no pair ({paired_by}) and too few episodes for an unpaired test "
                f"({len(a)} and {len(b)}; 2 each needed)"
            )
        return welch(list(a.values()), list(b.values()), level=level).comparison
    if clusters is not None:
        sizes = Counter(clusters[k] for k in shared if k in clusters)
        if sizes and max(sizes.values()) > 1:
            return settled(
                compare_paired(
                    a, b, paired_by=paired_by, clusters=clusters, cluster_by=cluster_by,
                    level=level,
                )
            )  # fmt: skip
    if _binary(a, shared) and _binary(b, shared):
        flags_a = {k: bool(a[k]) for k in a}
        flags_b = {k: bool(b[k]) for k in b}
        return mcnemar(flags_a, flags_b, paired_by=paired_by, level=level).difference
    return settled(compare_paired(a, b, paired_by=paired_by, level=level))
