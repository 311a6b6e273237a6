"""Deployments (the twin of Heat stacks, one per VNF instance) and the VNFCs they record."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vnfm.adapters.infra.simulator.base import CloudBase
from vnfm.adapters.infra.simulator.compute import drop_volume
from vnfm.adapters.infra.simulator.model import CpSpec, ServerSpec, SimCloudError, StorageSpec, exhausted, now_iso
from vnfm.adapters.infra.simulator.networks import drop_floating_ip, drop_port
from vnfm.adapters.infra.simulator.tx import private
from vnfm.domain.errors import Conflict
from vnfm.domain.model import new_id


class DeploymentOps(CloudBase):
    def deployment(self, instance_id: str) -> dict[str, Any] | None:
        """A copy of the instance's deployment record (None: it has none)."""
        with self._read() as tx:
            doc = tx.view(instance_id)
            return private(doc["deployment"]) if doc else None

    def ensure_deployment(self, instance_id: str, flavour_id: str, vnfd_id: str) -> dict[str, Any]:
        with self._tx() as tx:
            doc = tx.create_doc(instance_id)
            if doc["deployment"] is None:
                doc["deployment"] = {
                    "instance_id": instance_id,
                    "stack_id": new_id(),
                    "stack_name": f"vnflcm_{instance_id}",
                    "status": "CREATE_IN_PROGRESS",
                    "status_reason": "",
                    "flavour_id": flavour_id,
                    "vnfd_id": vnfd_id,
                    "created_at": now_iso(),
                    "updated_at": now_iso(),
                    "next_seq": 0,
                    "next_index": {},
                    "virtual_links": {},
                    "vnfcs": {},
                    "removed": {},
                    "reservations": {},
                }
            return tx.hand_out(doc["deployment"])

    def set_deployment_status(self, instance_id: str, status: str, reason: str = "") -> None:
        with self._tx() as tx:
            doc = tx.doc(instance_id)
            dep = doc["deployment"] if doc else None
            if dep is not None:
                dep["status"] = status
                dep["status_reason"] = reason
                dep["updated_at"] = now_iso()

    def add_vnfcs(
        self,
        instance_id: str,
        vdu_id: str,
        count: int,
        cps: Iterable[CpSpec],
        storages: Iterable[StorageSpec],
        server: ServerSpec,
    ) -> list[str]:
        """Record `count` new VNFCs of a VDU (ids, seq numbers, names); resources come later."""
        cps = list(cps)
        storages = list(storages)
        ids: list[str] = []
        with self._tx() as tx:
            dep = self._doc(tx, instance_id)["deployment"]
            for _ in range(count):
                index = dep["next_index"].get(vdu_id, 0)
                dep["next_index"][vdu_id] = index + 1
                seq = dep["next_seq"]
                dep["next_seq"] = seq + 1
                vnfc = _vnfc_record(vdu_id, seq, index, cps, storages, server)
                dep["vnfcs"][vnfc["id"]] = vnfc
                ids.append(vnfc["id"])
            dep["updated_at"] = now_iso()
        return ids

    # ------------------------------------------------------------------ reserved addresses
    def reserve_address(self, instance_id: str, network_id: str, purpose: str, cp_name: str) -> str:
        """An address of `network_id` that no port will get, kept for `purpose` by the deployment
        (until `release_address` or `drop_deployment`); the same one when asked again."""
        with self._tx() as tx:
            dep = self._doc(tx, instance_id)["deployment"]
            reservations = dep.setdefault("reservations", {})
            have = reservations.get(purpose)
            if have is not None:
                if have["network_id"] != network_id:
                    raise Conflict(
                        f"{purpose} of VNF instance {instance_id} already holds {have['address']} on network "
                        f"{have['network_id']} (CP {have['cp_name']}): release it first"
                    )
                return str(have["address"])
            net = tx.network(network_id)
            if net is None:
                raise SimCloudError(f"network {network_id} of CP {cp_name} does not exist")
            address = tx.allocate(net, instance_id, "reserved", purpose, from_top=True,
                                  exhausted=exhausted(f"network {net['name']}", net["cidr"]))
            reservations[purpose] = {
                "purpose": purpose,
                "address": address,
                "network_id": network_id,
                "cp_name": cp_name,
                "created_at": now_iso(),
            }
            return address

    def release_address(self, instance_id: str, purpose: str) -> str | None:
        """Give back the address kept for `purpose`; returns it (None when there was none)."""
        with self._tx() as tx:
            doc = tx.doc(instance_id)
            dep = (doc or {}).get("deployment") or {}
            gone = (dep.get("reservations") or {}).pop(purpose, None)
            if gone is None:
                return None
            tx.free_address(gone["address"])
            return str(gone["address"])

    # ------------------------------------------------------------------ VNFC / deployment removal
    def remove_vnfc(self, instance_id: str, vnfc_id: str) -> None:
        """Delete the ports, floating IPs and volumes of a VNFC (its server must be gone)."""
        with self._tx() as tx:
            doc = tx.doc(instance_id)
            dep = doc["deployment"] if doc else None
            if doc is None or dep is None or vnfc_id not in dep["vnfcs"]:
                return
            vnfc = dep["vnfcs"][vnfc_id]
            if vnfc["server_id"] in doc["servers"]:
                raise Conflict(f"VNFC {vnfc_id} still has server {vnfc['server_id']}")
            for cp in vnfc["cps"].values():
                drop_port(tx, doc, cp["port_id"])
            for st in vnfc["storages"].values():
                if st["volume_id"]:
                    drop_volume(doc, st["volume_id"])
            del dep["vnfcs"][vnfc_id]
            dep["removed"][vnfc_id] = vnfc["vdu_id"]
            dep["updated_at"] = now_iso()

    def drop_deployment(self, instance_id: str) -> None:
        """Delete what remains of a deployment: ports, volumes, reserved addresses, internal
        networks, extras."""
        with self._tx() as tx:
            tx.drop_extras(instance_id)
            doc = tx.doc(instance_id)
            if doc is None or doc["deployment"] is None:
                return
            for pid in list(doc["ports"]):
                drop_port(tx, doc, pid)
            for fid in list(doc["floating_ips"]):
                drop_floating_ip(tx, doc, fid)
            for r in (doc["deployment"].get("reservations") or {}).values():
                tx.free_address(r["address"])
            tx.drop_doc(instance_id)
            for nid in tx.network_ids_of(instance_id):
                if not tx.network_in_use(nid):
                    tx.drop_network(nid)


