"""Networks (management, public, external, internal), ports and floating IPs."""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

from vnfm.adapters.infra.simulator.addresses import allocate_address, free_subnet, new_mac, used_addresses
from vnfm.adapters.infra.simulator.base import CloudBase
from vnfm.adapters.infra.simulator.model import MGMT_NETWORK_ID, PUBLIC_NETWORK_ID, SimCloudError, now_iso
from vnfm.domain.errors import Conflict
from vnfm.domain.model import new_id


class NetworkOps(CloudBase):
    def create_network(
        self, name: str, cidr: str, *, network_id: str | None = None, kind: str = "external"
    ) -> dict[str, Any]:
        """Create a network with one subnet (like an admin does before instantiating)."""
        ipaddress.ip_network(cidr)  # validates
        with self._tx() as state:
            nid = network_id or new_id()
            if nid in state["networks"]:
                raise Conflict(f"network {nid} already exists")
            return copy.deepcopy(self._add_network(state, nid, name, cidr, kind, None))

    def _add_network(
        self, state: dict[str, Any], nid: str, name: str, cidr: str, kind: str, instance_id: str | None
    ) -> dict[str, Any]:
        net = ipaddress.ip_network(cidr, strict=False)
        gateway = str(next(net.hosts())) if kind != "public" and net.num_addresses > 2 else None
        record = {
            "id": nid,
            "name": name,
            "kind": kind,  # mgmt | external | internal | public
            "cidr": str(net),
            "subnet_id": new_id(),
            "gateway_ip": gateway,
            "instance_id": instance_id,
            "status": "ACTIVE",
            "created_at": now_iso(),
        }
        state["networks"][nid] = record
        return record

    def ensure_mgmt_network(self) -> dict[str, Any]:
        with self._tx() as state:
            net = state["networks"].get(MGMT_NETWORK_ID)
            if net is None:
                net = self._add_network(
                    state, MGMT_NETWORK_ID, MGMT_NETWORK_ID, self.config.mgmt_cidr, "mgmt", None
                )
            return copy.deepcopy(net)

    def ensure_external_network(
        self, network_id: str, name: str, fixed_hint: str | None = None
    ) -> dict[str, Any]:
        """The network of an extVirtualLinks[].resourceId: used when it exists, else created.

        A created network gets the /24 holding `fixed_hint` (a fixed address the request asks
        for), else a free /24 of the external pool.
        """
        with self._tx() as state:
            net = state["networks"].get(network_id)
            if net is None:
                if fixed_hint:
                    cidr = str(ipaddress.ip_network(f"{fixed_hint}/24", strict=False))
                else:
                    cidr = free_subnet(self.config.external_pool, state)
                net = self._add_network(state, network_id, name, cidr, "external", None)
            return copy.deepcopy(net)

    def ensure_internal_network(
        self, instance_id: str, vld_id: str, cidr: str | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The network of internal VL `vld_id` of an instance: (network, deployment VL record)."""
        with self._tx() as state:
            dep = self._deployment(state, instance_id)
            vl = dep["virtual_links"].get(vld_id)
            if vl is not None and vl["network_id"] in state["networks"]:
                return copy.deepcopy(state["networks"][vl["network_id"]]), copy.deepcopy(vl)
            chosen = cidr or free_subnet(self.config.internal_pool, state)
            net = self._add_network(
                state, new_id(), f"vnflcm_{instance_id[:8]}_{vld_id}", chosen, "internal", instance_id
            )
            vl = {"id": (vl or {}).get("id") or new_id(), "vld_id": vld_id, "network_id": net["id"]}
            dep["virtual_links"][vld_id] = vl
            return copy.deepcopy(net), copy.deepcopy(vl)

    def _ensure_public(self, state: dict[str, Any]) -> dict[str, Any]:
        net = state["networks"].get(PUBLIC_NETWORK_ID)
        if net is None:
            net = self._add_network(
                state, PUBLIC_NETWORK_ID, "public", self.config.public_cidr, "public", None
            )
        return net

    # ------------------------------------------------------------------ ports and floating IPs
    def ensure_port(self, instance_id: str, vnfc_id: str, cpd_id: str) -> tuple[dict[str, Any], bool]:
        """Create the port (and floating IP of an external CP) of a VNFC's CP unless it exists.

        Returns (port, created).
        """
        with self._tx() as state:
            dep = self._deployment(state, instance_id)
            vnfc = dep["vnfcs"][vnfc_id]
            cp = vnfc["cps"][cpd_id]
            port = state["ports"].get(cp["port_id"]) if cp["port_id"] else None
            created = False
            if port is None:
                port = self._new_port(state, instance_id, vnfc, cp)
                created = True
            if cp["external"] and not port.get("floating_ip_id"):
                self._new_floating_ip(state, instance_id, port, cp)
                created = True
            return copy.deepcopy(port), created

    @staticmethod
    def _new_port(
        state: dict[str, Any], instance_id: str, vnfc: dict[str, Any], cp: dict[str, Any]
    ) -> dict[str, Any]:
        cpd_id = cp["cpd_id"]
        net = state["networks"].get(cp["network_id"])
        if net is None:
            raise SimCloudError(f"network {cp['network_id']} of CP {cpd_id} does not exist")
        used = used_addresses(state)
        address = None
        for wanted in cp["fixed_addresses"]:
            if wanted in used:
                continue
            if ipaddress.ip_address(wanted) not in ipaddress.ip_network(net["cidr"]):
                raise SimCloudError(
                    f"fixed address {wanted} of CP {cpd_id} is not in subnet {net['cidr']} "
                    f"of network {net['id']}"
                )
            address = wanted
            break
        if address is None:
            address = allocate_address(net["cidr"], used, f"network {net['name']}")
        port = {
            "id": new_id(),
            "name": f"{vnfc['name']}-{cpd_id}",
            "network_id": net["id"],
            "fixed_ips": [{"subnet_id": net["subnet_id"], "ip_address": address}],
            "mac_address": new_mac(state),
            "device_id": vnfc["server_id"] or "",
            "device_owner": "compute:nova" if vnfc["server_id"] else "",
            "status": "DOWN",
            "instance_id": instance_id,
            "vnfc_id": vnfc["id"],
            "cpd_id": cpd_id,
            "floating_ip_id": None,
            "created_at": now_iso(),
        }
        state["ports"][port["id"]] = port
        cp["port_id"] = port["id"]
        return port

    def _new_floating_ip(
        self, state: dict[str, Any], instance_id: str, port: dict[str, Any], cp: dict[str, Any]
    ) -> None:
        public = self._ensure_public(state)
        used = used_addresses(state)
        fip = {
            "id": new_id(),
            "floating_ip_address": allocate_address(public["cidr"], used, "the floating IP pool"),
            "floating_network_id": public["id"],
            "port_id": port["id"],
            "fixed_ip_address": port["fixed_ips"][0]["ip_address"],
            "instance_id": instance_id,
            "resource_names": list(cp.get("resource_names") or []),
            "status": "ACTIVE",
            "created_at": now_iso(),
        }
        state["floating_ips"][fip["id"]] = fip
        port["floating_ip_id"] = fip["id"]


def drop_port(state: dict[str, Any], port_id: str | None) -> None:
    """Delete a port and its floating IP."""
    if not port_id:
        return
    port = state["ports"].pop(port_id, None)
    if port and port.get("floating_ip_id"):
        state["floating_ips"].pop(port["floating_ip_id"], None)
