"""The seeds' Kubernetes-cluster flows through the REAL engine, the kubeadm driver and SSH against
real hosts (engine_hosts.py): each simulated server is a test host at the simulated port's
address, reached with the production SshAccess (pinned host keys). etcd (TLS), HAProxy and
/etc/hosts are real, and so is kubectl, against the simulator's Kubernetes API on the test bridge
(kubernetes/kubeapi.py); kubeadm and kubelet are the stand-ins of kubernetes/standins.py (no
Kubernetes can run here).

Flows (one VNF, in order): HA instantiate (3 masters + 2 workers); heal of the worker, whose VM is
rebuilt with a new host key and an empty disk; scale out by one worker whose `kubeadm join` fails
half-way through kubeadm_join.sh (FAILED_TEMP naming host and script), then retry (COMPLETED);
scale in by one worker; heal of the master that ran `kubeadm init` (out of etcd and every HAProxy,
VM rebuilt, joins again as a control plane); scale out failing the same way, then rollback.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import require
from tests.integration.engine_hosts import (
    SIM_CIDR,
    SIM_NET,
    SIM_PUBLIC_CIDR,
    SIM_PUBLIC_NET,
    HostBackedInfra,
    HostPool,
)
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
from vnfm.entrypoints.cli.demo.basic import instantiate_request
from vnfm.examples import example_csar

pytestmark = pytest.mark.integration

OP_DEADLINE = 180.0
MASTER, WORKER = "masterNode", "workerNode"
FAIL_ONCE = r"""#!/bin/bash
# injected by the test: the first `kubeadm join` on this host fails (after kubeadm_join.sh wrote
# its configuration), later calls reach the stand-in again
if [ "${1:-}" = join ] && [ -e /etc/vnfm-test/fail-join-once ]; then
  rm -f /etc/vnfm-test/fail-join-once
  echo "injected failure: kubeadm join interrupted" >&2
  exit 1
fi
exec /usr/local/lib/vnfm-standin/kubeadm.real "$@"
"""


class Site:
    def __init__(self, app: App, pool: HostPool, ssh: SshExecutor, api: SimApi) -> None:
        self.app = app
        self.api = api
        self.pool = pool
        self.ssh = ssh
        self.fail_next_join = False
        self.inst_id = ""

    def body(self) -> dict[str, Any]:
        body = instantiate_request("ha")
        p = body["additionalParams"]["k8s_cluster_installation_param"]
        key = self.pool.bed.client_key_pem
        for role in ("master_node", "worker_node"):
            p[role].update(username="root", ssh_private_key=key)
            p[role].pop("password", None)
        p["node_ready_timeout"] = 30
        p["drain_timeout"] = 30
        return body

    async def wait(self, occ: OpOcc) -> OpOcc:
        loop = asyncio.get_running_loop()
        end = loop.time() + OP_DEADLINE
        while True:
            cur = self.app.instances.op_get(occ.id)
            if cur.operation_state in (OpState.COMPLETED, OpState.FAILED, OpState.ROLLED_BACK,
                                       OpState.FAILED_TEMP) and occ.id not in self.app.engine.running:
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


@pytest.fixture
async def site(testbed: Testbed, ssh: SshExecutor, tmp_path: Path) -> AsyncIterator[Site]:
    require("etcd", "etcdctl", "haproxy", "openssl", "python3")
    testbed.add_bridge_address(f"{SIM_NET}.1/24")
    testbed.add_bridge_address(f"{SIM_PUBLIC_NET}.1/24")
    pki = standins.Pki.create()
    api = SimApi(tmp_path / "kube-api", [])
    holder: list[Site] = []

    async def provision(pool: HostPool, h: TestHost, vnfc: Vnfc) -> None:
        """What the VM image holds: the stand-ins and the cluster's PKI (kubeadm would make it)."""
        await standins.install(ssh, h, pki, etcd_hosts=pool.hosts(MASTER), api=api)
        if vnfc.vdu_id == MASTER:
            await standins.calico_mirror(ssh, h)
        if vnfc.vdu_id == WORKER and holder and holder[0].fail_next_join:
            holder[0].fail_next_join = False
            await ssh.run_script(h.target(), "mv /usr/local/sbin/kubeadm /usr/local/lib/vnfm-standin/kubeadm.real\n"
                                 "mkdir -p /etc/vnfm-test && touch /etc/vnfm-test/fail-join-once\n", check=True)
            await ssh.put_file(h.target(), "/usr/local/sbin/kubeadm", FAIL_ONCE, mode=0o755)

    pool = HostPool(testbed, provision)
    settings = Settings(data_dir=tmp_path, probe_callbacks=False, orphan_after=120)
    sim = SimCloud(MemoryStateStore(), SimConfig(boot_time=0, api_latency=0, delete_time=0, mgmt_cidr=SIM_CIDR,
                                                 public_cidr=SIM_PUBLIC_CIDR))
    app = build(settings, sim=sim, notifier=None, twin=TwinConfig(poll=0.002))
    app.infra_drivers.register("simulator", lambda: HostBackedInfra(SimulatorInfraDriver(sim), pool))
    app.infra_drivers.register_nodes("simulator", SshAccess(timeout=120))
    await app.start()
    s = Site(app, pool, ssh, api)
    holder.append(s)
    try:
        yield s
    finally:
        await app.stop()
        testbed.destroy_hosts(pool.hosts())
        api.stop()