def _vnfc_record(
    vdu_id: str, seq: int, index: int, cps: list[CpSpec], storages: list[StorageSpec], server: ServerSpec
) -> dict[str, Any]:
    return {
        "id": new_id(),
        "vdu_id": vdu_id,
        "seq": seq,
        "index": index,
        "name": f"{vdu_id}-{index}",
        "created_at": now_iso(),
        "server_id": None,
        "server_spec": {
            "image": server.image,
            "flavor": server.flavor,
            "vcpus": server.vcpus,
            "ram_mb": server.ram_mb,
        },
        "cps": {
            cp.cpd_id: {
                "id": new_id(),
                "cpd_id": cp.cpd_id,
                "port_id": None,
                "network_id": cp.network_id,
                "external": cp.external,
                "ext_virtual_link_id": cp.ext_virtual_link_id,
                "virtual_link_id": cp.virtual_link_id,
                "fixed_addresses": list(cp.fixed_addresses),
                "resource_names": list(cp.resource_names),
            }
            for cp in cps
        },
        "storages": {
            st.id: {
                "id": new_id(),
                "virtual_storage_desc_id": st.id,
                "volume_id": None,
                "size_gb": st.size_gb,
                "image": st.image,
                "type_of_storage": st.type_of_storage,
            }
            for st in storages
        },
    }
