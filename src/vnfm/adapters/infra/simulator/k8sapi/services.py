"""Services: a ClusterIP from the cluster's service CIDR and NodePorts from 30000-32767, unique in
the cluster. A port given in the manifest is kept (refused when taken); an unspecified NodePort is
chosen from the Service's uid (so a re-created Service usually gets another one, as Kubernetes'
random allocation does), and an update that leaves a port out keeps the one allocated."""

from __future__ import annotations

import hashlib
import ipaddress
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.errors import invalid
from vnfm.adapters.infra.simulator.k8sapi.state import api_state

NODE_PORT_MIN, NODE_PORT_MAX = 30000, 32767
TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")


def _net(st: dict[str, Any]) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(str((st.get("cluster") or {}).get("service_cidr") or "10.96.0.0/12"),
                                    strict=False)
    except ValueError:
        return ipaddress.ip_network("10.96.0.0/12")


def _cluster_ip(st: dict[str, Any], key: str, want: str | None, name: str) -> str:
    ips: dict[str, str] = api_state(st)["cluster_ips"]
    net = _net(st)
    if want:
        try:
            ok = ipaddress.ip_address(want) in net
        except ValueError:
            ok = False
        if not ok:
            raise invalid("Service", name, f"spec.clusterIP: Invalid value: \"{want}\": not in the service CIDR {net}")
        if ips.get(want, key) != key:
            raise invalid("Service", name, f"spec.clusterIP: Invalid value: \"{want}\": provided IP is already "
                                           "allocated")
        ips[want] = key
        return want
    for i in range(1, min(net.num_addresses - 1, 65536)):
        ip = str(net.network_address + i)
        if ip not in ips:
            ips[ip] = key
            return ip
    raise invalid("Service", name, f"spec.clusterIP: no free address left in {net}")


def _node_port(st: dict[str, Any], key: str, uid: str, index: int) -> int:
    ports: dict[str, str] = api_state(st)["node_ports"]
    span = NODE_PORT_MAX - NODE_PORT_MIN + 1
    start = int(hashlib.sha256(f"{uid}/{index}".encode()).hexdigest(), 16) % span
    for i in range(span):
        port = NODE_PORT_MIN + (start + i) % span
        if str(port) not in ports:
            ports[str(port)] = key
            return port
    raise invalid("Service", key, "spec.ports: no free NodePort left in 30000-32767")


def allocate(st: dict[str, Any], key: str, svc: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Fill in spec.clusterIP(s) and the NodePorts of `svc` (created, or replacing `old`)."""
    spec = svc.setdefault("spec", {})
    name = svc["metadata"]["name"]
    stype = spec.setdefault("type", "ClusterIP")
    if stype not in TYPES:
        raise invalid("Service", name, f"spec.type: Unsupported value: \"{stype}\": supported values: "
                                       + ", ".join(f'"{t}"' for t in TYPES))
    old_spec = (old or {}).get("spec") or {}
    release(st, key, keep_ip=old_spec.get("clusterIP"))
    if stype != "ExternalName" and spec.get("clusterIP") != "None":
        spec["clusterIP"] = _cluster_ip(st, key, spec.get("clusterIP") or old_spec.get("clusterIP"), name)
        spec["clusterIPs"] = [spec["clusterIP"]]
    ports: dict[str, str] = api_state(st)["node_ports"]
    old_ports = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort") for p in old_spec.get("ports") or []}
    for i, p in enumerate(spec.get("ports") or []):
        p.setdefault("protocol", "TCP")
        p.setdefault("targetPort", p.get("port"))
        if stype not in ("NodePort", "LoadBalancer"):
            p.pop("nodePort", None)
            continue
        want = p.get("nodePort") or old_ports.get((p.get("port"), p["protocol"]))
        if want:
            if not isinstance(want, int) or not NODE_PORT_MIN <= want <= NODE_PORT_MAX:
                raise invalid("Service", name, f"spec.ports[{i}].nodePort: Invalid value: {want}: provided port is "
                                               f"not in the valid range. The range of valid ports is "
                                               f"{NODE_PORT_MIN}-{NODE_PORT_MAX}")
            if ports.get(str(want), key) != key:
                raise invalid("Service", name, f"spec.ports[{i}].nodePort: Invalid value: {want}: provided port "
                                               "is already allocated")
            ports[str(want)] = key
            p["nodePort"] = want
        else:
            p["nodePort"] = _node_port(st, key, svc["metadata"]["uid"], i)
    spec.setdefault("sessionAffinity", "None")
    svc.setdefault("status", {"loadBalancer": {}})


def release(st: dict[str, Any], key: str, keep_ip: str | None = None) -> None:
    """Free what the Service `key` holds (its ClusterIP too, unless it is `keep_ip`)."""
    a = api_state(st)
    for port in [p for p, k in a["node_ports"].items() if k == key]:
        del a["node_ports"][port]
    for ip in [ip for ip, k in a["cluster_ips"].items() if k == key and ip != keep_ip]:
        del a["cluster_ips"][ip]
