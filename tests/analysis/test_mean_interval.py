"""`comparisons.mean_interval` (the viewer's charts' thousands of means) gives exactly
`cluster_t`'s estimate, interval and count, clustered or not, and the charts' kept answers are
those of a fresh computation."""

from __future__ import annotations

import random

import pytest

from stratagem.analysis.comparisons import cluster_t, mean_interval
from stratagem.errors import StratagemError
from stratagem.web.data import charts


def _cases() -> list[tuple[list[float], list[str] | None]]:
    rng = random.Random(7)
    cases: list[tuple[list[float], list[str] | None]] = [
        ([3.0], None), ([1.0, 1.0, 1.0], None), ([0.1, 0.2, 0.3], None),
        ([1.0, 1.0, 2.0, 2.0], ["a", "a", "b", "b"]), ([5.0, 5.0], ["x", "x"]),
    ]  # fmt: skip
    for _ in range(200):
        n = rng.randrange(1, 12)
        values = [rng.choice([0.0, 1.0, 3.0, 5.0, rng.random() * 10]) for _ in range(n)]
        clusters = [str(rng.randrange(3)) for _ in range(n)] if rng.random() < 0.4 else None
        cases.append((values, clusters))
    return cases


@pytest.mark.parametrize("level", [0.95, 0.9])
def test_mean_interval_is_cluster_ts_numbers(level: float) -> None:
    for values, clusters in _cases():
        c = cluster_t(values, clusters, paired_by="test", level=level)
        assert mean_interval(values, clusters, level) == (c.estimate, c.ci_low, c.ci_high, c.n)


def test_bad_values_are_refused_as_by_cluster_t() -> None:
    for values in ([], [1.0, float("nan")], [1.0, None]):
        with pytest.raises(StratagemError):
            mean_interval(values)  # type: ignore[arg-type]


def test_the_charts_kept_means_are_those_computed_fresh() -> None:
    for values, clusters in _cases():
        seeds = clusters or [str(k) for k in range(len(values))]
        first = charts.mean_interval(values, seeds)
        charts._SEEN.clear()
        assert charts.mean_interval(values, seeds) == first
        assert charts.mean_interval(values, seeds) == first  # kept
    negative, positive = charts.mean_interval([-0.0], ["s"]), charts.mean_interval([0.0], ["s"])
    assert str(negative["value"]) == "-0.0" and str(positive["value"]) == "0.0"  # bits, not ==
