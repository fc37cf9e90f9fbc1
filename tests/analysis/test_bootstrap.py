"""The stratified bootstrap helpers: stratum sizes kept, seeded, NaN replicates left out."""

from __future__ import annotations

import numpy as np
import pytest

from stratagem.analysis.bootstrap import (
    percentile_interval,
    resample_counts,
    resampled_sums,
)
from stratagem.errors import StratagemError


def test_each_replicate_keeps_every_stratum_size() -> None:
    strata = ["a", "a", "b", "a", "b", "c"]
    blocks = list(resample_counts(strata, 50, seed=1, block=60))  # 10 rows per block
    assert len(blocks) == 5
    counts = np.concatenate(blocks)
    assert counts.shape == (50, 6)
    assert np.all(counts[:, [0, 1, 3]].sum(axis=1) == 3)
    assert np.all(counts[:, [2, 4]].sum(axis=1) == 2)
    assert np.all(counts[:, 5] == 1)  # a stratum of one unit always draws it


def test_seeded_and_reproducible() -> None:
    strata = ["a"] * 10
    one = np.concatenate(list(resample_counts(strata, 20, seed=7)))
    two = np.concatenate(list(resample_counts(strata, 20, seed=7)))
    other = np.concatenate(list(resample_counts(strata, 20, seed=8)))
    assert np.array_equal(one, two)
    assert not np.array_equal(one, other)


def test_resampled_sums_are_count_weighted_column_sums() -> None:
    tallies = np.array([[1.0, 0.0], [0.0, 1.0]])
    sums = resampled_sums(tallies, ["x", "y"], 5, seed=0)
    # one unit per stratum: every replicate draws each unit once
    assert np.array_equal(sums, np.ones((5, 2)))
    with pytest.raises(StratagemError, match="one row per unit"):
        resampled_sums(tallies, ["x"], 5, seed=0)


def test_percentile_interval_skips_undefined_replicates() -> None:
    stats = np.array([np.nan, 1.0, 2.0, 3.0, np.nan])
    assert percentile_interval(stats, 0.5) == pytest.approx((1.5, 2.5))
    assert percentile_interval(np.array([np.nan]), 0.9) == (None, None)
    with pytest.raises(StratagemError, match="level"):
        percentile_interval(stats, 1.0)
