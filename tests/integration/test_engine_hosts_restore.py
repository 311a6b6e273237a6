"""The single-master heal from an etcd snapshot (issue 27 item 3) through the REAL engine, the
kubeadm driver and SSH on test hosts (engine_hosts.py; kubeadm and kubelet are the stand-ins of
kubernetes/standins.py, etcd is real with TLS): a 1-master cluster whose backup was taken by the
schedule, a key written after it, the master's etcd dead (it still answers SSH: no snapshot can be
taken now, the VNFM's newest is used), then the heal: the master's VM rebuilt (new key, empty disk),
the PKI put back by SFTP, the snapshot restored as the only member, the stand-in `kubeadm init` run
with DirAvailable--var-lib-etcd ignored; the real etcd serves the snapshot's keys only; the workers
are the same hosts (not rebuilt), their kubelets at the API server and Ready."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.integration.conftest import require
from tests.integration.engine_hosts import HostPool
from tests.integration.engine_site import MASTER, WORKER, Site, open_site
from tests.integration.harness import Testbed, TestHost
from tests.integration.kubernetes import standins
from tests.integration.test_engine_real_hosts import cluster_body
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.domain.resources import Vnfc
from vnfm.examples import example_csar

pytestmark = pytest.mark.integration

# what kubeadm init would have written besides what the stand-in hosts get (their ca.crt and
# etcd/ca.crt come from standins.Pki): the CA keys, the front-proxy CA, the service-account pair
MORE_PKI = r"""set -euo pipefail
pki=/etc/kubernetes/pki
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$pki/ca.key" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$pki/etcd/ca.key" 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/front-proxy-ca.key" \
  -out "$pki/front-proxy-ca.crt" -subj /CN=front-proxy-ca -days 1 2>/dev/null
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
"""


def etcdctl(args: str) -> str:
    pki = "/etc/kubernetes/pki/etcd"
    return (f"ETCDCTL_API=3 etcdctl --endpoints=https://127.0.0.1:2379 --cacert={pki}/ca.crt "
            f"--cert={pki}/healthcheck-client.crt --key={pki}/healthcheck-client.key {args}")


async def provision(site: Site, pool: HostPool, h: TestHost, vnfc: Vnfc) -> None:
    """The VM image: the stand-ins; on the first master, the PKI kubeadm init would make (a rebuilt
    master gets it from the VNFM's copy)."""
    await standins.install(site.ssh, h, site.pki, etcd_hosts=pool.hosts(MASTER), api=site.api)
    if vnfc.vdu_id == MASTER:
        await standins.calico_mirror(site.ssh, h)
        if pool.by_vnfc[vnfc.id].rebuilt == 0:
            await site.ssh.run_script(h.target(), MORE_PKI, check=True)


@pytest.fixture
async def site(testbed: Testbed, ssh: SshExecutor, tmp_path: Path) -> AsyncIterator[Site]:
    require("etcd", "etcdctl", "haproxy", "openssl", "python3")
    async with open_site(testbed, ssh, tmp_path, provision) as s:
        yield s


async def test_engine_single_master_restored_from_backup_workers_kept(site: Site) -> None:
    app = site.app
    site.create(example_csar())
    body = cluster_body("simple", site.pool.bed.client_key_pem)
    body["additionalParams"]["etcd_backup"] = {"interval": 3600, "keep": 2}
    await site.done(app.instances.instantiate(site.inst_id, body))
    (master,), workers = site.vnfcs(MASTER), site.vnfcs(WORKER)
    m = site.pool.host_of(master.id)
    assert site.state()["pki"]["secret"]  # captured from the master at instantiate
    assert (await site.ssh.run(m.target(), etcdctl("put /registry/configmaps/default/before 1"))).ok
    assert app.backups is not None and await app.backups.round() == 1
    assert (await site.ssh.run(m.target(), etcdctl("put /registry/configmaps/default/after 1"))).ok
    worker_keys = {w.id: site.pool.host_of(w.id).host_key for w in workers}
    old_key = m.host_key
    # the master's etcd dies (the stand-in kubeadm recorded its pid): no snapshot can be taken now
    assert (await site.ssh.run(m.target(), 'kill "$(cat /run/vnfm-standin/etcd.pid)"')).ok

    occ = await site.done(app.instances.heal(site.inst_id, {"vnfcInstanceId": [master.id]}))
    lines = [e["message"] for e in app.instances.op_get(occ.id).events]
    plan = next(ln for ln in lines if ln.startswith("restoring the single control plane masternode-0"))
    assert "(the newest the VNFM holds" in plan and "are lost" in plan
    assert site.pool.by_vnfc[master.id].rebuilt == 1 and m.host_key != old_key  # the VM rebuilt
    got = await site.ssh.run(m.target(), etcdctl("get --prefix --keys-only /registry/configmaps/default/"))
    assert got.stdout.split() == ["/registry/configmaps/default/before"], got.stderr  # the snapshot's state
    assert await site.etcd_members(m) == ["masternode-0"]
    init = [c for c in await standins.argv_log(site.ssh, m) if c.startswith("kubeadm init")]
    assert len(init) == 1 and init[0].endswith("--ignore-preflight-errors=DirAvailable--var-lib-etcd")
    modes = await site.ssh.run(m.target(), "stat -c '%a' /etc/kubernetes/pki/ca.key /etc/kubernetes/pki/sa.key")
    assert modes.stdout.split() == ["600", "600"]
    # the workers: the same VNFCs and hosts (not rebuilt), their kubelets at the master, Ready
    assert {w.id: site.pool.host_of(w.id).host_key for w in site.vnfcs(WORKER)} == worker_keys
    assert all(site.pool.by_vnfc[w.id].rebuilt == 0 for w in workers)
    for w in workers:
        conf = (await site.ssh.get_file(site.pool.host_of(w.id).target(), "/etc/kubernetes/kubelet.conf")).decode()
        assert f"server: https://{m.address}:6443" in conf
    assert site.nodes() == ["masternode-0", "workernode-0", "workernode-1"]
