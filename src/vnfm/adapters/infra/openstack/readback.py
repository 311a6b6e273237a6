"""What the stack holds, as the VNF's resources: VNFCs with their CPs (ports, addresses, floating
IPs) and virtual storages (volumes), and the internal virtual links (networks of the stack).

VNFC sequence numbers are kept from the resources known before (`ctx.resources`); new VNFCs get
the next ones in creation order."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from vnfm.adapters.infra.openstack.cloud import Cloud
from vnfm.adapters.infra.openstack.hot import FIP_TYPE, SERVER_TYPE, VOLUME_TYPE
from vnfm.adapters.infra.openstack.tree import NS, Member, Tree, server_of
from vnfm.domain.ext_links import ext_cp_map
from vnfm.domain.resources import CpResource, StorageResource, VirtualLinkResource, Vnfc, VnfResources
from vnfm.domain.vnfd import Flavour
from vnfm.service.ports import InfraContext


async def read_resources(ctx: InfraContext, cloud: Cloud, tree: Tree) -> VnfResources:
    flavour = ctx.flavour
    old_seq = {v.id: v.seq for v in ctx.resources.vnfcs}
    next_seq = max(old_seq.values(), default=0)
    vls = virtual_links(flavour, tree)
    vl_by_net = {vl.network_id: vl.vld_id for vl in vls}
    vnfcs: list[Vnfc] = []
    for m in tree.members:
        if m.vnfc_id in old_seq:
            seq = old_seq[m.vnfc_id]
        else:
            next_seq += 1
            seq = next_seq
        vnfcs.append(await _vnfc(ctx, cloud, tree, m, seq, vl_by_net))
    vnfcs.sort(key=lambda v: v.seq)
    return VnfResources(vnfcs=vnfcs, virtual_links=vls, stack_id=str(tree.stack["id"]))


def virtual_links(flavour: Flavour, tree: Tree) -> list[VirtualLinkResource]:
    """The networks of the top template named after an internal VL of the flavour."""
    vls: list[VirtualLinkResource] = []
    for r in tree.top:
        if r.get("resource_type") == "OS::Neutron::Net" and r["resource_name"] in flavour.virtual_links:
            vls.append(
                VirtualLinkResource(
                    id=str(uuid.uuid5(NS, f"{tree.stack['id']}/{r['resource_name']}")),
                    vld_id=r["resource_name"],
                    network_id=str(r.get("physical_resource_id") or ""),
                )
            )
    return vls


async def _vnfc(
    ctx: InfraContext, cloud: Cloud, tree: Tree, m: Member, seq: int, vl_by_net: dict[str, str]
) -> Vnfc:
    server_id = server_of(m)
    server = (await asyncio.to_thread(cloud.get_server, server_id) if server_id else None) or {}
    flavor = server.get("flavor") or {}
    image = server.get("image") or {}
    return Vnfc(
        id=m.vnfc_id,
        vdu_id=m.vdu_id,
        server_id=server_id,
        name=str(server.get("name") or m.vdu_id),
        cps=await _cps(ctx, cloud, tree, m, server_id, vl_by_net),
        storages=await _storages(ctx.flavour, cloud, m),
        resource_type=SERVER_TYPE,
        seq=seq,
        created_at=m.created,
        metadata={
            "server_status": server.get("status"),
            "flavor": flavor.get("original_name") or flavor.get("name") or flavor.get("id"),
            "image": image.get("id") if isinstance(image, dict) else image,
            "heat": {"stack_id": m.stack_id, "group": m.group, "member": m.member_name, "resource": m.vdu_id},
        },
    )


async def _cps(
    ctx: InfraContext, cloud: Cloud, tree: Tree, m: Member, server_id: str, vl_by_net: dict[str, str]
) -> list[CpResource]:
    """The member's CPs: the port named after the CP, else the server's n-th port (CP order)."""
    ext = ext_cp_map(ctx.ext_virtual_links)
    by_name = {r["resource_name"]: r for r in m.resources}
    has_fip = any(r.get("resource_type") == FIP_TYPE for r in [*m.resources, *tree.top])
    cps: list[CpResource] = []
    unnamed_ports: list[dict[str, Any]] | None = None
    for i, cp in enumerate(ctx.flavour.cps_of(m.vdu_id)):
        pr = by_name.get(cp.id)
        port: dict[str, Any] | None = None
        if pr is not None and pr.get("physical_resource_id"):
            port = await asyncio.to_thread(cloud.get_port, str(pr["physical_resource_id"]))
        elif server_id:
            if unnamed_ports is None:
                unnamed_ports = await asyncio.to_thread(cloud.server_ports, server_id)
            port = unnamed_ports[i] if i < len(unnamed_ports) else None
        if not port:
            continue
        fips = await asyncio.to_thread(cloud.port_floating_ips, str(port["id"])) if has_fip else []
        net_id = str(port.get("network_id") or "")
        cps.append(
            CpResource(
                id=str(uuid.uuid5(NS, f"{m.vnfc_id}/{cp.id}")),
                cpd_id=cp.id,
                port_id=str(port["id"]),
                ip_addresses=[str(f["ip_address"]) for f in port.get("fixed_ips") or []],
                mac_address=port.get("mac_address"),
                floating_ip=fips[0] if fips else None,
                network_id=net_id or None,
                ext_virtual_link_id=ext[cp.id][0] if cp.id in ext else None,
                virtual_link_id=cp.virtual_link or vl_by_net.get(net_id),
            )
        )
    return cps


async def _storages(flavour: Flavour, cloud: Cloud, m: Member) -> list[StorageResource]:
    by_name = {r["resource_name"]: r for r in m.resources}
    storages: list[StorageResource] = []
    for vsd_id in flavour.vdus[m.vdu_id].storages:
        vr = by_name.get(vsd_id)
        if vr is None or vr.get("resource_type") != VOLUME_TYPE or not vr.get("physical_resource_id"):
            continue
        vol = await asyncio.to_thread(cloud.get_volume, str(vr["physical_resource_id"]))
        storages.append(
            StorageResource(
                id=str(uuid.uuid5(NS, f"{m.vnfc_id}/{vsd_id}")),
                virtual_storage_desc_id=vsd_id,
                volume_id=str(vr["physical_resource_id"]),
                size_gb=float(vol["size"]) if vol and vol.get("size") is not None else None,
            )
        )
    return storages
