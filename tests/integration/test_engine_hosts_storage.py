"""Seed 001's storage server through the REAL engine, the kubeadm driver and SSH against test hosts
(engine_site.py): the `simple_pv` flavour (1 master, 2 workers, the storage server VM with its
Cinder volume). The volume is a REAL block device: a loop device of the machine over a file of the
test, given as `cinder_volume_setup_params[].device` (a test host sees the machine's /dev), so
blkid, mkfs.ext4 and mount are the real programs; it outlives the storage server's VM like a
Cinder volume. nfs-ganesha serves the exports for real (read and written through libnfs from a
worker); the PersistentVolumes live in the simulated Kubernetes API (real kubectl on the master).

Flow: instantiate (volume formatted, mounted, exported, PVs registered); a file written over NFS;
heal of the storage server while a PV is Bound (FAILED_TEMP naming the claim, all PVs kept), the
claim released, retry: the VM rebuilt (new host key, empty disk), the volume mounted again NOT
formatted, exported again, each PV deleted and registered again (new uid) at the same address, and
the file read back over NFS from the new server."""

from __future__ import annotations

import contextlib
import copy
import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import require
from tests.integration.engine_hosts import SIM_CIDR, HostPool
from tests.integration.engine_site import MASTER, WORKER, Site, open_site
from tests.integration.harness import Testbed, TestHost
from tests.integration.test_engine_real_hosts import cluster_body, provision_cluster_node
from tests.unit.kubernetes.test_registry_storage import STORAGE
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.domain.model import OpState
from vnfm.domain.resources import Vnfc
from vnfm.examples import example_csar

pytestmark = pytest.mark.integration

STORAGE_VDU = "storage_server"
PVS = ["nfs-pv1", "nfs-pv2", "nfs-pv3"]


@contextlib.contextmanager
def loop_device(image: Path, size_mb: int = 64) -> Iterator[str]:
    """A loop device of the machine over a sparse file: the storage server's "Cinder volume"."""
    with image.open("wb") as f:
        f.truncate(size_mb * 1024 * 1024)
    dev = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True, text=True,
                         check=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "--detach", dev], capture_output=True, check=False)


async def provision(site: Site, pool: HostPool, h: TestHost, vnfc: Vnfc) -> None:
    if vnfc.vdu_id != STORAGE_VDU:  # the storage server's image is a plain Ubuntu: nothing to add
        await provision_cluster_node(site, pool, h, vnfc)


@pytest.fixture
async def site(testbed: Testbed, ssh: SshExecutor, tmp_path: Path) -> AsyncIterator[tuple[Site, str]]:
    require("etcd", "etcdctl", "haproxy", "openssl", "python3", "losetup", "mkfs.ext4", "blkid", "ganesha.nfsd",
            "nfs-cat", "nfs-cp")
    if not list(Path("/usr/lib").glob("*/ganesha/libfsalvfs.so")):
        pytest.skip("nfs-ganesha's VFS module is not installed (package nfs-ganesha-vfs)")
    if not Path("/dev/loop-control").exists():
        pytest.skip("no loop devices on this machine (the storage server's volume is one)")
    with loop_device(tmp_path / "volume.img") as dev:
        async with open_site(testbed, ssh, tmp_path, provision) as s:
            yield s, dev


def request(key: str, device: str) -> dict[str, Any]:
    body = cluster_body("simple_pv", key)
    storage = copy.deepcopy(STORAGE)
    ss = storage["storage_server"]
    ss.update(username="root", ssh_private_key=key)
    ss.pop("password")
    ss["cinder_volume_setup_params"][0]["device"] = device
    for e in ss["nfs_server_setup_params"]:
        e["export_to"] = SIM_CIDR  # the cluster's network (the seed's 10.10.0.0/24)
    body["additionalParams"]["k8s_cluster_installation_param"].update(storage)
    return body


def nfs_url(server: str, path: str) -> str:
    return f"nfs://{server}{path}?version=4"


