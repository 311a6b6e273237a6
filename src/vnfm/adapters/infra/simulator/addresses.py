"""Address, subnet and MAC allocation. Addresses are unique across the whole cloud (every network,
fixed and floating), so an address always names one port."""

from __future__ import annotations

import ipaddress
import secrets
from typing import Any

from vnfm.adapters.infra.simulator.model import SimCloudError

# Neutron gives the first addresses of a subnet to the gateway and DHCP agents.
FIRST_HOST_OFFSET = 10


def used_addresses(state: dict[str, Any]) -> set[str]:
    used: set[str] = set()
    for port in state["ports"].values():
        used.update(f["ip_address"] for f in port["fixed_ips"])
    used.update(f["floating_ip_address"] for f in state["floating_ips"].values())
    for net in state["networks"].values():
        if net.get("gateway_ip"):
            used.add(net["gateway_ip"])
    for dep in state["deployments"].values():
        used.update(r["address"] for r in (dep.get("reservations") or {}).values())
    return used


def allocate_address(cidr: str, used: set[str], what: str, *, from_top: bool = False) -> str:
    """The lowest free address of `cidr` past the gateway and DHCP agents' ones, or the highest
    free one (`from_top`: reservations, so that they stay away from ports)."""
    net = ipaddress.ip_network(cidr, strict=False)
    if from_top:
        for host in reversed(list(net.hosts())):
            if str(host) not in used:
                return str(host)
        raise SimCloudError(f"no free address left in {what} ({cidr})")
    offset = FIRST_HOST_OFFSET if net.num_addresses > 4 * FIRST_HOST_OFFSET else 2
    for i, host in enumerate(net.hosts()):
        if i + 1 < offset:
            continue
        if str(host) not in used:
            return str(host)
    raise SimCloudError(f"no free address left in {what} ({cidr})")


def free_subnet(pool: str, state: dict[str, Any]) -> str:
    taken = [ipaddress.ip_network(n["cidr"]) for n in state["networks"].values() if n.get("cidr")]
    for candidate in ipaddress.ip_network(pool).subnets(new_prefix=24):
        if not any(candidate.overlaps(t) for t in taken):
            return str(candidate)
    raise SimCloudError(f"no free /24 left in pool {pool}")


def new_mac(state: dict[str, Any]) -> str:
    used = {p["mac_address"] for p in state["ports"].values()}
    while True:
        mac = "fa:16:3e:" + ":".join(f"{b:02x}" for b in secrets.token_bytes(3))
        if mac not in used:
            return mac
