"""What the simulated cloud shows of a VNF's node-side state (`vnfm sim state`, GET /sim/v1/state/{id}):
readable summaries of the twin, with nothing secret (token and key hashes only)."""

from __future__ import annotations

from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.summary import api_summary
from vnfm.adapters.infra.simulator.twin.base import KEY, empty


def view(extras: dict[str, Any]) -> dict[str, Any]:
    """A readable summary of the twin (for the CLI, the simulator API and tests)."""
    st = extras.get(KEY) or empty()
    hosts = st.get("hosts", {})
    names = {n["server_id"]: n["name"] for n in st.get("nodes", {}).values()}
    return {
        "endpoint": st.get("cluster", {}).get("endpoint"),
        "nodes": {n: {"role": v["role"], "ready": v["ready"], "cordoned": v["cordoned"],
                      "addresses": v["addresses"], "labels": v["labels"], "version": v.get("version")}
                  for n, v in sorted(st.get("nodes", {}).items())},
        "etcd_members": sorted(st.get("etcd", {}).get("members", {}).values(), key=lambda m: m["name"]),
        "haproxy": {h["haproxy"]["address"]: [b[0] for b in h["haproxy"]["backends"]]
                    for h in hosts.values() if "haproxy" in h},
        "pods": st.get("pods", {}),
        "vim": st.get("vim"),
        "registries": {names.get(sid, sid): {"registries": h["registries"], "containerd": h.get("containerd")}
                       for sid, h in sorted(hosts.items()) if "registries" in h and sid in names},
        "storage": {sid: {"mounts": h.get("mounts", {}), "fstab": h.get("fstab", {}), "nfs": h.get("nfs")}
                    for sid, h in sorted(hosts.items()) if "mounts" in h or "nfs" in h},
        "nfs_clients": sorted(names[sid] for sid, h in hosts.items() if h.get("nfs_client") and sid in names),
        "volumes": st.get("volumes", {}),
        "pvs": st.get("pvs", {}),
    }


def kubernetes_view(extras: dict[str, Any], live_servers: set[str] | None = None) -> dict[str, Any] | None:
    """The Kubernetes twin's cluster (if the instance has one), for operators: nodes with readiness,
    etcd members and their health, each master's HAProxy backends, the registered VIM. Nothing
    secret is in the twin's state (token and key hashes only) and only listed keys are copied.
    `live_servers`: ids of the instance's servers; host state the twin still keeps for servers that
    are gone (a healed VM's predecessor) is left out."""
    st = extras.get(KEY)
    if not isinstance(st, dict) or not (st.get("nodes") or st.get("cluster") or st.get("vim")):
        return None
    v = view(extras)
    raw_nodes: dict[str, Any] = st.get("nodes") or {}
    by_server = {n.get("server_id"): name for name, n in raw_nodes.items()}
    nodes = [{"name": name, "role": n["role"], "ready": bool(n["ready"]), "cordoned": bool(n["cordoned"]),
              "addresses": list(n.get("addresses") or []), "version": n.get("version")}
             for name, n in v["nodes"].items()]
    members = [{"name": m.get("name"), "peer_url": m.get("peer_url"), "healthy": bool(m.get("healthy"))}
               for m in v["etcd_members"]]
    haproxy = []
    for sid, h in sorted((st.get("hosts") or {}).items()):
        lb = h.get("haproxy") if isinstance(h, dict) else None
        if not lb or (live_servers is not None and sid not in live_servers):
            continue
        backends = [{"name": b[0], "address": b[1], "port": b[2]} for b in lb.get("backends") or []]
        haproxy.append({"master": by_server.get(sid), "address": lb.get("address"),
                        "frontend_port": lb.get("frontend_port"), "backend_count": len(backends),
                        "backends": backends})
    haproxy.sort(key=lambda h: (h["master"] is None, h["master"] or "", h["address"] or ""))
    vim = v.get("vim")
    vim_out: dict[str, Any] | None = None
    if isinstance(vim, dict):
        vim_out = {k: vim.get(k) for k in ("id", "name", "endpoint", "ca_sha256")}
        # a short digest of the ServiceAccount token's hash (a rotation is visible); never the token
        hashes = sorted(str(sa.get("token_sha256") or "")
                        for sa in (st.get("service_accounts") or {}).values() if isinstance(sa, dict))
        vim_out["auth_digest"] = ",".join(h[:12] for h in hashes if h) or None
    return {
        "endpoint": v.get("endpoint"),
        "nodes": nodes,
        "ready_nodes": sum(1 for n in nodes if n["ready"]),
        "etcd": {"member_count": len(members), "healthy": bool(members) and all(m["healthy"] for m in members),
                 "members": members},
        "haproxy": haproxy,
        "vim": vim_out,
        "api": api_summary(st),  # what was created through the cluster's Kubernetes API (CNFs)
    }


