"""A Ray cluster of two nodes on this machine, on 127.0.0.1, for the Ray executor's tests.

Started once per test session (it takes a few seconds) and shut down at its end; the test process
is connected to it as a driver, so a `Runner(executor="ray")` in a test uses it, and a
`stratagem run --executor ray --address ADDRESS` in a subprocess joins it.

`lone_node_cluster` is a cluster of one node of a test's own, which the test may kill: only a
`stratagem run` subprocess connects to it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

NODES = 2


@dataclass
class LocalCluster:
    address: str
    cluster: Any


# Every node, worker and driver on 127.0.0.1 (Ray's own switch for one-machine clusters, read
# when Ray is imported: naming 127.0.0.1 as a node's address instead leaves drivers dialling the
# host's IP). Set when the root conftest imports this module, before any test (a dry run checking
# that Ray is there, say) imports Ray.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


def _import_ray() -> Any:
    return pytest.importorskip("ray", reason="Ray is not installed (pip install 'stratagem[ray]')")


@contextmanager
def local_cluster() -> Iterator[LocalCluster]:
    ray = _import_ray()
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


FAST_DEATH = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 500,
    "health_check_failure_threshold": 3,
}
"""A node whose raylet stops answering is marked dead in about 2 s (Ray's default: ~30 s)."""


@contextmanager
def lone_node_cluster() -> Iterator[LocalCluster]:
    """One node (the head) on 127.0.0.1, its own GCS kept alive when its raylet is killed
    (`cluster.head_node.kill_raylet()`): the node is then marked dead, and the cluster has none
    alive. The test process does not connect to it."""
    _import_ray()
    from ray._common.utils import get_ray_address_file
    from ray.cluster_utils import Cluster

    # Ray notes the newest head's address in a file that `ray.init()` without an address
    # joins: the address it held before is put back, not left naming a dead cluster.
    address_file = Path(get_ray_address_file(None))
    noted = address_file.read_text() if address_file.exists() else None
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "_system_config": FAST_DEATH},
    )
    try:
        cluster.wait_for_nodes()
        assert cluster.address.startswith("127.0.0.1:"), cluster.address
        yield LocalCluster(cluster.address, cluster)
    finally:
        # Its processes killed, not `cluster.shutdown()`: that also resets this process's
        # connection to the session's cluster (`ray_cluster`), which later tests use.
        cluster.head_node.kill_all_processes(check_alive=False, allow_graceful=False, wait=True)
        if noted is None:
            address_file.unlink(missing_ok=True)
        else:
            address_file.write_text(noted)
