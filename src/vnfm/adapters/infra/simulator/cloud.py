"""The simulated cloud: a twin of what Nova, Neutron, Cinder and Heat keep for a VNF.

`SimCloud` owns the state (networks and subnets, ports with fixed IPs and MACs, floating IPs,
servers with host keys, volumes, and deployments — the twin of Heat stacks, one per VNF instance)
and offers small synchronous operations, each one transaction on a `StateStore`. The timing of a
real cloud (boot, API and delete latencies) is played by the driver (`driver.py`), which awaits
between these operations.

Addresses are unique across the whole cloud (every network, fixed and floating), so an address
always names one port: management-driver twins can resolve "the host at 10.10.0.12" to a server.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import ipaddress
import os
import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from vnfm.adapters.infra.simulator.store import JsonFileStateStore, MemoryStateStore, StateStore
from vnfm.domain.errors import Conflict, NotFound, OperationFailed
from vnfm.domain.model import new_id

if TYPE_CHECKING:
    from vnfm.config import Settings

T = TypeVar("T")

MGMT_NETWORK_ID = "sim-mgmt"
PUBLIC_NETWORK_ID = "sim-public"
DEFAULT_BUILD_FAULT = "No valid host was found. There are not enough hosts available."
DEFAULT_DELETE_FAULT = "Failed to delete the server: the compute host did not answer."
# Neutron gives the first addresses of a subnet to the gateway and DHCP agents.
_FIRST_HOST_OFFSET = 10


# ============================================================================= configuration
@dataclass
class SimConfig:
    """Latencies of the simulated cloud, in seconds (0 is allowed: no waiting at all)."""

    boot_time: float = 0.05  # BUILD -> ACTIVE of one server
    api_latency: float = 0.005  # each API call (create port, volume, network, server, ...)
    delete_time: float = 0.02  # a server delete
    mgmt_cidr: str = "10.10.0.0/16"  # the management network "sim-mgmt"
    public_cidr: str = "172.24.4.0/24"  # floating IP pool
    external_pool: str = "10.20.0.0/16"  # /24s of external networks created on demand
    internal_pool: str = "10.30.0.0/16"  # /24s of internal VLs that give no cidr

    @classmethod
    def from_settings(cls, settings: Settings) -> SimConfig:
        return cls(boot_time=settings.sim_boot_time, api_latency=settings.sim_step_time)


@dataclass
class SimFaults:
    """Faults to inject; counts add to the pending ones (see `SimCloud.inject`)."""

    # VDU id -> the next N servers built for it end in ERROR (Nova fault `build_message`).
    fail_build: dict[str, int] = field(default_factory=dict)
    build_message: str | None = None
    # VDU id -> the next N servers built for it come up ACTIVE but do not answer SSH.
    unreachable_next: dict[str, int] = field(default_factory=dict)
    # Servers (server id, VNFC id or server name) that stop answering SSH now.
    unreachable: list[str] = field(default_factory=list)
    # The next N server deletes fail (the server goes to ERROR and stays).
    fail_delete: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "fail_build": dict(self.fail_build),
            "build_message": self.build_message,
            "unreachable_next": dict(self.unreachable_next),
            "unreachable": list(self.unreachable),
            "fail_delete": self.fail_delete,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> SimFaults:
        data = data or {}
        return cls(
            fail_build={str(k): int(v) for k, v in (data.get("fail_build") or {}).items()},
            build_message=data.get("build_message"),
            unreachable_next={str(k): int(v) for k, v in (data.get("unreachable_next") or {}).items()},
            unreachable=[str(x) for x in data.get("unreachable") or []],
            fail_delete=int(data.get("fail_delete") or 0),
        )


# ============================================================================= errors
class SimCloudError(OperationFailed):
    """The simulated cloud refused or failed an operation."""


class ServerBuildError(SimCloudError):
    def __init__(self, server_id: str, server_name: str, reason: str) -> None:
        super().__init__(f"server {server_name} ({server_id}) went to ERROR while building: {reason}")
        self.server_id = server_id
        self.server_name = server_name
        self.reason = reason


class ServerDeleteError(SimCloudError):
    def __init__(self, server_id: str, server_name: str, reason: str) -> None:
        super().__init__(f"deleting server {server_name} ({server_id}) failed: {reason}")
        self.server_id = server_id
        self.server_name = server_name
        self.reason = reason


# ============================================================================= specs the driver passes
@dataclass(frozen=True)
class CpSpec:
    """Where one CP of a new VNFC goes."""

    cpd_id: str
    network_id: str
    external: bool  # an external CP (no internal VL): gets a floating IP
    ext_virtual_link_id: str | None = None
    virtual_link_id: str | None = None
    fixed_addresses: tuple[str, ...] = ()  # requested in extVirtualLinks (used in order)
    resource_names: tuple[str, ...] = ()  # Heat-like names of its floating IP (e.g. "vdu_FloatingIP")


@dataclass(frozen=True)
class StorageSpec:
    id: str  # VirtualStorage descriptor id
    size_gb: float
    image: str | None = None
    type_of_storage: str = "BLOCK"


@dataclass(frozen=True)
class ServerSpec:
    image: str | None
    flavor: str
    vcpus: int | None = None
    ram_mb: int | None = None


# ============================================================================= helpers
def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _ssh_string(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def new_host_key() -> dict[str, str]:
    """A fresh ed25519-shaped host key and its OpenSSH SHA256 fingerprint (public data only)."""
    blob = _ssh_string(b"ssh-ed25519") + _ssh_string(os.urandom(32))
    fingerprint = "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return {
        "type": "ssh-ed25519",
        "public_key": "ssh-ed25519 " + base64.b64encode(blob).decode(),
        "fingerprint": fingerprint,
    }


def _used_addresses(state: dict[str, Any]) -> set[str]:
    used: set[str] = set()
    for port in state["ports"].values():
        used.update(f["ip_address"] for f in port["fixed_ips"])
    used.update(f["floating_ip_address"] for f in state["floating_ips"].values())
    for net in state["networks"].values():
        if net.get("gateway_ip"):
            used.add(net["gateway_ip"])
    return used


def _allocate_address(cidr: str, used: set[str], what: str) -> str:
    net = ipaddress.ip_network(cidr, strict=False)
    offset = _FIRST_HOST_OFFSET if net.num_addresses > 4 * _FIRST_HOST_OFFSET else 2
    for i, host in enumerate(net.hosts()):
        if i + 1 < offset:
            continue
        if str(host) not in used:
            return str(host)
    raise SimCloudError(f"no free address left in {what} ({cidr})")


def _free_subnet(pool: str, state: dict[str, Any]) -> str:
    taken = [ipaddress.ip_network(n["cidr"]) for n in state["networks"].values() if n.get("cidr")]
    for candidate in ipaddress.ip_network(pool).subnets(new_prefix=24):
        if not any(candidate.overlaps(t) for t in taken):
            return str(candidate)
    raise SimCloudError(f"no free /24 left in pool {pool}")


def _new_mac(state: dict[str, Any]) -> str:
    used = {p["mac_address"] for p in state["ports"].values()}
    while True:
        mac = "fa:16:3e:" + ":".join(f"{b:02x}" for b in secrets.token_bytes(3))
        if mac not in used:
            return mac


# ============================================================================= the cloud
class SimCloud:
    """The simulated cloud's state and its (synchronous, transactional) operations."""

    def __init__(self, store: StateStore | None = None, config: SimConfig | None = None) -> None:
        self.store: StateStore = store or MemoryStateStore()
        self.config = config or SimConfig()

    @classmethod
    def at(cls, path: Path | str, config: SimConfig | None = None, *, fsync: bool = False) -> SimCloud:
        """A cloud persisted in a JSON file (shared by every process that opens the same file)."""
        return cls(JsonFileStateStore(path, fsync=fsync), config)

    @classmethod
    def from_settings(cls, settings: Settings) -> SimCloud:
        return cls.at(settings.sim_state_file, SimConfig.from_settings(settings))

    # ------------------------------------------------------------------ transactions
    @contextlib.contextmanager
    def _tx(self) -> Iterator[dict[str, Any]]:
        with self.store.transaction() as state:
            yield state

    def state(self) -> dict[str, Any]:
        """A private deep copy of the whole raw state."""
        return self.store.read()

    # ------------------------------------------------------------------ networks
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
                    cidr = _free_subnet(self.config.external_pool, state)
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
            chosen = cidr or _free_subnet(self.config.internal_pool, state)
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

    # ------------------------------------------------------------------ deployments (Heat stacks)
    @staticmethod
    def _deployment(state: dict[str, Any], instance_id: str) -> dict[str, Any]:
        dep = state["deployments"].get(instance_id)
        if dep is None:
            raise NotFound(f"the simulated cloud has no deployment for VNF instance {instance_id}")
        return dep

    def deployment(self, instance_id: str) -> dict[str, Any] | None:
        dep = self.store.read()["deployments"].get(instance_id)
        return dep

    def ensure_deployment(self, instance_id: str, flavour_id: str, vnfd_id: str) -> dict[str, Any]:
        with self._tx() as state:
            dep = state["deployments"].get(instance_id)
            if dep is None:
                stack_id = new_id()
                dep = {
                    "instance_id": instance_id,
                    "stack_id": stack_id,
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
                }
                state["deployments"][instance_id] = dep
            return copy.deepcopy(dep)

    def set_deployment_status(self, instance_id: str, status: str, reason: str = "") -> None:
        with self._tx() as state:
            dep = state["deployments"].get(instance_id)
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
        with self._tx() as state:
            dep = self._deployment(state, instance_id)
            for _ in range(count):
                index = dep["next_index"].get(vdu_id, 0)
                dep["next_index"][vdu_id] = index + 1
                seq = dep["next_seq"]
                dep["next_seq"] = seq + 1
                vnfc_id = new_id()
                dep["vnfcs"][vnfc_id] = {
                    "id": vnfc_id,
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
                ids.append(vnfc_id)
            dep["updated_at"] = now_iso()
        return ids

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
                net = state["networks"].get(cp["network_id"])
                if net is None:
                    raise SimCloudError(f"network {cp['network_id']} of CP {cpd_id} does not exist")
                used = _used_addresses(state)
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
                    address = _allocate_address(net["cidr"], used, f"network {net['name']}")
                port = {
                    "id": new_id(),
                    "name": f"{vnfc['name']}-{cpd_id}",
                    "network_id": net["id"],
                    "fixed_ips": [{"subnet_id": net["subnet_id"], "ip_address": address}],
                    "mac_address": _new_mac(state),
                    "device_id": vnfc["server_id"] or "",
                    "device_owner": "compute:nova" if vnfc["server_id"] else "",
                    "status": "DOWN",
                    "instance_id": instance_id,
                    "vnfc_id": vnfc_id,
                    "cpd_id": cpd_id,
                    "floating_ip_id": None,
                    "created_at": now_iso(),
                }
                state["ports"][port["id"]] = port
                cp["port_id"] = port["id"]
                created = True
            if cp["external"] and not port.get("floating_ip_id"):
                public = self._ensure_public(state)
                used = _used_addresses(state)
                fip = {
                    "id": new_id(),
                    "floating_ip_address": _allocate_address(public["cidr"], used, "the floating IP pool"),
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
                created = True
            return copy.deepcopy(port), created

    # ------------------------------------------------------------------ volumes
    def ensure_volume(
        self, instance_id: str, vnfc_id: str, vsd_id: str, op_id: str
    ) -> tuple[dict[str, Any], bool]:
        with self._tx() as state:
            dep = self._deployment(state, instance_id)
            vnfc = dep["vnfcs"][vnfc_id]
            st = vnfc["storages"][vsd_id]
            vol = state["volumes"].get(st["volume_id"]) if st["volume_id"] else None
            if vol is not None:
                return copy.deepcopy(vol), False
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
            server = state["servers"].get(vnfc["server_id"]) if vnfc["server_id"] else None
            if server is not None:
                vol["attached_to"] = server["id"]
                vol["status"] = "in-use"
                server["volumes"].append(vol["id"])
            state["volumes"][vol["id"]] = vol
            st["volume_id"] = vol["id"]
            return copy.deepcopy(vol), True

    def delete_volume(self, instance_id: str, vnfc_id: str, vsd_id: str) -> str | None:
        """Detach and delete the volume of a VNFC's storage; returns its id (None when none)."""
        with self._tx() as state:
            dep = self._deployment(state, instance_id)
            st = dep["vnfcs"][vnfc_id]["storages"][vsd_id]
            vol_id = st["volume_id"]
            st["volume_id"] = None
            if vol_id:
                self._drop_volume(state, vol_id)
            return vol_id

    @staticmethod
    def _drop_volume(state: dict[str, Any], vol_id: str) -> None:
        vol = state["volumes"].pop(vol_id, None)
        if vol and vol.get("attached_to") in state["servers"]:
            server = state["servers"][vol["attached_to"]]
            server["volumes"] = [v for v in server["volumes"] if v != vol_id]

    # ------------------------------------------------------------------ servers
    def create_server(self, instance_id: str, vnfc_id: str, op_id: str) -> dict[str, Any]:
        """Create the server of a VNFC in BUILD (its ports and volumes must exist)."""
        with self._tx() as state:
            dep = self._deployment(state, instance_id)
            vnfc = dep["vnfcs"][vnfc_id]
            if vnfc["server_id"] in state["servers"]:
                raise Conflict(f"VNFC {vnfc_id} already has server {vnfc['server_id']}")
            faults = state["faults"]
            vdu_id = vnfc["vdu_id"]
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
                "vdu_id": vdu_id,
                "stack_id": dep["stack_id"],
                "op_id": op_id,
                "boot_until": time.time() + self.config.boot_time,
                "build_fault": build_fault,
                "created_at": now_iso(),
                "updated_at": now_iso(),
            }
            state["servers"][server_id] = server
            vnfc["server_id"] = server_id
            for pid in port_ids:
                port = state["ports"][pid]
                port["device_id"] = server_id
                port["device_owner"] = "compute:nova"
            for vid in volume_ids:
                vol = state["volumes"][vid]
                vol["attached_to"] = server_id
                vol["status"] = "in-use"
            return copy.deepcopy(server)

    def finish_boot(self, server_id: str) -> dict[str, Any]:
        """End the BUILD of a server: ACTIVE, or ERROR with a Nova fault when one was injected."""
        with self._tx() as state:
            server = state["servers"].get(server_id)
            if server is None:
                raise NotFound(f"server {server_id} does not exist")
            if server["status"] == "BUILD":
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
                        if pid in state["ports"]:
                            state["ports"][pid]["status"] = "ACTIVE"
            return copy.deepcopy(server)

    def begin_delete_server(self, server_id: str) -> dict[str, Any] | None:
        """Start deleting a server; an injected delete fault turns it to ERROR and raises."""
        with self._tx() as state:
            server = state["servers"].get(server_id)
            if server is None:
                return None
            pending = int(state["faults"].get("fail_delete") or 0)
            if pending > 0:
                state["faults"]["fail_delete"] = pending - 1
                server["status"] = "ERROR"
                server["task_state"] = None
                server["fault"] = {"code": 500, "message": DEFAULT_DELETE_FAULT, "created": now_iso()}
                server["updated_at"] = now_iso()
                failed = ServerDeleteError(server_id, server["name"], DEFAULT_DELETE_FAULT)
            else:
                server["task_state"] = "deleting"
                server["updated_at"] = now_iso()
                return copy.deepcopy(server)
        raise failed

    def finish_delete_server(self, server_id: str) -> None:
        """Remove a server: its ports are unbound, its volumes detached (kept)."""
        with self._tx() as state:
            server = state["servers"].pop(server_id, None)
            if server is None:
                return
            for pid in server["ports"]:
                port = state["ports"].get(pid)
                if port is not None and port["device_id"] == server_id:
                    port["device_id"] = ""
                    port["device_owner"] = ""
                    port["status"] = "DOWN"
            for vid in server["volumes"]:
                vol = state["volumes"].get(vid)
                if vol is not None and vol["attached_to"] == server_id:
                    vol["attached_to"] = None
                    vol["status"] = "available"
            dep = state["deployments"].get(server["instance_id"])
            if dep is not None:
                vnfc = dep["vnfcs"].get(server["vnfc_id"])
                if vnfc is not None and vnfc["server_id"] == server_id:
                    vnfc["server_id"] = None

    # ------------------------------------------------------------------ VNFC / deployment removal
    def remove_vnfc(self, instance_id: str, vnfc_id: str) -> None:
        """Delete the ports, floating IPs and volumes of a VNFC (its server must be gone)."""
        with self._tx() as state:
            dep = state["deployments"].get(instance_id)
            if dep is None or vnfc_id not in dep["vnfcs"]:
                return
            vnfc = dep["vnfcs"][vnfc_id]
            if vnfc["server_id"] in state["servers"]:
                raise Conflict(f"VNFC {vnfc_id} still has server {vnfc['server_id']}")
            for cp in vnfc["cps"].values():
                self._drop_port(state, cp["port_id"])
            for st in vnfc["storages"].values():
                if st["volume_id"]:
                    self._drop_volume(state, st["volume_id"])
            del dep["vnfcs"][vnfc_id]
            dep["removed"][vnfc_id] = vnfc["vdu_id"]
            dep["updated_at"] = now_iso()

    @staticmethod
    def _drop_port(state: dict[str, Any], port_id: str | None) -> None:
        if not port_id:
            return
        port = state["ports"].pop(port_id, None)
        if port and port.get("floating_ip_id"):
            state["floating_ips"].pop(port["floating_ip_id"], None)

    def drop_deployment(self, instance_id: str) -> None:
        """Delete what remains of a deployment: ports, volumes, internal networks, extras."""
        with self._tx() as state:
            dep = state["deployments"].pop(instance_id, None)
            state["extras"].pop(instance_id, None)
            if dep is None:
                return
            for pid in [p["id"] for p in state["ports"].values() if p.get("instance_id") == instance_id]:
                self._drop_port(state, pid)
            for vid in [v["id"] for v in state["volumes"].values() if v.get("instance_id") == instance_id]:
                self._drop_volume(state, vid)
            for fid in [
                f["id"] for f in state["floating_ips"].values() if f.get("instance_id") == instance_id
            ]:
                state["floating_ips"].pop(fid, None)
            in_use = {p["network_id"] for p in state["ports"].values()}
            for nid in [
                n["id"]
                for n in state["networks"].values()
                if n.get("instance_id") == instance_id and n["id"] not in in_use
            ]:
                del state["networks"][nid]

    # ------------------------------------------------------------------ faults
    def inject(
        self,
        faults: SimFaults | None = None,
        *,
        fail_build: dict[str, int] | None = None,
        build_message: str | None = None,
        unreachable: Iterable[str] = (),
        unreachable_next: dict[str, int] | None = None,
        fail_delete: int = 0,
    ) -> SimFaults:
        """Add faults (stored in the state: another process, e.g. the CLI, may inject them).

        `unreachable` takes server ids, VNFC ids or server names and applies at once; the other
        faults wait for the next builds / deletes. Returns the pending faults.
        """
        f = faults or SimFaults()
        builds = dict(f.fail_build)
        for vdu, n in (fail_build or {}).items():
            builds[vdu] = builds.get(vdu, 0) + n
        nexts = dict(f.unreachable_next)
        for vdu, n in (unreachable_next or {}).items():
            nexts[vdu] = nexts.get(vdu, 0) + n
        targets = [*f.unreachable, *unreachable]
        with self._tx() as state:
            for target in targets:
                self._find_server(state, target)["ssh_reachable"] = False
            pending = state["faults"]
            pb = pending.setdefault("fail_build", {})
            for vdu, n in builds.items():
                pb[vdu] = pb.get(vdu, 0) + n
            if build_message or f.build_message:
                pending["build_message"] = build_message or f.build_message
            pn = pending.setdefault("unreachable_next", {})
            for vdu, n in nexts.items():
                pn[vdu] = pn.get(vdu, 0) + n
            pending["fail_delete"] = int(pending.get("fail_delete") or 0) + fail_delete + f.fail_delete
            return SimFaults.from_dict(pending)

    def faults(self) -> SimFaults:
        """The faults still pending."""
        return SimFaults.from_dict(self.store.read()["faults"])

    def clear_faults(self) -> None:
        """Drop every pending fault and make every server reachable again."""
        with self._tx() as state:
            state["faults"] = {}
            for server in state["servers"].values():
                server["ssh_reachable"] = True

    def set_reachable(self, target: str, reachable: bool = True) -> dict[str, Any]:
        """Make one server (id, VNFC id or name) answer SSH again, or stop answering."""
        with self._tx() as state:
            server = self._find_server(state, target)
            server["ssh_reachable"] = reachable
            return copy.deepcopy(server)

    @staticmethod
    def _find_server(state: dict[str, Any], target: str) -> dict[str, Any]:
        servers = state["servers"]
        if target in servers:
            return servers[target]
        matches = [s for s in servers.values() if target in (s["vnfc_id"], s["name"])]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise NotFound(f"no simulated server with id, VNFC id or name '{target}'")
        raise Conflict(f"'{target}' names {len(matches)} simulated servers; use a server id")

    # ------------------------------------------------------------------ lookups for twins
    def server(self, server_id: str) -> dict[str, Any] | None:
        server = self.store.read()["servers"].get(server_id)
        return server

    def server_by_address(self, address: str) -> dict[str, Any] | None:
        """The server that owns a fixed or floating address (addresses are cloud-unique)."""
        state = self.store.read()
        port_id = None
        for fip in state["floating_ips"].values():
            if fip["floating_ip_address"] == address:
                port_id = fip["port_id"]
        if port_id is None:
            for port in state["ports"].values():
                if any(f["ip_address"] == address for f in port["fixed_ips"]):
                    port_id = port["id"]
        port = state["ports"].get(port_id) if port_id else None
        if port is None or not port["device_id"]:
            return None
        return state["servers"].get(port["device_id"])

    # ------------------------------------------------------------------ extras (twins' state)
    def extras(self, instance_id: str) -> dict[str, Any]:
        """A copy of the instance's extras: change it through `update_extras` / `edit_extras`."""
        return copy.deepcopy(self.store.read()["extras"].get(instance_id) or {})

    def update_extras(self, instance_id: str, fn: Callable[[dict[str, Any]], T]) -> T:
        """Run `fn(extras)` on the instance's mutable extras in one transaction; returns its result.

        Extras are deleted with the deployment (undeploy). Keys are free: management-driver
        twins keep cluster-side state there (nodes, etcd members, HAProxy backends, ...).
        """
        with self._tx() as state:
            extras = state["extras"].setdefault(instance_id, {})
            return fn(extras)

    @contextlib.contextmanager
    def edit_extras(self, instance_id: str) -> Iterator[dict[str, Any]]:
        """`with cloud.edit_extras(iid) as ex: ex["nodes"] = ...` — persisted when the block ends."""
        with self._tx() as state:
            yield state["extras"].setdefault(instance_id, {})

    # ------------------------------------------------------------------ read-only view
    def snapshot(self, instance_id: str | None = None, *, include_extras: bool = False) -> dict[str, Any]:
        """A JSON-ready view of the cloud (or of one instance's part of it)."""
        state = self.store.read()
        return build_snapshot(state, instance_id, include_extras=include_extras)


def _server_addresses(state: dict[str, Any], server: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Nova's `addresses`: network name -> fixed and floating addresses with the port's MAC."""
    out: dict[str, list[dict[str, Any]]] = {}
    for pid in server["ports"]:
        port = state["ports"].get(pid)
        if port is None:
            continue
        net = state["networks"].get(port["network_id"], {})
        entries = out.setdefault(net.get("name", port["network_id"]), [])
        for f in port["fixed_ips"]:
            entries.append(
                {"addr": f["ip_address"], "version": 4, "type": "fixed", "mac_addr": port["mac_address"]}
            )
        fip = state["floating_ips"].get(port.get("floating_ip_id") or "")
        if fip:
            entries.append(
                {
                    "addr": fip["floating_ip_address"],
                    "version": 4,
                    "type": "floating",
                    "mac_addr": port["mac_address"],
                }
            )
    return out


def build_snapshot(
    state: dict[str, Any], instance_id: str | None = None, *, include_extras: bool = False
) -> dict[str, Any]:
    def mine(rec: dict[str, Any]) -> bool:
        return instance_id is None or rec.get("instance_id") == instance_id

    ports = sorted((p for p in state["ports"].values() if mine(p)), key=lambda p: (p["created_at"], p["id"]))
    fips = sorted(
        (f for f in state["floating_ips"].values() if mine(f)), key=lambda f: f["floating_ip_address"]
    )
    used_nets = {p["network_id"] for p in ports} | {f["floating_network_id"] for f in fips}
    networks = sorted(
        (
            {k: v for k, v in n.items()}
            for n in state["networks"].values()
            if instance_id is None or n.get("instance_id") == instance_id or n["id"] in used_nets
        ),
        key=lambda n: (n["kind"], n["name"], n["id"]),
    )
    servers = []
    for s in sorted(state["servers"].values(), key=lambda s: (s["instance_id"], s["name"], s["created_at"])):
        if not mine(s):
            continue
        servers.append(
            {
                "id": s["id"],
                "name": s["name"],
                "status": s["status"],
                "task_state": s.get("task_state"),
                "image": s["image"],
                "flavor": s["flavor"],
                "addresses": _server_addresses(state, s),
                "ports": list(s["ports"]),
                "volumes": list(s["volumes"]),
                "host_key_type": s["host_key"]["type"],
                "host_key_fingerprint": s["host_key"]["fingerprint"],
                "host_public_key": s["host_key"]["public_key"],
                "ssh_reachable": s["ssh_reachable"],
                "fault": s.get("fault"),
                "instance_id": s["instance_id"],
                "vnfc_id": s["vnfc_id"],
                "vdu_id": s["vdu_id"],
                "stack_id": s.get("stack_id"),
                "created_at": s["created_at"],
                "updated_at": s["updated_at"],
            }
        )
    volumes = sorted(
        ({k: v for k, v in vol.items() if k != "op_id"} for vol in state["volumes"].values() if mine(vol)),
        key=lambda v: (v["name"], v["id"]),
    )
    deployments = []
    for dep in sorted(state["deployments"].values(), key=lambda d: d["created_at"]):
        if instance_id is not None and dep["instance_id"] != instance_id:
            continue
        vnfcs = []
        for v in sorted(dep["vnfcs"].values(), key=lambda v: v["seq"]):
            server = state["servers"].get(v["server_id"] or "")
            vnfcs.append(
                {
                    "id": v["id"],
                    "vdu_id": v["vdu_id"],
                    "seq": v["seq"],
                    "name": v["name"],
                    "server_id": v["server_id"],
                    "server_status": server["status"] if server else None,
                    "ports": {cpd: cp["port_id"] for cpd, cp in v["cps"].items()},
                    "volumes": {sid: st["volume_id"] for sid, st in v["storages"].items()},
                    "created_at": v["created_at"],
                }
            )
        entry: dict[str, Any] = {
            "instance_id": dep["instance_id"],
            "stack_id": dep["stack_id"],
            "stack_name": dep["stack_name"],
            "status": dep["status"],
            "status_reason": dep.get("status_reason", ""),
            "flavour_id": dep["flavour_id"],
            "vnfd_id": dep.get("vnfd_id"),
            "created_at": dep["created_at"],
            "updated_at": dep["updated_at"],
            "virtual_links": sorted(dep["virtual_links"].values(), key=lambda vl: vl["vld_id"]),
            "vnfcs": vnfcs,
        }
        if include_extras:
            entry["extras"] = copy.deepcopy(state["extras"].get(dep["instance_id"], {}))
        deployments.append(entry)
    return copy.deepcopy(
        {
            "networks": networks,
            "ports": ports,
            "floating_ips": fips,
            "servers": servers,
            "volumes": volumes,
            "deployments": deployments,
            "faults": SimFaults.from_dict(state["faults"]).to_dict(),
        }
    )
