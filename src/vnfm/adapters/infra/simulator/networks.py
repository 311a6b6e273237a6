"""Networks (management, public, external, internal), ports and floating IPs.

Addresses are unique across the whole cloud (every network, fixed and floating): the store's
address table records each one with its owner, so an address always names one port.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from vnfm.adapters.infra.simulator.base import CloudBase
from vnfm.adapters.infra.simulator.model import (
    MGMT_NETWORK_ID,
    PUBLIC_NETWORK_ID,
    SimCloudError,
    exhausted,
    now_iso,
)
from vnfm.adapters.infra.simulator.tx import Doc, Tx
from vnfm.domain.errors import Conflict
from vnfm.domain.model import new_id


class NetworkOps(CloudBase):
    def create_network(
        self, name: str, cidr: str, *, network_id: str | None = None, kind: str = "external"
    ) -> dict[str, Any]:
        """Create a network with one subnet (like an admin does before instantiating)."""
        ipaddress.ip_network(cidr)  # validates
        with self._tx() as tx:
            nid = network_id or new_id()
            if tx.network(nid) is not None:
                raise Conflict(f"network {nid} already exists")
            return tx.hand_out(_add_network(tx, nid, name, cidr, kind, None))

    def ensure_mgmt_network(self) -> dict[str, Any]:
        """The management network, created (or widened to the configured CIDR) on first use. When
        it is there as configured, a read: no write lock (every VDU's ports ask for it)."""
        with self._read() as tx:
            net = tx.network(MGMT_NETWORK_ID)
            if net is not None and net["cidr"] == self.config.mgmt_cidr:
                return tx.hand_out(net)
        with self._tx() as tx:
            return tx.hand_out(self._shared(tx, MGMT_NETWORK_ID, MGMT_NETWORK_ID, self.config.mgmt_cidr, "mgmt"))

    def ensure_external_network(
        self, network_id: str, name: str, fixed_hint: str | None = None
    ) -> dict[str, Any]:
        """The network of an extVirtualLinks[].resourceId: used when it exists, else created.

        A created network is a /`external_prefix` (/16: sized for a fleet sharing it): the one
        holding `fixed_hint` (a fixed address the request asks for), else a free one of the
        external pool.
        """
        prefix = self.config.external_prefix
        with self._tx() as tx:
            net = tx.network(network_id)
            if net is None:
                if fixed_hint:
                    cidr = str(ipaddress.ip_network(f"{fixed_hint}/{prefix}", strict=False))
                else:
                    pool = self.config.external_pool
                    cidr = tx.free_subnet(pool, exhausted("the external network pool", pool, "external_pool"),
                                          prefix=prefix)
                net = _add_network(tx, network_id, name, cidr, "external", None)
            return tx.hand_out(net)

    def find_network(self, ref: str) -> dict[str, Any] | None:
        """The network whose id, else whose name, is `ref` (as Heat resolves a template's `network`)."""
        with self._read() as tx:
            net = tx.network(ref)
            if net is None:
                net = next((n for n in tx.networks().values() if n.get("name") == ref), None)
            return tx.hand_out(net) if net is not None else None

    def ensure_internal_network(
        self, instance_id: str, vld_id: str, cidr: str | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The network of internal VL `vld_id` of an instance: (network, deployment VL record)."""
        with self._tx() as tx:
            dep = self._doc(tx, instance_id)["deployment"]
            vl = dep["virtual_links"].get(vld_id)
            if vl is not None:
                net = tx.network(vl["network_id"])
                if net is not None:
                    return tx.hand_out(net), tx.hand_out(vl)
            pool = self.config.internal_pool
            chosen = cidr or tx.free_subnet(pool, exhausted("the internal VL pool", pool, "internal_pool"))
            net = _add_network(tx, new_id(), f"vnflcm_{instance_id[:8]}_{vld_id}", chosen, "internal", instance_id)
            vl = {"id": (vl or {}).get("id") or new_id(), "vld_id": vld_id, "network_id": net["id"]}
            dep["virtual_links"][vld_id] = vl
            return tx.hand_out(net), tx.hand_out(vl)

    @staticmethod
    def _shared(tx: Tx, nid: str, name: str, cidr: str, kind: str) -> dict[str, Any]:
        """The management or public network: created on first use, widened when the configured
        CIDR holds the one it has."""
        net = tx.network(nid)
        if net is None:
            return _add_network(tx, nid, name, cidr, kind, None)
        if net["cidr"] != cidr:
            new, old = ipaddress.ip_network(cidr, strict=False), ipaddress.ip_network(net["cidr"])
            if new.version == old.version and old.subnet_of(new):  # type: ignore[arg-type]
                return tx.widen_network(nid, str(new))
        return net

    # ------------------------------------------------------------------ ports and floating IPs
    def ensure_port(self, instance_id: str, vnfc_id: str, cpd_id: str) -> tuple[dict[str, Any], bool]:
        """Create the port (and floating IP of an external CP) of a VNFC's CP unless it exists.

        Returns (port, created).
        """
        with self._tx() as tx:
            doc = self._doc(tx, instance_id)
            vnfc = doc["deployment"]["vnfcs"][vnfc_id]
            cp = vnfc["cps"][cpd_id]
            port = doc["ports"].get(cp["port_id"]) if cp["port_id"] else None
            created = False
            if port is None:
                port = self._new_port(tx, doc, instance_id, vnfc, cp)
                created = True
            if cp["external"] and not port.get("floating_ip_id"):
                self._new_floating_ip(tx, doc, instance_id, port, cp)
                created = True
            return tx.hand_out(port), created

    def _new_port(
        self, tx: Tx, doc: Doc, instance_id: str, vnfc: dict[str, Any], cp: dict[str, Any]
    ) -> dict[str, Any]:
        cpd_id = cp["cpd_id"]
        net = tx.network(cp["network_id"])
        if net is None:
            raise SimCloudError(f"network {cp['network_id']} of CP {cpd_id} does not exist")
        if net["id"] == MGMT_NETWORK_ID:
            net = self._shared(tx, MGMT_NETWORK_ID, MGMT_NETWORK_ID, self.config.mgmt_cidr, "mgmt")
        port_id = new_id()
        address = None
        for wanted in cp["fixed_addresses"]:
            if tx.address_taken(wanted):
                continue
            if ipaddress.ip_address(wanted) not in ipaddress.ip_network(net["cidr"]):
                raise SimCloudError(
                    f"fixed address {wanted} of CP {cpd_id} is not in subnet {net['cidr']} "
                    f"of network {net['id']}"
                )
            address = wanted
            tx.take_address(address, net["id"], instance_id, "port", port_id)
            break
        if address is None:
            setting = "mgmt_cidr" if net["id"] == MGMT_NETWORK_ID else None
            what = "the management network" if setting else f"network {net['name']}"
            address = tx.allocate(net, instance_id, "port", port_id, exhausted=exhausted(what, net["cidr"], setting))
        port = {
            "id": port_id,
            "name": f"{vnfc['name']}-{cpd_id}",
            "network_id": net["id"],
            "fixed_ips": [{"subnet_id": net["subnet_id"], "ip_address": address}],
            "mac_address": tx.new_mac(instance_id),
            "device_id": vnfc["server_id"] or "",
            "device_owner": "compute:nova" if vnfc["server_id"] else "",
            "status": "DOWN",
            "instance_id": instance_id,
            "vnfc_id": vnfc["id"],
            "cpd_id": cpd_id,
            "floating_ip_id": None,
            "created_at": now_iso(),
        }
        doc["ports"][port_id] = port
        cp["port_id"] = port_id
        return port

    def _new_floating_ip(
        self, tx: Tx, doc: Doc, instance_id: str, port: dict[str, Any], cp: dict[str, Any]
    ) -> None:
        public = self._shared(tx, PUBLIC_NETWORK_ID, "public", self.config.public_cidr, "public")
        address = tx.allocate(public, instance_id, "floating", port["id"],
                              exhausted=exhausted("the floating IP pool", public["cidr"], "public_cidr"))
        fip = {
            "id": new_id(),
            "floating_ip_address": address,
            "floating_network_id": public["id"],
            "port_id": port["id"],
            "fixed_ip_address": port["fixed_ips"][0]["ip_address"],
            "instance_id": instance_id,
            "resource_names": list(cp.get("resource_names") or []),
            "status": "ACTIVE",
            "created_at": now_iso(),
        }
        doc["floating_ips"][fip["id"]] = fip
        port["floating_ip_id"] = fip["id"]


def _add_network(tx: Tx, nid: str, name: str, cidr: str, kind: str, instance_id: str | None) -> dict[str, Any]:
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
    tx.add_network(record)
    return record


def drop_port(tx: Tx, doc: Doc, port_id: str | None) -> None:
    """Delete a port and its floating IP; their addresses and MAC are free again."""
    if not port_id:
        return
    port = doc["ports"].pop(port_id, None)
    if port is None:
        return
    for f in port["fixed_ips"]:
        tx.free_address(f["ip_address"])
    if port.get("mac_address"):
        tx.free_mac(port["mac_address"])
    if port.get("floating_ip_id"):
        drop_floating_ip(tx, doc, port["floating_ip_id"])


def drop_floating_ip(tx: Tx, doc: Doc, fip_id: str) -> None:
    fip = doc["floating_ips"].pop(fip_id, None)
    if fip is not None:
        tx.free_address(fip["floating_ip_address"])