def pvs(site: Site) -> dict[str, tuple[str, str, str]]:
    """PV name -> (uid, NFS server, phase), as the simulated API holds them."""
    return {n: (p["uid"], p["nfs_server"], p["phase"]) for n, p in site.api.state()["pvs"].items()}


async def test_engine_storage_server_heal_real_volume_ganesha_pvs_re_registered(site: tuple[Site, str]) -> None:
    s, dev = site
    app, ssh = s.app, s.ssh
    s.create(example_csar())

    # ---- instantiate: the volume formatted (real ext4) and mounted, exported by ganesha, PVs registered
    occ = await s.done(app.instances.instantiate(s.inst_id, request(s.pool.bed.client_key_pem, dev)))
    (storage,) = s.vnfcs(STORAGE_VDU)
    st_host = s.pool.host_of(storage.id)
    addr = st_host.address
    assert len(s.vnfcs(MASTER)) == 1 and len(s.vnfcs(WORKER)) == 2
    msgs = [e["message"] for e in occ.events]
    assert any("formatted and mounted at /volume" in m for m in msgs), msgs
    mnt = await ssh.run(st_host.target(), ["findmnt", "-n", "-o", "SOURCE,FSTYPE", "/volume"], check=True)
    assert mnt.stdout.split() == [dev, "ext4"]
    before = pvs(s)
    assert sorted(before) == PVS and {(srv, ph) for _, srv, ph in before.values()} == {(addr, "Available")}
    assert s.nodes() == ["masternode-0", "workernode-0", "workernode-1"]  # not a cluster node
    worker = s.pool.host_of(s.vnfcs(WORKER)[0].id)
    await ssh.put_file(worker.target(), "/root/data.txt", "kept on the volume\n")
    cp = await ssh.run(worker.target(), ["nfs-cp", "/root/data.txt", nfs_url(addr, "/volume/nfs/pv1/data.txt")],
                       timeout=30)
    assert cp.ok, cp.stderr

    # ---- heal while nfs-pv2 is Bound: refused before anything is replaced, every PV kept
    def bind(claim: str | None) -> None:
        def fn(st: dict[str, Any]) -> None:
            st["pvs"]["nfs-pv2"]["phase"], st["pvs"]["nfs-pv2"]["claim"] = \
                ("Bound", claim) if claim else ("Available", None)
        s.api.change(fn)

    bind("default/data-db-0")
    old_key, old_server = st_host.host_key, storage.server_id
    occ = await s.wait(app.instances.heal(s.inst_id, {"vnfcInstanceId": [storage.id]}))
    assert occ.operation_state == OpState.FAILED_TEMP, occ.error
    assert "PersistentVolumes in use: nfs-pv2 (claim default/data-db-0)" in json.dumps(occ.error), occ.error
    assert sorted(pvs(s)) == PVS and s.pool.by_vnfc[storage.id].rebuilt == 0

    # ---- released: the retry replaces the VM; the kept volume is mounted again, not formatted
    bind(None)
    occ = await s.done(app.instances.retry(occ.id))
    healed = next(v for v in s.vnfcs(STORAGE_VDU) if v.id == storage.id)
    assert healed.server_id != old_server and s.pool.by_vnfc[storage.id].rebuilt == 1
    assert st_host.host_key != old_key and s.state()["host_keys"][storage.id] == st_host.host_key
    msgs = [e["message"] for e in occ.events]
    assert any("mounted at /volume" in m for m in msgs) and not any("formatted" in m for m in msgs), msgs
    after = pvs(s)
    assert sorted(after) == PVS
    for name in PVS:  # deleted and registered again: a new object, at the (same) server's address
        assert after[name][0] != before[name][0] and after[name][1:] == (addr, "Available"), (before, after)
    cat = await ssh.run(worker.target(), ["nfs-cat", nfs_url(addr, "/volume/nfs/pv1/data.txt")], timeout=30)
    assert cat.ok and cat.stdout == "kept on the volume\n", cat.stderr
    assert "pvs_affected" not in s.state()
