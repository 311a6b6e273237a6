"""How the CLI shows each kind of resource to people: the table columns per resource and the
renderers of the composite views (a VNF instance with its VNFCs, an operation occurrence with its
error, the simulated cloud and the Kubernetes twin's cluster). The building blocks (tables, field
lists, masking) are in output.py."""

from __future__ import annotations

import json
from typing import Any

from vnfm.entrypoints.cli.output import Column, first_of, generic_columns, key, render_fields, render_table
from vnfm.entrypoints.cli.wait import describe_error

# --------------------------------------------------------------------------------------------
# packages, operation occurrences, subscriptions, VIMs

PACKAGE_COLUMNS: list[Column] = [
    ("ID", key("id")),
    ("PRODUCT", key("vnfProductName")),
    ("VERSION", key("vnfSoftwareVersion")),
    ("VNFD ID", key("vnfdId")),
    ("ONBOARDING", key("onboardingState")),
    ("OPERATIONAL", key("operationalState")),
    ("USAGE", key("usageState")),
]

OP_COLUMNS: list[Column] = [
    ("ID", key("id")),
    ("OPERATION", key("operation")),
    ("STATE", key("operationState")),
    ("VNF INSTANCE", key("vnfInstanceId")),
    ("STARTED", key("startTime")),
    ("STATE ENTERED", key("stateEnteredTime")),
]

SUB_COLUMNS: list[Column] = [
    ("ID", key("id")),
    ("CALLBACK", key("callbackUri")),
    ("FILTER", key("filter")),
]

VIM_COLUMNS: list[Column] = [
    ("ID", first_of("id", "vimId")),
    ("NAME", first_of("name", "vimName")),
    ("TYPE", key("vimType")),
    ("DEFAULT", first_of("isDefault", "default")),
    (
        "ENDPOINT",
        lambda r: (r.get("interfaceInfo") or {}).get("endpoint") or r.get("authUrl") or r.get("endpoint"),
    ),
]


_PACKAGE_LISTS = ("softwareImages", "additionalArtifacts")


def render_package(pkg: dict[str, Any], *, long: bool = False) -> str:
    """A package's fields; its software images and artifacts (each with a checksum: ~150 lines for
    the seeds' packages) as counts unless `long`."""
    if long:
        return render_fields(pkg)
    fields: list[tuple[str, Any]] = []
    for k, v in pkg.items():
        if k == "_links":
            continue
        if k in _PACKAGE_LISTS and isinstance(v, list):
            names = [str(i.get("name") or i.get("artifactPath") or i.get("id")) for i in v if isinstance(i, dict)]
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            v = f"{len(v)}{': ' + shown if shown else ''}  (--long for all, with checksums)"
        elif k == "checksum" and isinstance(v, dict):
            v = f"{v.get('algorithm', '')}:{str(v.get('hash', ''))[:16]}..."
        fields.append((k, v))
    return render_fields(pkg, fields)


def op_warnings(op: dict[str, Any]) -> list[str]:
    """The occurrence's warnings (request keys accepted but not acted on, ...), from its log."""
    if op.get("vnfmWarnings"):
        return [str(w) for w in op["vnfmWarnings"]]
    lines = [str(e.get("message") or "") for e in op.get("vnfmProgress") or [] if isinstance(e, dict)]
    return [m.removeprefix("warning: ") for m in lines if m.startswith("warning: ")]


def render_alarms(alarms: list[dict[str, Any]]) -> str:
    """Open alarms (SOL003 Alarm documents), one line each."""
    lines = [f"  - {a.get('perceivedSeverity')} VNFC {', '.join(a.get('vnfcInstanceIds') or [])}: "
             f"{a.get('probableCause')} since {a.get('alarmRaisedTime')} ({a.get('ackState')}, alarm {a.get('id')})"
             for a in alarms]
    return "Open alarms:\n" + "\n".join(lines)


def render_backups(b: dict[str, Any]) -> str:
    """One line: the newest etcd backup (age, size) and its restore drill, or the latest failure."""
    ok, drill, last = b.get("lastBackup"), b.get("lastDrill"), b.get("lastAttempt") or {}
    if ok:
        text = (f"etcd backup: newest {ok['at']} ({_age(ok['ageSeconds'])} old, {ok['sizeBytes']} bytes, "
                f"{ok['keys']} keys)")
        text += (f"; restore drill {drill['result']} at {drill['at']}" + (f" ({drill['reason']})" if drill.get("reason")
                 else f" ({drill['keys']} keys)")) if drill else "; no restore drill yet"
    else:
        text = "etcd backup: none yet"
    if last.get("result") == "FAILED":
        text += f"; latest attempt FAILED at {last.get('at')}: {last.get('reason')}"
    return text + (f"; next {b['nextAt']}" if b.get("nextAt") else "")


