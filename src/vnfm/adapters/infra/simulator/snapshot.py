"""The JSON-ready view of the simulated cloud (`vnfm sim state`, `GET /sim/v1/state`)."""

from __future__ import annotations

import copy
from typing import Any

from vnfm.adapters.infra.simulator.model import SimFaults


def build_snapshot(
    state: dict[str, Any], instance_id: str | None = None, *, include_extras: bool = False
) -> dict[str, Any]:
    """The cloud (or one instance's part of it: its own records and the networks they use)."""

    def mine(rec: dict[str, Any]) -> bool:
        return instance_id is None or rec.get("instance_id") == instance_id

    ports = sorted((p for p in state["ports"].values() if mine(p)), key=lambda p: (p["created_at"], p["id"]))
    fips = sorted(
        (f for f in state["floating_ips"].values() if mine(f)), key=lambda f: f["floating_ip_address"]
    )
    used_nets = {p["network_id"] for p in ports} | {f["floating_network_id"] for f in fips}
    networks = sorted(
        (
            dict(n)
            for n in state["networks"].values()
            if instance_id is None or n.get("instance_id") == instance_id or n["id"] in used_nets
        ),
        key=lambda n: (n["kind"], n["name"], n["id"]),
    )
    servers = [
        _server_view(state, s)
        for s in sorted(state["servers"].values(), key=lambda s: (s["instance_id"], s["name"], s["created_at"]))
        if mine(s)
    ]
    volumes = sorted(
        ({k: v for k, v in vol.items() if k != "op_id"} for vol in state["volumes"].values() if mine(vol)),
        key=lambda v: (v["name"], v["id"]),
    )
    deployments = [
        _deployment_view(state, dep, include_extras)
        for dep in sorted(state["deployments"].values(), key=lambda d: d["created_at"])
        if instance_id is None or dep["instance_id"] == instance_id
    ]
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


def _server_view(state: dict[str, Any], s: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": s["id"],
        "name": s["name"],
        "status": s["status"],
        "task_state": s.get("task_state"),
        "image": s["image"],
        "flavor": s["flavor"],
        "addresses": server_addresses(state, s),
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


def _deployment_view(state: dict[str, Any], dep: dict[str, Any], include_extras: bool) -> dict[str, Any]:
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
        "reservations": sorted((dep.get("reservations") or {}).values(), key=lambda r: r["purpose"]),
    }
    if include_extras:
        entry["extras"] = copy.deepcopy(state["extras"].get(dep["instance_id"], {}))
    return entry


def server_addresses(state: dict[str, Any], server: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
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
