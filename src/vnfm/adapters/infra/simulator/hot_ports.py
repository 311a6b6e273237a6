"""A port of the flavour's BaseHOT that belongs to no VDU (Tacker's `vip_CP` of the HA flavour):
on OpenStack Heat creates it and its fixed IP is the keepalived VIP; the simulated cloud keeps an
address for it on the network Heat would have put it on:

- `network: {get_param: [nfv, CP, <cp>, network]}`: the network of that CP's ports;
- a network named in the template (`network: net0`, an id or a name): that network of the
  simulated cloud when it has one; else the network of the VDU CP the template hands the port's
  address to (`get_attr: [vip_CP, ...]` in the properties of a group or server that also passes
  that CP's network, as the reference's master group does); a port that fits none is refused.
"""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.openstack.hot import BaseHot, load_base_hot
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import Flavour
from vnfm.service.ports import PackageFiles


def own_port_network(package: PackageFiles | None, flavour: Flavour,
                     cp_name: str) -> tuple[str | None, str | None] | None:
    """None when `cp_name` is not a port of its own in the flavour's BaseHOT (or there is none);
    else where it goes: (a VDU CP whose network it shares, a network named in the template).
    UnprocessableEntity when it names neither."""
    if package is None or not any(p.startswith(f"BaseHOT/{flavour.id}/") for p in package.listing()):
        return None
    hot = load_base_hot(package, flavour)
    if cp_name not in hot.standalone_ports(flavour):
        return None
    port = (hot.template.get("resources") or {})[cp_name]
    net = (port.get("properties") or {}).get("network")
    gp = net.get("get_param") if isinstance(net, dict) else None
    if isinstance(gp, list) and len(gp) >= 4 and gp[:2] == ["nfv", "CP"] and str(gp[2]) in flavour.cps:
        return str(gp[2]), None
    named = net if isinstance(net, str) and net else None
    given_to = _cps_given_address(hot, flavour, cp_name)
    if named is None and not given_to:
        raise UnprocessableEntity(f"{hot.top_path}: port {cp_name} names no network the simulated cloud can tell "
                                  "(a network name, or get_param [nfv, CP, <cp>, network])")
    return (given_to[0] if given_to else None), named


def _cps_given_address(hot: BaseHot, flavour: Flavour, cp_name: str) -> list[str]:
    """VDU CPs whose network the resources that read `cp_name`'s address also pass (sorted)."""
    found: set[str] = set()
    for res in (hot.template.get("resources") or {}).values():
        if isinstance(res, dict) and _refers(res.get("properties"), cp_name):
            _cp_params(res.get("properties"), found)
    return sorted(c for c in found if c in flavour.cps and flavour.cps[c].vdu_id in flavour.vdus)


def _refers(node: Any, name: str) -> bool:
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("get_attr", "get_resource") and (v == name or (isinstance(v, list) and v and v[0] == name)):
                return True
            if _refers(v, name):
                return True
    elif isinstance(node, list):
        return any(_refers(v, name) for v in node)
    return False


def _cp_params(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        gp = node.get("get_param")
        if isinstance(gp, list) and len(gp) >= 4 and gp[:2] == ["nfv", "CP"] and gp[3] == "network":
            found.add(str(gp[2]))
        for v in node.values():
            _cp_params(v, found)
    elif isinstance(node, list):
        for v in node:
            _cp_params(v, found)
