"""Addresses kept for a purpose (a keepalived VIP of a control plane): `reserve_address` /
`release_address` on OpenStack.

* The flavour's BaseHOT has a port of its own for the CP (a port of the top template that is no
  VDU's, like the `vip_CP` of the reference's HA flavour): the address is that port's fixed IP.
  The port is the stack's: it goes with the stack, and the package's templates say which ports
  may carry the address (their `allowed_address_pairs`, e.g. from `get_attr: [vip_CP, ...]`).
* Otherwise the CP is a VDU's: vnfm creates a Neutron port on that CP's network and subnet
  (`device_owner` "vnfm:address", `device_id` the VNF instance id, named `vnfm-<purpose>-<instance>`
  so that asking again finds it, even after a crash), and adds its address to the
  `allowed_address_pairs` of every port of that CP: with port security on, Neutron drops traffic
  from an address a port does not own, so a VIP that keepalived moves between servers must be
  allowed on each of them (ports with port security off need nothing, and Neutron refuses pairs
  there). The pairs are made again after every deploy / scale / heal (`sync`), so new VNFCs of the
  CP get them. `release` removes the pairs and deletes the port; `undeploy` deletes every port the
  instance kept (the pairs go with the stack's ports).

Security groups are the package's: VRRP between the servers (IP protocol 112) must be allowed by
them (the default group allows traffic between its members).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from vnfm.adapters.infra.openstack.cloud import Cloud, OpenStackApiError
from vnfm.adapters.infra.openstack.hot import BaseHot
from vnfm.adapters.infra.openstack.stacks import Timing, existing, stack_name_of
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.ext_links import ext_cp_map
from vnfm.domain.resources import CpResource, VnfResources
from vnfm.service.ports import InfraContext

OWNER = "vnfm:address"  # device_owner of the ports vnfm keeps for addresses
_PURPOSE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_FOR_CP = re.compile(r", for CP (\S+)$")


def port_name(instance_id: str, purpose: str) -> str:
    return f"vnfm-{purpose}-{instance_id}"


def _description(instance_id: str, purpose: str, cp_name: str) -> str:
    return f"vnfm: {purpose} address of VNF instance {instance_id}, for CP {cp_name}"


def _cp_of(port: dict[str, Any]) -> str | None:
    m = _FOR_CP.search(str(port.get("description") or ""))
    return m.group(1) if m else None


def _address(port: dict[str, Any], subnet_id: str | None = None) -> str | None:
    ips = [f for f in port.get("fixed_ips") or [] if not subnet_id or f.get("subnet_id") == subnet_id]
    return str(ips[0]["ip_address"]) if ips else None


def check_purpose(purpose: str) -> None:
    if not _PURPOSE.fullmatch(purpose or ""):
        raise UnprocessableEntity(
            f"address purpose '{purpose}': use 1 to 64 letters, digits, '.', '_' or '-' (e.g. control-plane-vip)"
        )


async def kept_ports(cloud: Cloud, instance_id: str) -> list[dict[str, Any]]:
    """The ports vnfm keeps for the instance's addresses, oldest first."""
    ports = await asyncio.to_thread(cloud.list_ports, device_id=instance_id, device_owner=OWNER)
    return sorted(ports, key=lambda p: (str(p.get("created_at") or ""), str(p["id"])))


async def kept_for(cloud: Cloud, instance_id: str, purpose: str) -> list[dict[str, Any]]:
    """The port(s) kept for `purpose` (one, unless two callers raced), oldest first."""
    name = port_name(instance_id, purpose)
    return [p for p in await kept_ports(cloud, instance_id) if p.get("name") == name]


# ---------------------------------------------------------------------------------- the package's port
async def package_port_address(ctx: InfraContext, cloud: Cloud, hot: BaseHot, cp_name: str, timing: Timing) -> str:
    """The fixed IP of the BaseHOT's own port `cp_name`, as the deployed stack has it."""
    stack = await existing(ctx, cloud, timing)
    top = await asyncio.to_thread(cloud.list_resources, stack["id"])
    res = next((r for r in top if r.get("resource_name") == cp_name), None)
    port_id = str((res or {}).get("physical_resource_id") or "")
    port = await asyncio.to_thread(cloud.get_port, port_id) if port_id else None
    if port is None:
        raise OperationFailed(
            f"CP {cp_name}: the port that {hot.top_path} declares has no Neutron port in stack "
            f"{stack_name_of(ctx.instance_id)} ({stack['stack_status']})"
        )
    address = _address(port)
    if address is None:
        raise OperationFailed(f"CP {cp_name}: port {port['id']} on network {port.get('network_id')} has no fixed IP")
    return address


# ---------------------------------------------------------------------------------- a port of vnfm's
async def reserve(ctx: InfraContext, cloud: Cloud, cp_name: str, purpose: str, resources: VnfResources) -> str:
    """The address kept for `purpose` on the network of the VDU CP `cp_name` (created once)."""
    same = await kept_for(cloud, ctx.instance_id, purpose)
    if same:
        port = same[0]
        held_for = _cp_of(port)
        if held_for and held_for != cp_name:
            raise UnprocessableEntity(
                f"the {purpose} address of VNF instance {ctx.instance_id} is kept on CP {held_for} "
                f"(network {port.get('network_id')}), not on CP {cp_name}: release it first"
            )
        ctx.progress(f"address for {purpose} already kept: port {port['id']}")
    else:
        port = await _create(ctx, cloud, cp_name, purpose, resources)
    network = str(port.get("network_id") or "")
    address = _address(port)
    if address is None:
        await asyncio.to_thread(cloud.delete_port, str(port["id"]))
        raise OperationFailed(f"CP {cp_name}: network {network} gave port {port['id']} no address (no subnet?)")
    await _allow(ctx, cloud, _cp_ports(resources, cp_name), address, cp_name, network)
    return address


