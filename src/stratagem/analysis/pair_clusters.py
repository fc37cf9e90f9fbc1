"""When the pairs of a comparison are clustered, and by what.

A cell is played once per seed and repetition, and the repetitions of one seed share its chance
moves (the game's draws, a random bot's): their differences are not independent, so the pairs of
one seed form a cluster (docs/statistics.md). Clustering only changes anything when there are at
least two clusters and one of them holds several pairs. With a single seed the whole comparison
is conditional on it, and each pair (a repetition) is its own cluster: the paired t. The plan
(`analysis.plan_power`) counts the same clusters, so its power is that of the test to be run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def shared_clusters(keys: Iterable[K], group_of: Mapping[K, Hashable]) -> dict[K, Hashable] | None:
    """Each pair's cluster (`group_of[key]`, e.g. its seed) for the pairs `keys` when the groups
    cluster anything: at least two groups, one with several pairs; None otherwise (each pair its
    own cluster)."""
    clusters = {k: group_of[k] for k in keys}
    sizes = Counter(clusters.values())
    if len(sizes) < 2 or max(sizes.values()) < 2:
        return None
    return clusters
