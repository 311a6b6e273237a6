"""The storage server on the twin (seed 001): volumes, NFS exports, NFS clients, PersistentVolumes."""

from __future__ import annotations

import secrets
from typing import Any

from vnfm.adapters.infra.simulator.twin.base import TwinHost, node_on, sha
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.kubernetes import ApplyPersistentVolume, DeletePersistentVolumes
from vnfm.nodesteps.storage import InstallNfsClient, NfsExport, NfsExports, PrepareVolume


def prepare_volume(tw: TwinHost, host: str, sid: str, step: PrepareVolume) -> StepResult:
    server = tw.sim.server_by_address(host) or {}
    if step.volume_id not in (server.get("volumes") or []):
        raise StepFailed(host, step, f"no block device for volume {step.volume_id}: it is not attached to "
                                     f"server {server.get('name', sid)}")

    def fn(st: dict[str, Any]) -> tuple[bool, bool]:
        vol = st["volumes"].setdefault(step.volume_id, {})  # lives with the volume, across heals
        changed = formatted = False
        if not vol.get("fs"):
            vol.update(fs=step.fs_type, uuid=sha(step.volume_id)[:8] + "-" + secrets.token_hex(4),
                       formats=vol.get("formats", 0) + 1)
            changed = formatted = True
        for other_sid, other in st["hosts"].items():  # a volume is attached to one server: the old one
            if other_sid != sid and step.volume_id in (other.get("mounts") or {}).values():  # is gone
                for k in ("mounts", "fstab", "nfs"):
                    other.pop(k, None)
        h = st["hosts"].setdefault(sid, {})  # host-local: a healed server starts clean
        line = f"UUID={vol['uuid']} {step.mount_to} {vol['fs']} defaults,nofail 0 2"
        fstab = h.setdefault("fstab", {})
        if fstab.get(step.mount_to) != line:
            fstab[step.mount_to] = line
            changed = True
        mounts = h.setdefault("mounts", {})
        if step.mount_to in mounts and mounts[step.mount_to] != step.volume_id:
            raise StepFailed(host, step, f"{step.mount_to} has another device mounted")
        if step.mount_to not in mounts:
            mounts[step.mount_to] = step.volume_id
            changed = True
        return changed, formatted

    changed, formatted = tw.tx(fn)
    return StepResult(changed, {"device": f"/dev/disk/by-id/virtio-{step.volume_id[:20]}",
                                "formatted": formatted})


def nfs_export(tw: TwinHost, host: str, sid: str, step: NfsExport) -> StepResult:
    return nfs_exports(tw, host, sid, NfsExports((step,)))


def nfs_exports(tw: TwinHost, host: str, sid: str, step: NfsExports) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        h = st["hosts"].setdefault(sid, {})
        mounts = h.get("mounts") or {}
        want = []
        for e in step.exports:
            on = next((st["volumes"][v]["uuid"] for m, v in mounts.items()
                       if e.path == m or e.path.startswith(m + "/")), None)
            want.append({"path": e.path, "pseudo": e.pseudo_path, "clients": list(e.clients),
                         "port": e.port, "volume_uuid": on})
        cur = h.get("nfs")
        if cur is not None and cur["exports"] == want:
            return False
        h["nfs"] = {"exports": want, "restarts": (cur or {}).get("restarts", -1) + 1, "address": host}
        return True

    return StepResult(tw.tx(fn), {"pseudo": [e.pseudo_path for e in step.exports]})


def nfs_client(tw: TwinHost, host: str, sid: str, step: InstallNfsClient) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        h = st["hosts"].setdefault(sid, {})
        if h.get("nfs_client"):
            return False
        h["nfs_client"] = True
        return True

    return StepResult(tw.tx(fn))


def apply_pv(tw: TwinHost, host: str, sid: str, step: ApplyPersistentVolume) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        if node_on(st, sid, "master") is None:
            raise StepFailed(host, step, "this host is not a control plane")
        cur = st["pvs"].get(step.name)
        want = {"nfs_server": step.nfs_server, "nfs_path": step.nfs_path, "manifest_sha256": sha(step.manifest)}
        if cur is not None:
            if {k: cur[k] for k in want} == want:
                return False
            if (cur["nfs_server"], cur["nfs_path"]) != (step.nfs_server, step.nfs_path) \
                    and cur.get("phase") == "Bound":
                raise StepFailed(host, step, f"PersistentVolume {step.name} points at "
                                             f"'{cur['nfs_server']} {cur['nfs_path']}' and is Bound to "
                                             f"{cur.get('claim')}: cannot move it")
            if (cur["nfs_server"], cur["nfs_path"]) == (step.nfs_server, step.nfs_path):
                cur.update(want)
                return True
        st["pvs"][step.name] = {**want, "phase": "Available", "claim": None,
                                "created": (cur or {}).get("created", 0) + 1}
        # how often this PV was created, deletions included (what a heal's delete-then-register shows)
        history = st.setdefault("pv_registrations", {})
        history[step.name] = int(history.get(step.name, 0)) + 1
        return True

    return StepResult(tw.tx(fn))


def delete_pvs(tw: TwinHost, host: str, sid: str, step: DeletePersistentVolumes) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        if node_on(st, sid, "master") is None:
            raise StepFailed(host, step, "this host is not a control plane")
        present = [n for n in step.names if n in st["pvs"]]
        bound = [f"{n} (claim {st['pvs'][n]['claim']})" for n in present if st["pvs"][n]["phase"] == "Bound"]
        if bound:
            raise StepFailed(host, step, f"PersistentVolumes in use: {' '.join(bound)}")
        for n in present:
            del st["pvs"][n]
        return bool(present)

    return StepResult(tw.tx(fn))


HANDLERS: dict[type, Any] = {
    PrepareVolume: prepare_volume,
    NfsExport: nfs_export,
    NfsExports: nfs_exports,
    InstallNfsClient: nfs_client,
    ApplyPersistentVolume: apply_pv,
    DeletePersistentVolumes: delete_pvs,
}
