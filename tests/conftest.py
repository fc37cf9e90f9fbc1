"""Root test configuration.

Its presence puts `tests/` on `sys.path` (pytest's default `prepend` import mode), so test modules
in any folder can import the shared helpers in `tests/support/`.
"""

from collections.abc import Iterator

import pytest
from support.ray_cluster import LocalCluster, local_cluster


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[LocalCluster]:
    """Two Ray nodes on 127.0.0.1, shared by every test that needs a cluster."""
    with local_cluster() as cluster:
        yield cluster
