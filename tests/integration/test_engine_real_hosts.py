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

import copy
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import require
from tests.integration.engine_hosts import SIM_NET, HostPool
from tests.integration.engine_site import MASTER, WORKER, Site, open_site
from tests.integration.harness import Testbed, TestHost
from tests.integration.kubernetes import standins
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.domain.model import OpState
from vnfm.domain.resources import Vnfc
from vnfm.entrypoints.cli.demo.basic import instantiate_request
from vnfm.examples import example_csar

pytestmark = pytest.mark.integration

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


def cluster_body(flavour: str, key: str = "") -> dict[str, Any]:
    """The seed's instantiate request for the example package, logging in as root with the test
    bed's key (the hosts' login), with short node deadlines."""
    out = instantiate_request(flavour)
    p = out["additionalParams"]["k8s_cluster_installation_param"]
    for role in ("master_node", "worker_node"):
        p[role].update(username="root", ssh_private_key=key)
        p[role].pop("password", None)
    p["node_ready_timeout"] = 30
    p["drain_timeout"] = 30
    return out


async def provision_cluster_node(site: Site, pool: HostPool, h: TestHost, vnfc: Vnfc) -> None:
    """What the VM image holds: the stand-ins and the cluster's PKI (kubeadm would make it)."""
    await standins.install(site.ssh, h, site.pki, etcd_hosts=pool.hosts(MASTER), api=site.api)
    if vnfc.vdu_id == MASTER:
        await standins.calico_mirror(site.ssh, h)
    if vnfc.vdu_id == WORKER and site.fail_next_join:
        site.fail_next_join = False
        await site.ssh.run_script(h.target(), "mv /usr/local/sbin/kubeadm /usr/local/lib/vnfm-standin/kubeadm.real\n"
                                  "mkdir -p /etc/vnfm-test && touch /etc/vnfm-test/fail-join-once\n", check=True)
        await site.ssh.put_file(h.target(), "/usr/local/sbin/kubeadm", FAIL_ONCE, mode=0o755)


@pytest.fixture
async def site(testbed: Testbed, ssh: SshExecutor, tmp_path: Path) -> AsyncIterator[Site]:
    require("etcd", "etcdctl", "haproxy", "openssl", "python3")
    async with open_site(testbed, ssh, tmp_path, provision_cluster_node) as s:
        yield s


async def test_engine_ha_instantiate_worker_heal_half_failed_join_retry_scale_in(site: Site) -> None:
    app = site.app
    site.create(example_csar())
    names = ["masternode-0", "masternode-1", "masternode-2"]

    # ---- HA instantiate: 3 masters (etcd, HAProxy on each), 2 workers, all over real SSH
    await site.done(app.instances.instantiate(site.inst_id, cluster_body("ha", site.pool.bed.client_key_pem)))
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
