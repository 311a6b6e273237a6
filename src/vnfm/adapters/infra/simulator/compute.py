"""Servers (Nova) and volumes (Cinder) of VNFCs."""

from __future__ import annotations

import time
from typing import Any

from vnfm.adapters.infra.simulator.base import CloudBase
from vnfm.adapters.infra.simulator.hostkeys import new_host_key
from vnfm.adapters.infra.simulator.model import (
    DEFAULT_BUILD_FAULT,
    DEFAULT_DELETE_FAULT,
    ServerDeleteError,
    now_iso,
)
from vnfm.adapters.infra.simulator.tx import Doc, Tx
from vnfm.domain.errors import Conflict, NotFound
from vnfm.domain.model import new_id


class ComputeOps(CloudBase):
    # ------------------------------------------------------------------ volumes
    def ensure_volume(
        self, instance_id: str, vnfc_id: str, vsd_id: str, op_id: str
    ) -> tuple[dict[str, Any], bool]:
        with self._tx() as tx:
            doc = self._doc(tx, instance_id)
            vnfc = doc["deployment"]["vnfcs"][vnfc_id]
            st = vnfc["storages"][vsd_id]
            vol = doc["volumes"].get(st["volume_id"]) if st["volume_id"] else None
            if vol is not None:
                return tx.hand_out(vol), False
            vol = {
                "id": new_id(),
                "name": f"{vnfc['name']}-{vsd_id}",
                "size": st["size_gb"],
                "status": "available",
                "bootable": bool(st.get("image")),
                "image": st.get("image"),
                "attached_to": None,
                "instance_id": instance_id,
                "vnfc_id": vnfc_id,
                "storage_id": st["id"],
                "virtual_storage_desc_id": vsd_id,
                "op_id": op_id,
                "created_at": now_iso(),
            }
            server = doc["servers"].get(vnfc["server_id"]) if vnfc["server_id"] else None
            if server is not None:
                vol["attached_to"] = server["id"]
                vol["status"] = "in-use"
                server["volumes"].append(vol["id"])
            doc["volumes"][vol["id"]] = vol
            st["volume_id"] = vol["id"]
            return tx.hand_out(vol), True

    def delete_volume(self, instance_id: str, vnfc_id: str, vsd_id: str) -> str | None:
        """Detach and delete the volume of a VNFC's storage; returns its id (None when none)."""
        with self._tx() as tx:
            doc = self._doc(tx, instance_id)
            st = doc["deployment"]["vnfcs"][vnfc_id]["storages"][vsd_id]
            vol_id = st["volume_id"]
            st["volume_id"] = None
            if vol_id:
                drop_volume(doc, vol_id)
            return vol_id

    # ------------------------------------------------------------------ servers
    def create_server(self, instance_id: str, vnfc_id: str, op_id: str, *, boot: bool = False) -> dict[str, Any]:
        """Create the server of a VNFC in BUILD (its ports and volumes must exist). With `boot` (a
        cloud whose boot takes no time) its BUILD ends in the same transaction, as `finish_boot`
        ends it: ACTIVE, or ERROR with an injected fault."""
        with self._tx() as tx:
            doc = self._doc(tx, instance_id)
            dep = doc["deployment"]
            vnfc = dep["vnfcs"][vnfc_id]
            if vnfc["server_id"] in doc["servers"]:
                raise Conflict(f"VNFC {vnfc_id} already has server {vnfc['server_id']}")
            build_fault, reachable = _take_build_faults(tx.faults(), vnfc["vdu_id"])
            spec = vnfc["server_spec"]
            server_id = new_id()
            port_ids = [cp["port_id"] for cp in vnfc["cps"].values() if cp["port_id"]]
            volume_ids = [st["volume_id"] for st in vnfc["storages"].values() if st["volume_id"]]
            server = {
                "id": server_id,
                "name": vnfc["name"],
                "status": "BUILD",
                "task_state": "spawning",
                "image": spec["image"],
                "flavor": {"name": spec["flavor"], "vcpus": spec["vcpus"], "ram": spec["ram_mb"]},
                "ports": port_ids,
                "volumes": volume_ids,
                "host_key": new_host_key(),
                "ssh_reachable": reachable,
                "fault": None,
                "instance_id": instance_id,
                "vnfc_id": vnfc_id,
                "vdu_id": vnfc["vdu_id"],
                "stack_id": dep["stack_id"],
                "op_id": op_id,
                "boot_until": time.time() + self.config.boot_time,
                "build_fault": build_fault,
                "created_at": now_iso(),
                "updated_at": now_iso(),
            }
            doc["servers"][server_id] = server
            vnfc["server_id"] = server_id
            for pid in port_ids:
                port = doc["ports"][pid]
                port["device_id"] = server_id
                port["device_owner"] = "compute:nova"
            for vid in volume_ids:
                vol = doc["volumes"][vid]
                vol["attached_to"] = server_id
                vol["status"] = "in-use"
            if boot:
                _end_build(doc, server)
            return tx.hand_out(server)

    def finish_boot(self, server_id: str) -> dict[str, Any]:
        """End the BUILD of a server: ACTIVE, or ERROR with a Nova fault when one was injected."""
        with self._tx() as tx:
            doc = _server_doc(tx, server_id)
            server = doc["servers"].get(server_id) if doc else None
            if doc is None or server is None:
                raise NotFound(f"server {server_id} does not exist")
            _end_build(doc, server)
            return tx.hand_out(server)

    def begin_delete_server(self, server_id: str) -> dict[str, Any] | None:
        """Start deleting a server; an injected delete fault turns it to ERROR and raises."""
        with self._tx() as tx:
            doc = _server_doc(tx, server_id)
            server = doc["servers"].get(server_id) if doc else None
            if server is None:
                return None
            faults = tx.faults()
            pending = int(faults.get("fail_delete") or 0)
            if pending > 0:
                faults["fail_delete"] = pending - 1
                server["status"] = "ERROR"
                server["task_state"] = None
                server["fault"] = {"code": 500, "message": DEFAULT_DELETE_FAULT, "created": now_iso()}
                server["updated_at"] = now_iso()
                failed = ServerDeleteError(server_id, server["name"], DEFAULT_DELETE_FAULT)
            else:
                server["task_state"] = "deleting"
                server["updated_at"] = now_iso()
                return tx.hand_out(server)
        raise failed

    def finish_delete_server(self, server_id: str) -> None:
        """Remove a server: its ports are unbound, its volumes detached (kept)."""
        with self._tx() as tx:
            doc = _server_doc(tx, server_id)
            server = doc["servers"].pop(server_id, None) if doc else None
            if doc is None or server is None:
                return
            for pid in server["ports"]:
                port = doc["ports"].get(pid)
                if port is not None and port["device_id"] == server_id:
                    port["device_id"] = ""
                    port["device_owner"] = ""
                    port["status"] = "DOWN"
            for vid in server["volumes"]:
                vol = doc["volumes"].get(vid)
                if vol is not None and vol["attached_to"] == server_id:
                    vol["attached_to"] = None
                    vol["status"] = "available"
            dep = doc["deployment"]
            if dep is not None:
                vnfc = dep["vnfcs"].get(server["vnfc_id"])
                if vnfc is not None and vnfc["server_id"] == server_id:
                    vnfc["server_id"] = None


