"""What the InfraDriver port reports of an instance, read from its records in the simulated cloud."""

from __future__ import annotations

from typing import Any

from vnfm.domain.resources import CpResource, StorageResource, VirtualLinkResource, Vnfc, VnfResources


def resources_of(state: dict[str, Any], instance_id: str) -> VnfResources:
    """The instance's resources as the InfraDriver port reports them."""
    dep = state["deployments"].get(instance_id)
    if dep is None:
        return VnfResources()
    vnfcs: list[Vnfc] = []
    for v in sorted(dep["vnfcs"].values(), key=lambda v: v["seq"]):
        server = state["servers"].get(v["server_id"] or "")
        cps: list[CpResource] = []
        fip_names: dict[str, str] = {}
        for cpd_id, cp in v["cps"].items():
            port = state["ports"].get(cp["port_id"] or "")
            fip = state["floating_ips"].get((port or {}).get("floating_ip_id") or "")
            if fip:
                for name in fip.get("resource_names") or []:
                    fip_names[name] = fip["floating_ip_address"]
            cps.append(
                CpResource(
                    id=cp["id"],
                    cpd_id=cpd_id,
                    port_id=cp["port_id"] or "",
                    ip_addresses=[f["ip_address"] for f in port["fixed_ips"]] if port else [],
                    mac_address=port["mac_address"] if port else None,
                    floating_ip=fip["floating_ip_address"] if fip else None,
                    network_id=cp["network_id"],
                    ext_virtual_link_id=cp["ext_virtual_link_id"],
                    virtual_link_id=cp["virtual_link_id"],
                )
            )
        storages = [
            StorageResource(
                id=st["id"],
                virtual_storage_desc_id=vsd_id,
                volume_id=st["volume_id"] or "",
                size_gb=st["size_gb"],
            )
            for vsd_id, st in v["storages"].items()
        ]
        metadata: dict[str, Any] = {
            "server_status": server["status"] if server else None,
            "host_key_fingerprint": server["host_key"]["fingerprint"] if server else None,
            "image": v["server_spec"]["image"],
            "flavor": v["server_spec"]["flavor"],
        }
        if fip_names:
            metadata["floating_ip_resources"] = fip_names
        vnfcs.append(
            Vnfc(
                id=v["id"],
                vdu_id=v["vdu_id"],
                server_id=v["server_id"] or "",
                name=v["name"],
                cps=cps,
                storages=storages,
                resource_type="OS::Nova::Server",
                seq=v["seq"],
                created_at=v["created_at"],
                metadata=metadata,
            )
        )
    vls = []
    for vl in sorted(dep["virtual_links"].values(), key=lambda x: x["vld_id"]):
        net = state["networks"].get(vl["network_id"]) or {}
        vls.append(
            VirtualLinkResource(
                id=vl["id"],
                vld_id=vl["vld_id"],
                network_id=vl["network_id"],
                subnet_id=net.get("subnet_id"),
                cidr=net.get("cidr"),
            )
        )
    return VnfResources(vnfcs=vnfcs, virtual_links=vls, stack_id=dep["stack_id"])