async def _create(
    ctx: InfraContext, cloud: Cloud, cp_name: str, purpose: str, resources: VnfResources
) -> dict[str, Any]:
    network, subnet = await _network_of(ctx, cloud, cp_name, resources)
    try:
        port = await asyncio.to_thread(
            cloud.create_port,
            network,
            name=port_name(ctx.instance_id, purpose),
            description=_description(ctx.instance_id, purpose, cp_name),
            device_id=ctx.instance_id,
            device_owner=OWNER,
            subnet_id=subnet,
        )
    except OpenStackApiError as exc:
        raise OperationFailed(
            f"cannot keep an address for {purpose} on network {network} (CP {cp_name}): {exc.detail}"
        ) from None
    ctx.progress(f"port {port['id']} keeps {_address(port)} for {purpose} on network {network} (CP {cp_name})")
    # Two callers at once would each create one: keep the oldest, delete the others.
    same = await kept_for(cloud, ctx.instance_id, purpose)
    for extra in same[1:]:
        await asyncio.to_thread(cloud.delete_port, str(extra["id"]))
    return same[0] if same else port


async def _network_of(
    ctx: InfraContext, cloud: Cloud, cp_name: str, resources: VnfResources
) -> tuple[str, str | None]:
    """(network id, subnet id or None) of the CP: its ports' once deployed, else the request's."""
    for cp in _cp_ports(resources, cp_name):
        port = await asyncio.to_thread(cloud.get_port, cp.port_id)
        if port is not None and port.get("network_id"):
            subnets = [f.get("subnet_id") for f in port.get("fixed_ips") or [] if f.get("subnet_id")]
            return str(port["network_id"]), (str(subnets[0]) if subnets else None)
    ext = ext_cp_map(ctx.ext_virtual_links)
    if cp_name in ext:
        return ext[cp_name][1], None
    nfv_cp = (((ctx.additional_params or {}).get("nfv") or {}).get("CP") or {}).get(cp_name) or {}
    if isinstance(nfv_cp, dict) and nfv_cp.get("network"):
        return str(nfv_cp["network"]), None
    raise UnprocessableEntity(
        f"CP {cp_name} of VNF instance {ctx.instance_id} has no port yet and no network in the request "
        "(extVirtualLinks[].extCps or additionalParams.nfv.CP): cannot tell the network to keep an address on"
    )


def _cp_ports(resources: VnfResources, cp_name: str) -> list[CpResource]:
    return [cp for v in resources.vnfcs for cp in v.cps if cp.cpd_id == cp_name and cp.port_id]


async def _allow(
    ctx: InfraContext, cloud: Cloud, cps: list[CpResource], address: str, cp_name: str, network: str
) -> None:
    """`address` in the allowed_address_pairs of each port of the CP (port security on)."""
    for cp in cps:
        port = await asyncio.to_thread(cloud.get_port, cp.port_id)
        if port is None or port.get("port_security_enabled") is False:
            continue
        pairs = list(port.get("allowed_address_pairs") or [])
        if any(str(p.get("ip_address")).split("/")[0] == address for p in pairs):
            continue
        try:
            await asyncio.to_thread(cloud.set_allowed_address_pairs, cp.port_id, [*pairs, {"ip_address": address}])
        except OpenStackApiError as exc:
            raise OperationFailed(
                f"cannot allow {address} on port {cp.port_id} of CP {cp_name} (network {network}): {exc.detail}"
            ) from None
        ctx.progress(f"port {cp.port_id} of CP {cp_name} may now carry {address}")


async def _disallow(ctx: InfraContext, cloud: Cloud, cps: list[CpResource], address: str) -> None:
    for cp in cps:
        port = await asyncio.to_thread(cloud.get_port, cp.port_id)
        pairs = list((port or {}).get("allowed_address_pairs") or [])
        kept = [p for p in pairs if str(p.get("ip_address")).split("/")[0] != address]
        if len(kept) != len(pairs):
            await asyncio.to_thread(cloud.set_allowed_address_pairs, cp.port_id, kept)
            ctx.progress(f"port {cp.port_id} of CP {cp.cpd_id} no longer carries {address}")


async def sync(ctx: InfraContext, cloud: Cloud, resources: VnfResources) -> None:
    """Every kept address allowed on every port of its CP (VNFCs added since it was kept)."""
    for port in await kept_ports(cloud, ctx.instance_id):
        cp_name, address = _cp_of(port), _address(port)
        if cp_name and address:
            await _allow(ctx, cloud, _cp_ports(resources, cp_name), address, cp_name, str(port.get("network_id")))


async def release(
    ctx: InfraContext, cloud: Cloud, purpose: str, kept: list[dict[str, Any]], resources: VnfResources
) -> None:
    """Take the `kept` ports' addresses off the CP's ports, then delete them."""
    for port in kept:
        address, cp_name = _address(port), _cp_of(port)
        if address:
            cps = [c for v in resources.vnfcs for c in v.cps if c.port_id and cp_name in (None, c.cpd_id)]
            await _disallow(ctx, cloud, cps, address)
        await asyncio.to_thread(cloud.delete_port, str(port["id"]))
        ctx.progress(f"port {port['id']} ({address}) kept for {purpose} deleted")


async def release_all(ctx: InfraContext, cloud: Cloud) -> None:
    """Delete every port kept for the instance (undeploy: the stack's ports are gone already)."""
    for port in await kept_ports(cloud, ctx.instance_id):
        await asyncio.to_thread(cloud.delete_port, str(port["id"]))
        ctx.progress(f"port {port['id']} ({_address(port)}) kept for {port.get('name')} deleted")