def _age(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 86400}d{s % 86400 // 3600}h" if s >= 86400 else f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 \
        else f"{s // 60}m{s % 60:02d}s"


def render_warnings(warnings: list[str]) -> str:
    return "Warnings:\n" + "\n".join(f"  - {w}" for w in warnings) if warnings else ""


def render_op(op: dict[str, Any]) -> str:
    """An operation occurrence's fields, its warnings, then its error (if any) as one line."""
    text = render_fields(op)
    if op_warnings(op):
        text += "\n\n" + render_warnings(op_warnings(op))
    err = describe_error(op)
    return f"{text}\n\nError: {err}" if err else text


# --------------------------------------------------------------------------------------------
# VNF instances


def _vnfcs(inst: dict[str, Any]) -> list[dict[str, Any]]:
    info = inst.get("instantiatedVnfInfo") or {}
    return list(info.get("vnfcResourceInfo") or [])


def vnfc_addresses(vnfc: dict[str, Any]) -> str:
    """The VNFC's addresses per connection point: 'cpdId=addr1/addr2 cpdId2=...'."""
    out: list[str] = []
    for cp in vnfc.get("vnfcCpInfo") or []:
        addrs: list[str] = []
        for proto in cp.get("cpProtocolInfo") or []:
            for ip in (proto.get("ipOverEthernet") or {}).get("ipAddresses") or []:
                addrs.extend(str(a) for a in ip.get("addresses") or [])
        if addrs:
            out.append(f"{cp.get('cpdId')}={'/'.join(addrs)}")
    return " ".join(out)


VNF_COLUMNS: list[Column] = [
    ("ID", key("id")),
    ("NAME", key("vnfInstanceName")),
    ("INSTANTIATION", key("instantiationState")),
    ("VNF STATE", key("instantiatedVnfInfo", "vnfState")),
    ("FLAVOUR", key("instantiatedVnfInfo", "flavourId")),
    ("VNFCS", lambda r: len(_vnfcs(r)) if r.get("instantiatedVnfInfo") else None),
    ("VNFD ID", key("vnfdId")),
]

VNFC_COLUMNS: list[Column] = [
    ("VNFC ID", key("id")),
    ("VDU", key("vduId")),
    ("SERVER", key("computeResource", "resourceId")),
    ("ADDRESSES", vnfc_addresses),
    ("VOLUMES", lambda r: len(r.get("storageResourceIds") or []) or None),
]

VIM_CONNECTION_COLUMNS: list[Column] = [("ID", key("id")), ("VIM ID", key("vimId")), ("TYPE", key("vimType"))]

VOLUME_COLUMNS: list[Column] = [
    ("ID", key("id")),
    ("DESCRIPTOR", key("virtualStorageDescId")),
    ("VOLUME", key("storageResource", "resourceId")),
]


def render_vnf(inst: dict[str, Any]) -> str:
    """A VNF instance: its fields, VIM connections, and when instantiated its flavour, state,
    scale levels, VNFCs (servers, addresses) and volumes."""
    skip = {"instantiatedVnfInfo", "_links", "vimConnectionInfo"}
    parts = [render_fields(inst, [(k, v) for k, v in inst.items() if k not in skip])]
    vims = inst.get("vimConnectionInfo") or []
    if vims:
        parts.append("\nVIM connections:\n" + render_table(vims, VIM_CONNECTION_COLUMNS))
    info = inst.get("instantiatedVnfInfo")
    if info:
        scale = ", ".join(f"{s.get('aspectId')}={s.get('scaleLevel')}" for s in info.get("scaleStatus") or [])
        fields = [
            ("flavourId", info.get("flavourId")),
            ("vnfState", info.get("vnfState")),
            ("scaleStatus", scale),
        ]
        if info.get("additionalParams"):
            fields.append(("additionalParams", info["additionalParams"]))
        parts.append("\nInstantiated VNF info:\n" + render_fields(info, fields))
        parts.append("\nVNFCs:\n" + render_table(_vnfcs(inst), VNFC_COLUMNS))
        storages = info.get("virtualStorageResourceInfo") or []
        if storages:
            parts.append("\nVolumes:\n" + render_table(storages, VOLUME_COLUMNS))
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# the simulated cloud and the Kubernetes twin's cluster


def render_sim(value: Any, title: str = "", depth: int = 0) -> str:
    """Any JSON as sections: scalars as fields, lists of objects as tables, objects recursed."""
    if isinstance(value, list):
        rows = [r for r in value if isinstance(r, dict)]
        if rows and len(rows) == len(value):
            body = render_table(rows, generic_columns(rows))
        else:
            body = ", ".join(str(v) for v in value) if value else "(none)"
        return f"{title}:\n{body}" if title else body
    if not isinstance(value, dict):
        return f"{title}: {value}" if title else str(value)
    scalars = [(k, v) for k, v in value.items() if not isinstance(v, dict | list)]
    parts: list[str] = []
    if title:
        parts.append(f"{title}:")
    if scalars:
        parts.append(render_fields(value, scalars))
    for k, v in value.items():
        if isinstance(v, dict | list):
            sub = f"{title}.{k}" if title else k
            if depth >= 3:
                parts.append(f"{sub}: {json.dumps(v, separators=(',', ':'))}")
            else:
                parts.append(render_sim(v, sub, depth + 1))
    return "\n\n".join(p for p in parts if p)


NODE_COLUMNS: list[Column] = [
    ("NODE", key("name")),
    ("ROLE", key("role")),
    ("READY", lambda r: "Ready" if r.get("ready") else "NotReady"),
    ("CORDONED", key("cordoned")),
    ("ADDRESSES", key("addresses")),
]
ETCD_COLUMNS: list[Column] = [
    ("MEMBER", key("name")),
    ("PEER URL", key("peer_url")),
    ("HEALTHY", key("healthy")),
]
HAPROXY_COLUMNS: list[Column] = [
    ("MASTER", key("master")),
    ("ADDRESS", key("address")),
    ("PORT", key("frontend_port")),
    ("#", key("backend_count")),
    ("BACKENDS", lambda r: [f"{b.get('name')}={b.get('address')}:{b.get('port')}" for b in r.get("backends") or []]),
]


def render_cluster(k8s: dict[str, Any]) -> str:
    """The Kubernetes twin's cluster: nodes, etcd members, HAProxy backends per master, VIM."""
    nodes = [n for n in k8s.get("nodes") or [] if isinstance(n, dict)]
    etcd = k8s.get("etcd") or {}
    members = [m for m in etcd.get("members") or [] if isinstance(m, dict)]
    lbs = [h for h in k8s.get("haproxy") or [] if isinstance(h, dict)]
    vim = k8s.get("vim")
    ready = sum(1 for n in nodes if n.get("ready"))
    parts = [
        f"Kubernetes cluster (endpoint {k8s.get('endpoint') or '-'}):",
        f"Nodes ({ready}/{len(nodes)} Ready):\n" + render_table(nodes, NODE_COLUMNS),
        f"etcd members ({len(members)}, {'healthy' if etcd.get('healthy') else 'NOT healthy'}):\n"
        + render_table(members, ETCD_COLUMNS),
        "HAProxy backends per master:\n" + render_table(lbs, HAPROXY_COLUMNS, empty="(no HAProxy: single master)"),
    ]
    if isinstance(vim, dict):
        parts.append("Registered VIM:\n" + render_fields(vim))
    else:
        parts.append("Registered VIM: (none)")
    api = k8s.get("api")
    if isinstance(api, dict):
        parts.append("Created through the cluster's API:\n" + render_table(api_rows(api), API_COLUMNS,
                                                                           empty="(nothing)"))
    return "\n\n".join(parts)


API_COLUMNS: list[Column] = [("KIND", key("kind")), ("NAME", key("name")), ("STATE", key("state"))]


def api_rows(api: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per workload, Service and pod the API holds (pods of the cluster's own system excluded)."""
    rows: list[dict[str, Any]] = []
    for plural, kind in (("deployments", "Deployment"), ("statefulsets", "StatefulSet"), ("daemonsets", "DaemonSet")):
        for name, w in (api.get(plural) or {}).items():
            rows.append({"kind": kind, "name": name, "state": f"{w.get('ready')}/{w.get('replicas', '-')} ready"})
    for name, svc in (api.get("services") or {}).items():
        ports = ",".join(str(p) for p in svc.get("node_ports") or [])
        rows.append({"kind": "Service", "name": name, "state": svc.get("type") + (f" {ports}" if ports else "")})
    for name, pod in (api.get("pods") or {}).items():
        rows.append({"kind": "Pod", "name": name, "state": f"on {pod.get('node') or '-'}"})
    return rows


def _vnfc_of_node(node: dict[str, Any], vnfcs: list[dict[str, Any]]) -> str | None:
    """The VNFC whose addresses include one of the node's."""
    addrs = {str(a) for a in node.get("addresses") or []}
    for v in vnfcs:
        mine = {a for part in vnfc_addresses(v).split() for a in part.split("=", 1)[-1].split("/")}
        if addrs & mine:
            return str(v.get("id"))
    return None


def render_cluster_nodes(k8s: dict[str, Any], inst: dict[str, Any]) -> str:
    """`vnf show`: the cluster's nodes, their state and the VNFC each runs on."""
    vnfcs = _vnfcs(inst)
    nodes = [dict(n, vnfc=_vnfc_of_node(n, vnfcs)) for n in k8s.get("nodes") or [] if isinstance(n, dict)]
    ready = sum(1 for n in nodes if n.get("ready"))
    cols = [*NODE_COLUMNS[:4], ("VNFC", key("vnfc"))]
    return f"Kubernetes nodes ({ready}/{len(nodes)} Ready):\n" + render_table(nodes, cols)


def render_sim_state(value: Any) -> str:
    """`vnfm sim state`: the cloud's sections, then the cluster when the twin holds one."""
    if isinstance(value, dict) and isinstance(value.get("kubernetes"), dict):
        rest = {k: v for k, v in value.items() if k != "kubernetes"}
        return render_sim(rest) + "\n\n" + render_cluster(value["kubernetes"])
    return render_sim(value)
