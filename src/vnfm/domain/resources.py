"""The virtualised resources of one VNF instance, as infrastructure drivers report them.

One model for every VIM: the simulated cloud and the OpenStack (Heat) driver both fill it, and
`instantiatedVnfInfo` is derived from it (vnfm.domain.views).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class CpResource:
    id: str  # vnfcCpInfo.id
    cpd_id: str
    port_id: str  # VIM port (vnfLinkPort resource id)
    ip_addresses: list[str] = field(default_factory=list)
    mac_address: str | None = None
    floating_ip: str | None = None
    network_id: str | None = None  # VIM network the port is on
    ext_virtual_link_id: str | None = None  # extVirtualLinks[].id when on an external VL
    virtual_link_id: str | None = None  # internal VL descriptor id when on an internal VL


@dataclass
class StorageResource:
    id: str  # virtualStorageResourceInfo.id
    virtual_storage_desc_id: str
    volume_id: str  # VIM volume id
    size_gb: float | None = None


@dataclass
class Vnfc:
    id: str  # vnfcResourceInfo.id == vnfcInstanceId: stable across heal
    vdu_id: str
    server_id: str  # computeResource.resourceId: changes when healed
    name: str = ""
    cps: list[CpResource] = field(default_factory=list)
    storages: list[StorageResource] = field(default_factory=list)
    resource_type: str = "OS::Nova::Server"
    seq: int = 0  # creation order within the instance (scale-in removes the highest first)
    created_at: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def cp(self, cpd_id: str) -> CpResource | None:
        return next((c for c in self.cps if c.cpd_id == cpd_id), None)

    @property
    def never_built(self) -> bool:
        """Recorded by the infrastructure but never given a server or any address (an operation
        was interrupted while creating it): nothing can have been configured on it."""
        return not self.server_id or not any(c.ip_addresses or c.floating_ip for c in self.cps)

    def address(self, cpd_id: str, *, floating_first: bool = True) -> str | None:
        cp = self.cp(cpd_id)
        if cp is None:
            return None
        if floating_first and cp.floating_ip:
            return cp.floating_ip
        return cp.ip_addresses[0] if cp.ip_addresses else None


@dataclass
class VirtualLinkResource:
    id: str
    vld_id: str
    network_id: str
    subnet_id: str | None = None
    cidr: str | None = None


@dataclass
class VnfResources:
    vnfcs: list[Vnfc] = field(default_factory=list)
    virtual_links: list[VirtualLinkResource] = field(default_factory=list)
    stack_id: str | None = None  # the VIM-side grouping (Heat stack, simulator deployment)

    def by_id(self, vnfc_id: str) -> Vnfc | None:
        return next((v for v in self.vnfcs if v.id == vnfc_id), None)

    def of_vdu(self, vdu_id: str) -> list[Vnfc]:
        return sorted((v for v in self.vnfcs if v.vdu_id == vdu_id), key=lambda v: v.seq)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.vnfcs:
            out[v.vdu_id] = out.get(v.vdu_id, 0) + 1
        return out

    def ids(self) -> set[str]:
        return {v.id for v in self.vnfcs}

    # --- JSON round trip (used by the database adapter and the occurrence checkpoint) ---
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> VnfResources:
        if not data:
            return cls()
        vnfcs = []
        for v in data.get("vnfcs", []):
            v = dict(v)
            v["cps"] = [CpResource(**c) for c in v.get("cps", [])]
            v["storages"] = [StorageResource(**s) for s in v.get("storages", [])]
            vnfcs.append(Vnfc(**v))
        vls = [VirtualLinkResource(**vl) for vl in data.get("virtual_links", [])]
        return cls(vnfcs=vnfcs, virtual_links=vls, stack_id=data.get("stack_id"))
