"""Invariants of the fault-injection campaign (bench/chaos.py), checked against the simulated cloud.

After every round, with no operation in flight:
- every occurrence is resolved (none STARTING / PROCESSING / ROLLING_BACK / FAILED_TEMP);
- the cloud holds exactly what the VNFM records: one deployment per INSTANTIATED instance with the
  same VNFCs and servers, and no server, port, floating IP or volume that no VNFC refers to;
- each cluster's nodes are exactly its VNFCs (no duplicate or leftover join), all Ready and
  schedulable, every kubelet at the Kubernetes version the instance records (after a change_vnfpkg,
  its rollback or retry), and etcd has one member per master;
- one Kubernetes VIM per instantiated cluster.
"""

from __future__ import annotations

from typing import Any

import httpx

from vnfm.adapters.mgmt.cluster.params import DEFAULT_K8S_VERSION

LCM = "/vnflcm/v1"
UNRESOLVED = {"STARTING", "PROCESSING", "ROLLING_BACK", "FAILED_TEMP"}


def check(c: httpx.Client) -> list[str]:
    """The violated invariants (empty: all hold)."""
    problems: list[str] = []
    ops = c.get(f"{LCM}/vnf_lcm_op_occs").json()
    for o in ops:
        if o["operationState"] in UNRESOLVED:
            problems.append(f"occurrence {o['id'][:8]} ({o['operation']}) left {o['operationState']}")
    insts = {i["id"]: i for i in c.get(f"{LCM}/vnf_instances", params={"all_fields": ""}).json()}
    sim = c.get("/sim/v1/state").json()
    problems += _cloud_matches(insts, sim)
    live = [i for i in insts.values() if i["instantiationState"] == "INSTANTIATED"]
    for inst in live:
        problems += _cluster_matches(c, inst)
    vims = [v for v in c.get("/vnfm/v1/vims").json() if "kub" in str(v.get("vimType", "")).lower()]
    if len(vims) != len(live):
        problems.append(f"{len(vims)} Kubernetes VIM(s) registered for {len(live)} instantiated cluster(s)")
    return problems


def _vnfcs(inst: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["id"]: v for v in (inst.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo", [])}


def _cloud_matches(insts: dict[str, dict[str, Any]], sim: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    deps = {d["instance_id"]: d for d in sim["deployments"]}
    live = {i for i, x in insts.items() if x["instantiationState"] == "INSTANTIATED"}
    for iid in sorted(set(deps) - live):
        problems.append(f"cloud keeps a deployment of {iid[:8]}, which is not instantiated")
    for iid in sorted(live - set(deps)):
        problems.append(f"instance {iid[:8]} is INSTANTIATED but the cloud has no deployment")
    servers, ports, volumes = set(), set(), set()
    for iid, dep in deps.items():
        recorded = _vnfcs(insts[iid]) if iid in insts else {}
        cloud = {v["id"]: v for v in dep["vnfcs"]}
        if iid in live and set(recorded) != set(cloud):
            problems.append(f"instance {iid[:8]}: VNFCs recorded {sorted(x[:8] for x in recorded)} "
                            f"but the cloud has {sorted(x[:8] for x in cloud)}")
        for vid, v in cloud.items():
            rec = recorded.get(vid)
            if rec is not None and rec["computeResource"]["resourceId"] != v["server_id"]:
                problems.append(f"VNFC {v['name']} of {iid[:8]}: recorded server differs from the cloud's")
            servers.add(v["server_id"])
            ports |= set(v["ports"].values())
            volumes |= set(v["volumes"].values())
    problems += [f"orphan server {s['name']} ({s['id'][:8]})" for s in sim["servers"] if s["id"] not in servers]
    problems += [f"orphan port {p['name']} ({p['id'][:8]})" for p in sim["ports"]
                 if p["id"] not in ports and p.get("vnfc_id")]
    problems += [f"orphan floating IP {f['floating_ip_address']}" for f in sim["floating_ips"]
                 if f.get("port_id") not in ports]
    problems += [f"orphan volume {v['name']} ({v['id'][:8]})" for v in sim["volumes"] if v["id"] not in volumes]
    return problems


def _k8s_version(inst: dict[str, Any]) -> str:
    """The Kubernetes version the instance records (its stored cluster parameters)."""
    stored = ((inst.get("instantiatedVnfInfo") or {}).get("additionalParams") or {})
    return str((stored.get("k8s_cluster_installation_param") or {}).get("kubernetes_version") or DEFAULT_K8S_VERSION)


def _cluster_matches(c: httpx.Client, inst: dict[str, Any]) -> list[str]:
    r = c.get(f"/sim/v1/state/{inst['id']}")
    if r.status_code != 200:
        return [f"instance {inst['id'][:8]}: no simulated state ({r.status_code})"]
    k8s = r.json().get("kubernetes") or {}
    vnfcs = _vnfcs(inst).values()
    want = {v["vduId"]: [] for v in vnfcs}
    names = {}
    for v in vnfcs:
        name = str((v.get("metadata") or {}).get("name") or v.get("vnfcName") or "")
        names[v["id"]] = name
        want[v["vduId"]].append(name)
    nodes = {n["name"]: n for n in k8s.get("nodes", [])}
    expected = {n.lower() for vdu, ns in want.items() if vdu in ("masterNode", "workerNode") for n in ns if n}
    problems: list[str] = []
    tag = f"cluster of {inst['id'][:8]}"
    if expected and set(nodes) != expected:
        problems.append(f"{tag}: nodes {sorted(nodes)} but VNFCs {sorted(expected)}")
    for n in nodes.values():
        if not n["ready"] or n["cordoned"]:
            problems.append(f"{tag}: node {n['name']} ready={n['ready']} cordoned={n['cordoned']}")
    want_version = _k8s_version(inst)
    off = sorted(n["name"] for n in nodes.values() if n.get("version") and n["version"] != want_version)
    if want_version and off:
        problems.append(f"{tag}: node(s) {off} not at the instance's Kubernetes {want_version}")
    masters = {n for n in nodes if nodes[n]["role"] == "master"}
    members = {m["name"] for m in (k8s.get("etcd") or {}).get("members", [])}
    if k8s.get("etcd") and members != masters:
        problems.append(f"{tag}: etcd members {sorted(members)} but masters {sorted(masters)}")
    return problems
