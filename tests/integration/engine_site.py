"""One vnfm (the REAL engine, drivers and SshAccess) over a simulated cloud whose servers are test
hosts (engine_hosts.py), for the engine-over-real-hosts flows (test_engine_hosts_*.py,
test_engine_real_hosts.py). Each flow module says what its hosts are provisioned with (`Provision`:
what the VM image would hold) and drives the engine through the service layer, as the API does."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.integration.engine_hosts import SIM_CIDR, SIM_NET, SIM_PUBLIC_CIDR, SIM_PUBLIC_NET, HostBackedInfra, HostPool
from tests.integration.harness import Testbed, TestHost
from tests.integration.kubernetes import standins
from tests.integration.kubernetes.kubeapi import SimApi
from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig, SimulatorInfraDriver
from vnfm.adapters.infra.simulator.twin import TwinConfig
from vnfm.adapters.nodes.ssh import SshAccess
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.bootstrap import App, build
from vnfm.config import Settings
from vnfm.domain.model import OpOcc, OpState
from vnfm.domain.resources import Vnfc

OP_DEADLINE = 180.0
MASTER, WORKER = "masterNode", "workerNode"
ENDED = (OpState.COMPLETED, OpState.FAILED, OpState.ROLLED_BACK, OpState.FAILED_TEMP)


class Site:
    """The vnfm app, the host pool behind its simulated cloud and the simulated Kubernetes API."""

    def __init__(self, app: App, pool: HostPool, ssh: SshExecutor, api: SimApi) -> None:
        self.app = app
        self.api = api
        self.pool = pool
        self.ssh = ssh
        self.fail_next_join = False
        self.inst_id = ""
        self.pki = standins.Pki.create()  # the cluster's, as kubeadm would make it

    def create(self, csar: bytes) -> str:
        pkg = self.app.packages.upload(self.app.packages.create({}).id, csar)
        self.inst_id = self.app.instances.create({"vnfdId": str(pkg.vnfd_id)}).id
        return self.inst_id

    async def wait(self, occ: OpOcc) -> OpOcc:
        loop = asyncio.get_running_loop()
        end = loop.time() + OP_DEADLINE
        while True:
            cur = self.app.instances.op_get(occ.id)
            if cur.operation_state in ENDED and occ.id not in self.app.engine.running:
                return cur
            assert loop.time() < end, f"{occ.operation} still {cur.operation_state} after {OP_DEADLINE}s"
            await asyncio.sleep(0.05)

    async def done(self, occ: OpOcc) -> OpOcc:
        occ = await self.wait(occ)
        assert occ.operation_state == OpState.COMPLETED, (occ.error, self.pool.events)
        return occ

    def vnfcs(self, vdu: str | None = None) -> list[Vnfc]:
        res = self.app.instances.get(self.inst_id).resources
        return [v for v in res.vnfcs if vdu is None or v.vdu_id == vdu]

    def state(self) -> dict[str, Any]:
        ds = self.app.instances.get(self.inst_id).driver_state
        (st,) = ds.values()
        return st

    async def etcd_members(self, h: TestHost) -> list[str]:
        pki = "/etc/kubernetes/pki/etcd"
        res = await self.ssh.run(h.target(), ["etcdctl", "--endpoints=https://127.0.0.1:2379", f"--cacert={pki}/ca.crt",
                                              f"--cert={pki}/healthcheck-client.crt",
                                              f"--key={pki}/healthcheck-client.key", "--dial-timeout=2s",
                                              "--command-timeout=5s", "member", "list", "-w", "json"], check=True)
        return sorted(m.get("name", "") for m in json.loads(res.stdout)["members"])

    async def backends(self, h: TestHost) -> list[str]:
        cfg = (await self.ssh.get_file(h.target(), "/etc/haproxy/haproxy.cfg")).decode()
        return sorted(ln.split()[1] for ln in cfg.splitlines() if ln.strip().startswith("server "))

    async def hosts_file(self, h: TestHost) -> str:
        return (await self.ssh.get_file(h.target(), "/etc/hosts")).decode()

    def nodes(self) -> list[str]:
        return sorted(self.api.state()["nodes"])

    async def joined(self, h: TestHost) -> list[str]:
        return [e for e in await standins.events(self.ssh, h) if e.startswith(("init ", "join "))]


# (site, pool, host, vnfc) -> None: what the VM image of this VNFC's VDU holds
SiteProvision = Callable[[Site, HostPool, TestHost, Vnfc], Awaitable[None]]


@contextlib.asynccontextmanager
async def open_site(testbed: Testbed, ssh: SshExecutor, tmp_path: Path, provision: SiteProvision,
                    node_access: SshAccess | None = None, api_sans: tuple[str, ...] = ()) -> AsyncIterator[Site]:
    """A started vnfm whose simulated servers are test hosts; `provision(site, pool, host, vnfc)`
    prepares each new or rebuilt host; `api_sans`: more addresses the simulated API's certificate
    names (where hosts relay to it). Every host and the API are gone when the block ends."""
    testbed.add_bridge_address(f"{SIM_NET}.1/24")
    testbed.add_bridge_address(f"{SIM_PUBLIC_NET}.1/24")
    api = SimApi(tmp_path / "kube-api", [], sans=api_sans)
    holder: list[Site] = []

    async def prov(pool: HostPool, h: TestHost, vnfc: Vnfc) -> None:
        await provision(holder[0], pool, h, vnfc)

    pool = HostPool(testbed, prov)
    settings = Settings(data_dir=tmp_path, probe_callbacks=False, orphan_after=120)
    sim = SimCloud(MemoryStateStore(), SimConfig(boot_time=0, api_latency=0, delete_time=0, mgmt_cidr=SIM_CIDR,
                                                 public_cidr=SIM_PUBLIC_CIDR))
    app = build(settings, sim=sim, notifier=None, twin=TwinConfig(poll=0.002))
    app.infra_drivers.register("simulator", lambda: HostBackedInfra(SimulatorInfraDriver(sim), pool))
    app.infra_drivers.register_nodes("simulator", node_access or SshAccess(timeout=120))
    await app.start()
    await app.stop_backup_schedule()  # the tests run rounds themselves: a late first round would take theirs
    site = Site(app, pool, ssh, api)
    holder.append(site)
    try:
        yield site
    finally:
        await app.stop()
        testbed.destroy_hosts(pool.hosts())
        api.stop()
