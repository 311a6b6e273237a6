"""The storage server (seed 001): its Cinder volume(s) formatted and mounted, NFS exports, the NFS
client on the cluster's nodes, and NFS PersistentVolumes registered in the cluster."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Any

import yaml

from vnfm.adapters.mgmt.cluster import params as P
from vnfm.adapters.mgmt.cluster.topology import Cluster, Node, gather, pin
from vnfm.domain.errors import OperationFailed
from vnfm.nodesteps.kubernetes import ApplyPersistentVolume, DeletePersistentVolumes
from vnfm.nodesteps.storage import InstallNfsClient, NfsExport, NfsExports, PrepareVolume


def storage_healed(c: Cluster) -> bool:
    return c.storage is not None and not c.ctx.heal_entire and \
        any(v.id == c.storage.vnfc.id for v in c.ctx.healed)


async def nfs_clients(c: Cluster, nodes: Sequence[Node]) -> None:
    if c.p.storage_server is None or not nodes:
        return
    await gather([c.ex.run(n.ssh, InstallNfsClient()) for n in nodes])


def volume_steps(c: Cluster) -> list[PrepareVolume]:
    ss, st = c.p.storage_server, c.storage
    assert ss is not None and st is not None
    out = []
    base = f"{P.ROOT}.storage_server.cinder_volume_setup_params"
    for i, v in enumerate(ss.volumes):
        found = next((s for s in st.vnfc.storages if s.virtual_storage_desc_id == v.volume_resource_id), None)
        if found is None:
            have = ", ".join(sorted(s.virtual_storage_desc_id for s in st.vnfc.storages)) or "none"
            raise OperationFailed(f"{base}[{i}].volume_resource_id: storage server {st.vnfc.name} has no volume "
                                  f"'{v.volume_resource_id}' (its virtual storages: {have})")
        out.append(PrepareVolume(found.volume_id, v.mount_to, v.device))
    return out


def exports(c: Cluster) -> NfsExports:
    ss = c.p.storage_server
    assert ss is not None
    return NfsExports(tuple(NfsExport(e.export_dir, (e.export_to,), export_id=i + 1)
                            for i, e in enumerate(ss.exports)))


def _nfs_server(c: Cluster, reg: P.PvRegistration) -> str:
    for v in [*([c.storage.vnfc] if c.storage else []), *c.ctx.resources.vnfcs]:
        server = v.address(reg.nfs_server_cp, floating_first=False)
        if server:
            return server
    raise OperationFailed(f"{reg.path}.nfs_server_cp: no VNFC has an address on CP '{reg.nfs_server_cp}'")


def _pv_docs(c: Cluster, reg: P.PvRegistration) -> list[Any]:
    key = f"{reg.path}.pv_manifest_file_path"
    pkg = c.ctx.package
    if pkg is None or not pkg.exists(reg.pv_manifest_file_path):
        raise OperationFailed(f"{key}: '{reg.pv_manifest_file_path}' is not a file of the VNF package")
    try:
        docs = [d for d in yaml.safe_load_all(pkg.read(reg.pv_manifest_file_path)) if d]
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise OperationFailed(f"{key}: '{reg.pv_manifest_file_path}' is not YAML: {e}") from None
    if not docs:
        raise OperationFailed(f"{key}: '{reg.pv_manifest_file_path}' is empty")
    return docs


def pv_steps(c: Cluster) -> list[ApplyPersistentVolume]:
    ss = c.p.storage_server
    assert ss is not None
    out: list[ApplyPersistentVolume] = []
    for reg in c.p.pv_registrations:
        key = f"{reg.path}.pv_manifest_file_path"
        server = _nfs_server(c, reg)
        for doc in _pv_docs(c, reg):
            nfs = (doc.get("spec") or {}).get("nfs") if isinstance(doc, dict) else None
            if not isinstance(doc, dict) or doc.get("kind") != "PersistentVolume" or not isinstance(nfs, dict):
                raise OperationFailed(f"{key}: '{reg.pv_manifest_file_path}' must hold NFS PersistentVolumes "
                                      "(kind PersistentVolume with spec.nfs)")
            name = str((doc.get("metadata") or {}).get("name") or "")
            path = posixpath.normpath(str(nfs.get("path") or "/"))
            if not any(path == e.export_dir or path.startswith(e.export_dir + "/") for e in ss.exports):
                raise OperationFailed(f"{key}: PersistentVolume '{name}' uses NFS path {path}, which no "
                                      "storage_server.nfs_server_setup_params[].export_dir exports")
            nfs["server"] = server  # the seed: replaced with the address of nfs_server_cp
            try:
                out.append(ApplyPersistentVolume(name, yaml.safe_dump(doc, sort_keys=False), server, path))
            except ValueError as e:
                raise OperationFailed(f"{key}: {e}") from None
    return out


async def setup(c: Cluster, admin: Node, *, nodes_too: bool = True) -> None:
    """Volume(s) formatted when blank and mounted, NFS exports, NFS clients on the cluster's nodes,
    then the PersistentVolumes registered through `admin` (seed 001)."""
    if c.p.storage_server is None:
        return
    st = c.storage
    if st is None:
        raise OperationFailed(f"{P.ROOT}.storage_server: the instance has no storage server VNFC "
                              f"(VDU of CP '{c.p.storage_server.ssh_cp_name}')")
    pvs = pv_steps(c)  # validated before anything changes
    volumes = volume_steps(c)
    await pin(c, [st])
    for step in volumes:
        res = await c.ex.run(st.ssh, step)
        c.ctx.progress(f"storage server {st.name}: volume {step.volume_id} "
                       f"{'formatted and ' if res.data.get('formatted') else ''}mounted at {step.mount_to}")
    ex = exports(c)
    await c.ex.run(st.ssh, ex)
    c.ctx.progress(f"storage server {st.name} exports {', '.join(e.path for e in ex.exports)} over NFS")
    if nodes_too:
        await nfs_clients(c, c.nodes)
    for pv in pvs:
        await c.ex.run(admin.ssh, pv)
    c.ctx.state["pvs"] = [pv.name for pv in pvs]
    if pvs:
        c.ctx.progress(f"PersistentVolume(s) {', '.join(pv.name for pv in pvs)} registered "
                       f"(NFS server {pvs[0].nfs_server})")


async def heal_start(c: Cluster, admin: Node) -> None:
    """Before the storage server is replaced: its PVs must not be in use; they are deleted (and
    registered again in heal_end). The volume itself is kept by the heal."""
    names = list(c.ctx.state.get("pvs_affected") or c.ctx.state.get("pvs") or [])
    if not names and c.p.pv_registrations:
        names = [pv.name for pv in pv_steps(c)]
    c.ctx.state["pvs_affected"] = names
    if names:
        c.ctx.progress(f"storage server is healed: PersistentVolume(s) {', '.join(names)} are affected; "
                       "checking they are not in use and removing them until it is back")
        await c.ex.run(admin.ssh, DeletePersistentVolumes(tuple(names)))


async def heal_end(c: Cluster, admin: Node) -> None:
    """The replaced storage server: its volume(s) mounted and exported again, PVs registered again."""
    assert c.storage is not None
    await pin(c, [c.storage], repin=[c.storage])
    c.ctx.progress(f"storage server {c.storage.name} replaced: mounting its volume(s) and exporting "
                   "them again, then registering the PersistentVolumes")
    await setup(c, admin, nodes_too=False)
    c.ctx.state.pop("pvs_affected", None)