def _end_build(doc: Doc, server: dict[str, Any]) -> None:
    """A server in BUILD becomes ACTIVE (its ports too), or ERROR with a Nova fault when one was
    injected; a server in another state is left as it is."""
    if server["status"] != "BUILD":
        return
    server["task_state"] = None
    server["updated_at"] = now_iso()
    if server.get("build_fault"):
        server["status"] = "ERROR"
        server["fault"] = {
            "code": 500,
            "message": server["build_fault"],
            "details": "Traceback: nova.exception.NoValidHost (simulated)",
            "created": now_iso(),
        }
    else:
        server["status"] = "ACTIVE"
        for pid in server["ports"]:
            if pid in doc["ports"]:
                doc["ports"][pid]["status"] = "ACTIVE"


def _take_build_faults(faults: dict[str, Any], vdu_id: str) -> tuple[str | None, bool]:
    """Consume the pending faults for the next server of `vdu_id`: (build fault, reachable)."""
    build_fault = None
    pending = faults.get("fail_build") or {}
    if pending.get(vdu_id, 0) > 0:
        pending[vdu_id] -= 1
        build_fault = faults.get("build_message") or DEFAULT_BUILD_FAULT
    reachable = True
    unreachable_next = faults.get("unreachable_next") or {}
    if unreachable_next.get(vdu_id, 0) > 0:
        unreachable_next[vdu_id] -= 1
        reachable = False
    return build_fault, reachable


def _server_doc(tx: Tx, server_id: str) -> Doc | None:
    """The document of the instance that holds server `server_id`."""
    home = tx.server_home(server_id)
    return tx.doc(home) if home is not None else None


def drop_volume(doc: Doc, vol_id: str) -> None:
    """Delete a volume (detached from its server first)."""
    vol = doc["volumes"].pop(vol_id, None)
    if vol and vol.get("attached_to") in doc["servers"]:
        server = doc["servers"][vol["attached_to"]]
        server["volumes"] = [v for v in server["volumes"] if v != vol_id]
