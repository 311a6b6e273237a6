"""The simulated cloud: a twin of what Nova, Neutron, Cinder and Heat keep for a VNF.

`SimCloud` owns the state (networks and subnets, ports with fixed IPs and MACs, floating IPs,
servers with host keys, volumes, and deployments — the twin of Heat stacks, one per VNF instance)
and offers small synchronous operations, each one transaction on a `StateStore` (SQLite) that
touches only the records it changes: an operation on one instance costs the same with one or
with thousands of instances deployed. The timing of a real cloud (boot, API and delete latencies)
is played by the driver (`driver.py`), which awaits between these operations.

Addresses are unique across the whole cloud (every network, fixed and floating), so an address
always names one port: management-driver twins can resolve "the host at 10.10.0.12" to a server.

The operations live with their concern: networks, ports and floating IPs (`networks.py`),
deployments and VNFCs (`deployments.py`), servers and volumes (`compute.py`), fault injection
(`faults.py`), lookups, extras and snapshots (`lookups.py`, `snapshot.py`).
"""

from __future__ import annotations

from pathlib import Path

from vnfm.adapters.infra.simulator.compute import ComputeOps
from vnfm.adapters.infra.simulator.deployments import DeploymentOps
from vnfm.adapters.infra.simulator.faults import FaultOps
from vnfm.adapters.infra.simulator.lookups import LookupOps
from vnfm.adapters.infra.simulator.model import SimConfig
from vnfm.adapters.infra.simulator.networks import NetworkOps
from vnfm.adapters.infra.simulator.store import LOCK_TIMEOUT, StateStore


class SimCloud(NetworkOps, DeploymentOps, ComputeOps, FaultOps, LookupOps):
    """The simulated cloud's state and its (synchronous, transactional) operations."""

    @classmethod
    def at(
        cls,
        path: Path | str,
        config: SimConfig | None = None,
        *,
        fsync: bool = False,
        migrate_from: Path | str | None = None,
        lock_timeout: float = LOCK_TIMEOUT,
    ) -> SimCloud:
        """A cloud persisted in a SQLite file (shared by every process that opens the same file).

        `migrate_from`: the JSON state file of the store this one replaced; imported once, into
        an empty store, then renamed `<name>.migrated`. `fsync`: every commit reaches the disk
        (SQLite `synchronous=FULL`), not only the operating system. `lock_timeout`: how long a
        write waits for another process's (see `store.py`).
        """
        store = StateStore(path, fsync=fsync, lock_timeout=lock_timeout)
        if migrate_from is not None:
            store.import_json_file(Path(migrate_from))
        return cls(store, config)
