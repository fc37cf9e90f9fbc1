"""A Ray cluster of two nodes on this machine, on 127.0.0.1, for the Ray executor's tests.

Started once per test session (it takes a few seconds) and shut down at its end; the test process
is connected to it as a driver, so a `Runner(executor="ray")` in a test uses it, and a
`stratagem run --executor ray --address ADDRESS` in a subprocess joins it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

NODES = 2


@dataclass
class LocalCluster:
    address: str
    cluster: Any


@contextmanager
def local_cluster() -> Iterator[LocalCluster]:
    # Every node, worker and driver on 127.0.0.1 (Ray's own switch for one-machine clusters,
    # read when Ray is imported: naming 127.0.0.1 as a node's address instead leaves drivers
    # dialling the host's IP).
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'stratagem[ray]')")
    from ray.cluster_utils import Cluster

    node = {"num_cpus": 1}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={**node, "include_dashboard": False},
    )
    for _ in range(NODES - 1):
        cluster.add_node(**node)
    cluster.wait_for_nodes()
    assert cluster.address.startswith("127.0.0.1:"), cluster.address
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        yield LocalCluster(cluster.address, cluster)
    finally:
        ray.shutdown()
        cluster.shutdown()
