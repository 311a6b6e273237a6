"""The simulated cloud's vocabulary: configuration, pending faults, errors, and the specs the
driver passes when it records new VNFCs."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from vnfm.domain.errors import OperationFailed

MGMT_NETWORK_ID = "sim-mgmt"
PUBLIC_NETWORK_ID = "sim-public"
DEFAULT_BUILD_FAULT = "No valid host was found. There are not enough hosts available."
DEFAULT_DELETE_FAULT = "Failed to delete the server: the compute host did not answer."


_second: tuple[int, str] = (-1, "")  # the last second formatted by now_iso, and its text


def now_iso() -> str:
    """The time as a record's timestamp (UTC, microseconds): "2026-01-02T03:04:05.123456Z".
    The seconds' text is formatted once per second (records take several timestamps each)."""
    global _second
    sec, micro = divmod(round(time.time() * 1_000_000), 1_000_000)  # rounded as datetime rounds
    last = _second
    if last[0] != sec:
        last = _second = (sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)))
    return f"{last[1]}.{micro:06d}Z"


# ============================================================================= configuration
@dataclass
class SimConfig:
    """Latencies of the simulated cloud, in seconds (0 is allowed: no waiting at all), and its
    address pools, sized for thousands of clusters (a cluster of n nodes takes n management
    addresses and n floating IPs). Widening `mgmt_cidr` or `public_cidr` (a CIDR that holds the
    old one) takes effect on the existing network."""

    boot_time: float = 0.05  # BUILD -> ACTIVE of one server
    api_latency: float = 0.005  # each API call (create port, volume, network, server, ...)
    delete_time: float = 0.02  # a server delete
    mgmt_cidr: str = "10.10.0.0/16"  # the management network "sim-mgmt" (65,000 addresses)
    public_cidr: str = "172.24.0.0/16"  # floating IP pool (65,000 addresses)
    # External networks created on demand (an extVirtualLinks[].resourceId the cloud does not
    # know: Tacker's samples name one network for every cluster) get a /external_prefix of this
    # pool: /16 by default, 65,534 addresses (over 20,000 three-node clusters on one network),
    # 16 such networks in the pool.
    external_pool: str = "10.16.0.0/12"
    external_prefix: int = 16
    internal_pool: str = "10.64.0.0/10"  # /24s of internal VLs that give no cidr (16,384)


# The settings (environment variables) that set SimConfig's pools; errors name them.
POOL_SETTINGS = {
    "mgmt_cidr": "VNFM_SIM_MGMT_CIDR",
    "public_cidr": "VNFM_SIM_PUBLIC_CIDR",
    "external_pool": "VNFM_SIM_EXTERNAL_POOL",
    "internal_pool": "VNFM_SIM_INTERNAL_POOL",
    "external_prefix": "VNFM_SIM_EXTERNAL_PREFIX",
}


def exhausted(what: str, cidr: str, field_name: str | None = None) -> str:
    """The error text of a full pool: which pool, its CIDR and (when it is one) the setting."""
    size = {"external_pool": "network", "internal_pool": "/24"}.get(field_name or "", "address")
    text = f"no free {size} left in {what} ({cidr})"
    if field_name:
        text += f": give a larger one in SimConfig.{field_name} (setting {POOL_SETTINGS[field_name]})"
    return text


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
    # Servers (server id, VNFC id or server name) whose VM dies now: SHUTOFF, no SSH (a heal replaces it).
    stopped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fail_build": dict(self.fail_build),
            "build_message": self.build_message,
            "unreachable_next": dict(self.unreachable_next),
            "unreachable": list(self.unreachable),
            "fail_delete": self.fail_delete,
            "stopped": list(self.stopped),
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
            stopped=[str(x) for x in data.get("stopped") or []],
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
