"""`additionalParams.k8s_cluster_installation_param`, parsed and validated.

The keys are the seeds' (the compatibility contract). Extensions, all optional:
`master_node.ssh_private_key` / `worker_node.ssh_private_key` (instead of a password),
`master_node.cluster_vip` (the keepalived VIP when `cluster_cp_name` is a CP of the masters),
`kubernetes_version`, `node_ready_timeout`, `drain_timeout` (seconds).

Every error is a BadRequest naming the full key path and why. A CIDR whose address ends in .0 but
has host bits under its prefix (the seeds' own "192.168.3.0/16") is a prefix typo: it is normalised
to its network (192.168.0.0/16) and a warning is recorded; any other address with host bits set is
rejected ("did you mean ...?").
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from vnfm.domain.errors import BadRequest

ROOT = "additionalParams.k8s_cluster_installation_param"
KEY = "k8s_cluster_installation_param"
DEFAULT_K8S_VERSION = "1.30.4"
_VERSION = re.compile(r"^1\.[0-9]{1,2}\.[0-9]{1,3}$")
_USER = re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$", re.IGNORECASE)
_CP_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,255}$")


def _bad(path: str, why: str) -> BadRequest:
    return BadRequest(f"{path}: {why}")


@dataclass(frozen=True)
class NodeParams:
    aspect_id: str | None
    ssh_cp_name: str
    nic_cp_name: str
    username: str
    password: str | None = field(default=None, repr=False)
    ssh_private_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class MasterParams(NodeParams):
    pod_cidr: str = "192.168.0.0/16"
    cluster_cidr: str = "10.96.0.0/12"
    cluster_cp_name: str = ""
    cluster_vip: str | None = None


@dataclass(frozen=True)
class ProxyParams:
    http_proxy: str | None = field(default=None, repr=False)  # may carry credentials
    https_proxy: str | None = field(default=None, repr=False)
    no_proxy: tuple[str, ...] = ()
    k8s_node_cidr: str | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.http_proxy or self.https_proxy)


@dataclass(frozen=True)
class ClusterParams:
    script_path: str | None
    vim_name: str | None
    master: MasterParams
    worker: NodeParams
    proxy: ProxyParams = field(default_factory=ProxyParams)
    kubernetes_version: str = DEFAULT_K8S_VERSION
    node_ready_timeout: float = 600.0
    drain_timeout: float = 300.0
    warnings: tuple[str, ...] = ()


# ============================================================================= field helpers
def _obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(path, f"must be an object, got {type(value).__name__}")
    return value


def _str(d: dict[str, Any], key: str, path: str, *, required: bool = True) -> str | None:
    if key not in d or d[key] is None:
        if required:
            raise _bad(f"{path}.{key}", "is required")
        return None
    v = d[key]
    if not isinstance(v, str):
        raise _bad(f"{path}.{key}", f"must be a string, got {type(v).__name__}")
    if not v.strip():
        raise _bad(f"{path}.{key}", "must not be empty")
    return v.strip()


def _req(d: dict[str, Any], key: str, path: str) -> str:
    v = _str(d, key, path)
    assert v is not None
    return v


def _cidr(value: str, path: str, warnings: list[str]) -> str:
    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        raise _bad(path, f"{value!r} is not a CIDR (expected e.g. 10.0.0.0/16)") from None
    if "/" not in value:
        raise _bad(path, f"{value!r} has no prefix length (expected e.g. {iface.network})")
    net = iface.network
    if iface.ip == net.network_address:
        return str(net)
    if iface.version == 4 and int(iface.ip) % 256 == 0:
        warnings.append(f"{path}: {value!r} has host bits set; using {net}")
        return str(net)
    raise _bad(path, f"{value!r} has host bits set (did you mean {net}?)")


def _number(d: dict[str, Any], key: str, path: str, default: float) -> float:
    if key not in d or d[key] is None:
        return default
    v = d[key]
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise _bad(f"{path}.{key}", f"{v!r} is not a number of seconds") from None
    if not 0 < f <= 86400:
        raise _bad(f"{path}.{key}", f"{v!r} must be within (0, 86400] seconds")
    return f


def _node(d: dict[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("aspect_id", "ssh_cp_name", "nic_cp_name"):
        v = _str(d, key, path, required=key == "ssh_cp_name")
        if v is not None and not _CP_NAME.match(v):
            raise _bad(f"{path}.{key}", f"{v!r} contains characters not allowed in a VNFD id")
        out[key] = v
    out["nic_cp_name"] = out["nic_cp_name"] or out["ssh_cp_name"]
    user = _req(d, "username", path)
    if not _USER.match(user):
        raise _bad(f"{path}.username", f"{user!r} is not a valid login name")
    out["username"] = user
    pw = d.get("password")
    if pw is not None and (not isinstance(pw, str) or not pw):
        raise _bad(f"{path}.password", "must be a non-empty string")
    key_text = d.get("ssh_private_key", d.get("private_key"))
    if key_text is not None and (not isinstance(key_text, str) or "PRIVATE KEY" not in key_text):
        raise _bad(f"{path}.ssh_private_key", "must be an OpenSSH or PEM private key text")
    if pw is None and key_text is None:
        raise _bad(path, "give 'password' or 'ssh_private_key' for SSH access")
    out["password"] = pw
    out["ssh_private_key"] = key_text
    return out


def _proxy_url(d: dict[str, Any], key: str, path: str) -> str | None:
    v = _str(d, key, path, required=False)
    if v is None:
        return None
    parts = urlsplit(v)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        # never echo the value: it may hold credentials
        raise _bad(f"{path}.{key}", "must be an http:// or https:// URL with a host")
    return v


# ============================================================================= entry points
def parse(additional_params: dict[str, Any] | None) -> ClusterParams:
    """Parse (and normalise) the cluster parameters; BadRequest naming the key path otherwise."""
    if not isinstance(additional_params, dict) or KEY not in additional_params:
        raise _bad(ROOT, "is required by the Kubernetes cluster management driver")
    root = _obj(additional_params[KEY], ROOT)
    warnings: list[str] = []
    vim_name = _str(root, "vim_name", ROOT, required=False)
    script_path = _str(root, "script_path", ROOT, required=False)
    mpath, wpath = f"{ROOT}.master_node", f"{ROOT}.worker_node"
    if "master_node" not in root:
        raise _bad(mpath, "is required")
    if "worker_node" not in root:
        raise _bad(wpath, "is required")
    m = _obj(root["master_node"], mpath)
    w = _obj(root["worker_node"], wpath)
    mn = _node(m, mpath)
    wn = _node(w, wpath)
    pod = _cidr(_str(m, "pod_cidr", mpath, required=False) or "192.168.0.0/16", f"{mpath}.pod_cidr", warnings)
    svc = _cidr(_str(m, "cluster_cidr", mpath, required=False) or "10.96.0.0/12", f"{mpath}.cluster_cidr",
                warnings)
    if ipaddress.ip_network(pod).overlaps(ipaddress.ip_network(svc)):
        raise _bad(f"{mpath}.cluster_cidr", f"{svc} overlaps pod_cidr {pod}: the service and pod "
                                            "networks must be disjoint")
    if ipaddress.ip_network(svc).num_addresses < 16:
        raise _bad(f"{mpath}.cluster_cidr", f"{svc} is too small for the cluster's services")
    cluster_cp = _str(m, "cluster_cp_name", mpath, required=False) or mn["nic_cp_name"]
    vip = _str(m, "cluster_vip", mpath, required=False)
    if vip is not None:
        try:
            ipaddress.ip_address(vip)
        except ValueError:
            raise _bad(f"{mpath}.cluster_vip", f"{vip!r} is not an IP address") from None
    if mn["aspect_id"] is not None and mn["aspect_id"] == wn["aspect_id"]:
        raise _bad(f"{wpath}.aspect_id", f"'{wn['aspect_id']}' is also master_node.aspect_id; masters and "
                                         "workers must scale through different aspects")
    master = MasterParams(**mn, pod_cidr=pod, cluster_cidr=svc, cluster_cp_name=cluster_cp, cluster_vip=vip)
    worker = NodeParams(**wn)

    proxy = ProxyParams()
    if root.get("proxy") is not None:
        ppath = f"{ROOT}.proxy"
        p = _obj(root["proxy"], ppath)
        no_proxy_raw = _str(p, "no_proxy", ppath, required=False)
        no_proxy = tuple(x.strip() for x in (no_proxy_raw or "").split(",") if x.strip())
        node_cidr_raw = _str(p, "k8s_node_cidr", ppath, required=False)
        node_cidr = _cidr(node_cidr_raw, f"{ppath}.k8s_node_cidr", warnings) if node_cidr_raw else None
        proxy = ProxyParams(_proxy_url(p, "http_proxy", ppath), _proxy_url(p, "https_proxy", ppath),
                            no_proxy, node_cidr)

    version = _str(root, "kubernetes_version", ROOT, required=False) or DEFAULT_K8S_VERSION
    if not _VERSION.match(version):
        raise _bad(f"{ROOT}.kubernetes_version", f"{version!r} is not a Kubernetes version like 1.30.4")
    return ClusterParams(
        script_path=script_path,
        vim_name=vim_name,
        master=master,
        worker=worker,
        proxy=proxy,
        kubernetes_version=version,
        node_ready_timeout=_number(root, "node_ready_timeout", ROOT, 600.0),
        drain_timeout=_number(root, "drain_timeout", ROOT, 300.0),
        warnings=tuple(warnings),
    )


def override(base: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """A scale/heal request's additionalParams over the stored ones: like the engine, one level deep
    per key, and one level deeper inside k8s_cluster_installation_param (master_node, worker_node,
    proxy), so a request may give just e.g. a new worker password."""
    out = dict(base)
    for k, v in (extra or {}).items():
        if k == KEY and isinstance(v, dict) and isinstance(out.get(k), dict):
            merged = dict(out[k])
            for sk, sv in v.items():
                if isinstance(sv, dict) and isinstance(merged.get(sk), dict):
                    merged[sk] = {**merged[sk], **sv}
                else:
                    merged[sk] = sv
            out[k] = merged
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    return out