async def test_engine_ha_instantiate_worker_heal_half_failed_join_retry_scale_in(site: Site) -> None:
    app = site.app
    pkg = app.packages.upload(app.packages.create({}).id, example_csar())
    site.inst_id = app.instances.create({"vnfdId": str(pkg.vnfd_id)}).id
    names = ["masternode-0", "masternode-1", "masternode-2"]

    # ---- HA instantiate: 3 masters (etcd, HAProxy on each), 2 workers, all over real SSH
    await site.done(app.instances.instantiate(site.inst_id, site.body()))
    masters, workers = site.vnfcs(MASTER), site.vnfcs(WORKER)
    assert len(masters) == 3 and len(workers) == 2 and len(site.pool.hosts()) == 5
    worker = next(w for w in workers if w.name.endswith("-0"))
    m0 = site.pool.host_of(masters[0].id)
    assert await site.etcd_members(m0) == names
    for m in masters:
        assert await site.backends(site.pool.host_of(m.id)) == names
    st = site.state()
    assert st["host_keys"] == {v: b.host.host_key for v, b in site.pool.by_vnfc.items()}
    assert st["vip"].startswith(f"{SIM_NET}.")
    assert site.nodes() == [*names, "workernode-0", "workernode-1"]  # registered in the API
    w_host = site.pool.host_of(worker.id)
    (join,) = await site.joined(w_host)
    assert re.fullmatch(r"join workernode-0 control-plane=0 token-sha256=[0-9a-f]{64}", join), join
    assert f"{w_host.address} workernode-0" in await site.hosts_file(m0)

    # ---- heal the worker: the cloud rebuilds its VM (new host key, empty disk), it joins again
    old_key, old_server = w_host.host_key, worker.server_id
    await site.done(app.instances.heal(site.inst_id, {"vnfcInstanceId": [worker.id]}))
    healed = next(v for v in site.vnfcs(WORKER) if v.id == worker.id)
    assert healed.server_id != old_server and site.pool.by_vnfc[worker.id].rebuilt == 1
    assert w_host.host_key != old_key and site.state()["host_keys"][worker.id] == w_host.host_key
    assert [e.split()[:2] for e in await site.joined(w_host)] == [["join", "workernode-0"]]
    assert site.nodes() == [*names, "workernode-0", "workernode-1"]

    # ---- scale out by one worker whose join fails half-way: FAILED_TEMP, then retry completes it
    site.fail_next_join = True
    scale = {"type": "SCALE_OUT", "aspectId": "worker_instance", "numberOfSteps": 1}
    occ = await site.wait(app.instances.scale(site.inst_id, copy.deepcopy(scale)))
    assert occ.operation_state == OpState.FAILED_TEMP, occ.error
    (new,) = [v for v in site.vnfcs(WORKER) if v.id not in {w.id for w in workers}]
    new_host = site.pool.host_of(new.id)
    detail = json.dumps(occ.error)
    assert occ.error["step"] == "k8s-kubeadm-join" and occ.error["host"] == new.cps[0].floating_ip, detail
    assert "workernode-2 failed on" in detail and "injected failure: kubeadm join interrupted" in detail, detail
    assert await site.joined(new_host) == []  # half-way: configured, not joined
    occ = await site.done(app.instances.retry(occ.id))
    assert [e.split()[:2] for e in await site.joined(new_host)] == [["join", "workernode-2"]]
    assert f"{new_host.address} workernode-2" in await site.hosts_file(m0)
    assert site.state()["host_keys"][new.id] == new_host.host_key

    # ---- scale in by one worker (the newest): drained and deleted from the cluster, host gone
    await site.done(app.instances.scale(site.inst_id, {**scale, "type": "SCALE_IN"}))
    assert {v.id for v in site.vnfcs(WORKER)} == {w.id for w in workers} and len(site.pool.hosts()) == 5
    assert [e.split()[:2] for e in site.pool.events if e.startswith("remove ")] == [["remove", new.id]]
    removed_name = "workernode-2"
    assert removed_name not in site.nodes()  # drained and deleted by the real kubectl
    assert f" {removed_name}" not in await site.hosts_file(m0)
    assert await site.etcd_members(m0) == names

    # ---- heal the master that ran kubeadm init: its VM is rebuilt (new key, empty disk) and it
    # joins again as a control plane; etcd has its 3 members again, every HAProxy lists 3 masters
    m1 = site.pool.host_of(masters[1].id)
    old_key = m0.host_key
    await site.done(app.instances.heal(site.inst_id, {"vnfcInstanceId": [masters[0].id]}))
    assert m0.host_key != old_key and site.pool.by_vnfc[masters[0].id].rebuilt == 1
    assert site.state()["host_keys"][masters[0].id] == m0.host_key
    assert await site.etcd_members(m1) == names
    assert [e.split()[:3] for e in await site.joined(m0)] == [["join", "masternode-0", "control-plane=1"]]
    for m in masters:
        assert await site.backends(site.pool.host_of(m.id)) == names
    assert site.nodes() == [*names, "workernode-0", "workernode-1"]

    # ---- scale out failing half-way again, then rollback: the VNFC and its host are gone
    site.fail_next_join = True
    occ = await site.wait(app.instances.scale(site.inst_id, copy.deepcopy(scale)))
    assert occ.operation_state == OpState.FAILED_TEMP, occ.error
    (extra,) = [v for v in site.vnfcs(WORKER) if v.id not in {w.id for w in workers}]
    occ = await site.wait(app.instances.rollback(occ.id))
    assert occ.operation_state == OpState.ROLLED_BACK, occ.error
    assert {v.id for v in site.vnfcs(WORKER)} == {w.id for w in workers}
    assert extra.id not in site.pool.by_vnfc and len(site.pool.hosts()) == 5
