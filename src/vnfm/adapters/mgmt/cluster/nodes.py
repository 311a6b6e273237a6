"""Node-level work shared by cluster drivers: /etc/hosts of the cluster, draining and removing a
worker, uncordoning the workers a rolled back scale-in keeps."""

from __future__ import annotations

from collections.abc import Sequence

from vnfm.adapters.mgmt.cluster.topology import Cluster, Node, gather
from vnfm.nodesteps.hosts import SetHostsEntries
from vnfm.nodesteps.kubernetes import DeleteNode, DrainNode, UncordonNode


async def hosts(c: Cluster, on: Sequence[Node]) -> None:
    """Every cluster node's name resolvable on `on` (a marked block of /etc/hosts)."""
    entries = tuple((n.nic, (n.name,)) for n in c.nodes)
    await gather([c.ex.run(n.ssh, SetHostsEntries(entries, block="vnfm-k8s")) for n in on])


async def remove_worker(c: Cluster, admin: Node, n: Node) -> None:
    """Drain (PDBs respected, with a deadline) then delete node `n`, through `admin`."""
    await c.ex.run(admin.ssh, DrainNode(n.name, c.p.drain_timeout))
    await c.ex.run(admin.ssh, DeleteNode(n.name))


async def uncordon(c: Cluster, admin: Node, kept: Sequence[Node]) -> None:
    """Make `kept` schedulable again, through `admin` (pods already evicted stay where they went)."""
    for n in kept:
        await c.ex.run(admin.ssh, UncordonNode(n.name))
