"""Stratified bootstrap over units (games) with fixed stratum sizes, and percentile intervals.

A benchmark fixes how many games of each kind an entity plays (MAgIC: 20 Chameleon games as the
spy, 20 as the majority, 21 Cost Sharing games...), and several statistics combine per-kind
ratios (a mean of seven role win rates, a ratio plus λ times another). Resampling all games
together would let a resample lose a kind entirely and change the statistic's definition, so
the games are resampled **within each stratum**, keeping every stratum's size: a replicate is a
vector of counts, how often each unit was drawn, and a statistic of summed per-unit tallies is
`counts @ tallies`. The same counts can weight two aligned tally matrices (a paired bootstrap)
or the comparisons of a rating fit.

All randomness goes through `numpy.random.default_rng(seed)`, so every interval is reproducible.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from numbers import Integral

import numpy as np
import numpy.typing as npt

from stratagem.errors import StratagemError

FloatArray = npt.NDArray[np.float64]

BLOCK = 1 << 20
"""Most resampled counts held at once (rows x units), to bound memory on long inputs."""


def check_bootstrap(n_boot: int, level: float) -> None:
    """Reject a non-positive replicate count or a level outside (0, 1), naming the value."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, Integral) or n_boot < 1:
        raise StratagemError(f"n_boot must be a positive integer, got {n_boot!r}")
    if not 0 < level < 1:
        raise StratagemError(f"level must be strictly between 0 and 1, got {level!r}")


def strata_indices(strata: Sequence[Hashable]) -> list[npt.NDArray[np.int64]]:
    """The unit indices of each stratum, strata in order of first appearance."""
    groups: dict[Hashable, list[int]] = {}
    for i, s in enumerate(strata):
        groups.setdefault(s, []).append(i)
    return [np.asarray(ix, dtype=np.int64) for ix in groups.values()]


def resample_counts(
    strata: Sequence[Hashable], n_boot: int, seed: int, *, block: int = BLOCK
) -> Iterator[FloatArray]:
    """Blocks of bootstrap replicates, each row the draw counts of every unit.

    Within a stratum of size n_s, a row draws n_s units uniformly with replacement, so each
    row's counts sum to n_s over the stratum's units. The blocks together hold `n_boot` rows;
    the same `strata` and `seed` always give the same rows.
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, Integral) or n_boot < 1:
        raise StratagemError(f"n_boot must be a positive integer, got {n_boot!r}")
    n = len(strata)
    groups = strata_indices(strata)
    rng = np.random.default_rng(seed)
    rows = max(1, block // max(n, 1))
    for start in range(0, n_boot, rows):
        size = min(rows, n_boot - start)
        counts = np.zeros((size, n), dtype=np.float64)
        for ix in groups:
            k = len(ix)
            counts[:, ix] = rng.multinomial(k, np.full(k, 1.0 / k), size=size)
        yield counts


def resampled_sums(
    tallies: FloatArray, strata: Sequence[Hashable], n_boot: int, seed: int
) -> FloatArray:
    """Column sums of `tallies` (units x columns) over each replicate: shape (n_boot, columns)."""
    t = np.asarray(tallies, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] != len(strata):
        raise StratagemError(
            f"tallies must have one row per unit ({len(strata)}), got shape {t.shape}"
        )
    return np.concatenate([c @ t for c in resample_counts(strata, n_boot, seed)])


def percentile_interval(stats: FloatArray, level: float) -> tuple[float | None, float | None]:
    """The central `level` part of the replicates, NaN replicates (undefined statistic) left
    out; (None, None) when no replicate is defined."""
    if not 0 < level < 1:
        raise StratagemError(f"level must be strictly between 0 and 1, got {level!r}")
    arr = np.asarray(stats, dtype=np.float64).ravel()
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return None, None
    alpha = (1 - level) / 2
    low, high = np.quantile(arr, [alpha, 1 - alpha])
    return float(low), float(high)