def external_lb_view(extras: dict[str, Any], live_servers: set[str] | None = None) -> dict[str, Any] | None:
    """The instance's external load balancer (LbFrontends): its address, every owner's frontends as
    {"<port>": ["ip:port", ...]}, the server pools, which owners have a part, the kubeconfig's server."""
    st = extras.get(KEY)
    if not isinstance(st, dict):
        return None
    for sid, h in sorted((st.get("hosts") or {}).items()):
        lb = h.get("lb") if isinstance(h, dict) else None
        if not lb or (live_servers is not None and sid not in live_servers):
            continue
        owners = lb.get("owners") or {}
        pools = {p["name"]: [s[1] for s in p["servers"]] for part in owners.values() for p in part.get("pools") or []}
        by_ref = {(o, p["name"]): [s[1] for s in p["servers"]] for o, part in owners.items()
                  for p in part.get("pools") or []}
        frontends = {str(f["port"]): ([f"{a}:{f['port']}" for a in by_ref.get(tuple(f["pool"]), [])] if f.get("pool")
                                      else [f"{b[1]}:{b[2]}" for b in f["backends"]])
                     for part in owners.values() for f in part.get("frontends") or []}
        kubeconfig = h.get("kubeconfig") or {}
        return {"address": lb.get("address"), "frontends": dict(sorted(frontends.items(), key=lambda kv: int(kv[0]))),
                "pools": pools, "owners": sorted(owners), "reloads": lb.get("reloads", 0),
                "kubeconfig_server": kubeconfig.get("server")}
    return None


def kubespray_view(extras: dict[str, Any]) -> dict[str, Any] | None:
    """The instance's Kubespray inventory (groups -> hosts), its playbook runs, oldest first, each
    worker's localhost API proxy (the control planes it lists) and, while an etcd change is half
    done, which nodes' etcd configuration is stale and what fixes it."""
    st = extras.get(KEY)
    ks = st.get("kubespray") if isinstance(st, dict) else None
    if not isinstance(ks, dict):
        return None
    return {"inventory": {g: list(h) for g, h in (ks.get("inventory") or {}).items()},
            "runs": [{"playbook": r.get("playbook"), "limit": r.get("limit"), "extra_vars": r.get("extra_vars") or {}}
                     for r in ks.get("runs") or []],
            "ansible_server": ks.get("ansible"), "inventory_path": ks.get("path"),
            "api_proxy": dict(ks.get("api_proxy") or {}),
            **({"etcd_stale": ks["etcd_stale"]} if ks.get("etcd_stale") else {})}


def private_registry_view(extras: dict[str, Any], live_servers: set[str] | None = None) -> dict[str, Any] | None:
    """The private-registry VNF's registry (seed 003): where it answers, TLS or not, where its data
    is (the VM's disk or a volume) and the repositories it holds."""
    st = extras.get(KEY)
    if not isinstance(st, dict):
        return None
    for sid, h in sorted((st.get("hosts") or {}).items()):
        reg = h.get("registry") if isinstance(h, dict) else None
        if not reg or (live_servers is not None and sid not in live_servers):
            continue
        vid, data_dir = reg.get("volume_id"), reg.get("data_dir")
        if vid:
            data = ((st.get("volumes") or {}).get(vid) or {}).get("registry_data", {}).get(data_dir) or {}
        else:
            data = (h.get("disk") or {}).get(data_dir) or {}
        repos = data.get("repositories") or {}
        return {"address": reg.get("address"), "port": reg.get("port"), "tls": bool(reg.get("tls")),
                "url": reg.get("url"), "running": bool(reg.get("running")), "image": reg.get("image"),
                "data": {"dir": data_dir, "volume_id": vid} if vid else {"dir": data_dir, "volume_id": None},
                "repositories": {r: list(t) for r, t in sorted(repos.items())},
                "docker_images": sorted((h.get("docker") or {}).get("images") or {})}
    return None


def instance_state(sim: Any, instance_id: str) -> dict[str, Any] | None:
    """The simulated cloud's resources of one VNF instance, with its cluster when it has one (and
    its external load balancer and Kubespray inventory and runs, when it has them)."""
    snap = sim.snapshot(instance_id)
    if not snap:
        return None
    live = {str(srv.get("id")) for srv in snap.get("servers") or []}
    extras = sim.extras(instance_id)
    cluster = kubernetes_view(extras, live)
    if cluster is not None:
        snap["kubernetes"] = cluster
    lb = external_lb_view(extras, live)
    if lb is not None:
        snap["external_lb"] = lb
    ks = kubespray_view(extras)
    if ks is not None:
        snap["kubespray"] = ks
    reg = private_registry_view(extras, live)
    if reg is not None:
        snap["private_registry"] = reg
    return dict(snap)
