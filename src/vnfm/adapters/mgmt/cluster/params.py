"""`additionalParams.k8s_cluster_installation_param`, parsed and validated.

The keys are the seeds' (the compatibility contract). Extensions, all optional:
`master_node.ssh_private_key` / `worker_node.ssh_private_key` (instead of a password),
`master_node.cluster_vip` (the keepalived VIP when `cluster_cp_name` is a CP of the masters),
`kubernetes_version`, `node_ready_timeout`, `drain_timeout` (seconds),
`storage_server.ssh_private_key`, `storage_server.cinder_volume_setup_params[].device` (the block
device, when it cannot be found by the volume id under /dev/disk/by-id).

Seed 003: `private_registry_connection_info` (list of connection_type "0"/"1" (HTTP/HTTPS), server,
username, password, certificate_path, hosts_string). Seed 001: `storage_server` (ssh_cp_name,
username, password, cinder_volume_setup_params, nfs_server_setup_params) and
`pv_registration_params` (pv_manifest_file_path, nfs_server_cp).

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
class RegistryConnection:
    """One private registry the cluster's nodes pull from (seed 003)."""

    path: str  # the key path of this entry, for messages
    https: bool
    server: str  # host or host:port, as the images reference it
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    certificate_path: str | None = None  # a CA file inside the VNF package
    hosts_entry: tuple[str, str] | None = None  # (address, FQDN) for /etc/hosts

    @property
    def host(self) -> str:
        h = self.server.rsplit(":", 1)[0] if re.search(r":[0-9]+$", self.server) else self.server
        return h[1:-1] if h.startswith("[") else h


@dataclass(frozen=True)
class VolumeSetup:
    volume_resource_id: str  # the VNFD's VirtualBlockStorage id (Heat resource name)
    mount_to: str
    device: str | None = None


@dataclass(frozen=True)
class NfsSetup:
    export_dir: str
    export_to: str


@dataclass(frozen=True)
class StorageServerParams:
    ssh_cp_name: str
    username: str
    password: str | None = field(default=None, repr=False)
    ssh_private_key: str | None = field(default=None, repr=False)
    volumes: tuple[VolumeSetup, ...] = ()
    exports: tuple[NfsSetup, ...] = ()


@dataclass(frozen=True)
class PvRegistration:
    path: str  # key path, for messages
    pv_manifest_file_path: str
    nfs_server_cp: str


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
    registries: tuple[RegistryConnection, ...] = ()
    storage_server: StorageServerParams | None = None
    pv_registrations: tuple[PvRegistration, ...] = ()


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
        registries=_registries(root),
        storage_server=_storage_server(root),
        pv_registrations=_pv_registrations(root),
    )


# ============================================================================= seed 003: registries
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                       r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_PKG_PATH = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./@+-]*$")


def _list(root: dict[str, Any], key: str, path: str) -> list[Any]:
    v = root.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise _bad(path, f"must be a list, got {type(v).__name__}")
    return v


def _host(value: str, path: str) -> None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not _HOSTNAME.match(value):
            raise _bad(path, f"{value!r} is neither an IP address nor a host name") from None


def _server(value: str, path: str) -> str:
    host, port = value, None
    m = re.match(r"^\[([0-9A-Fa-f:.]+)\](?::([0-9]+))?$", value)
    if m:
        host, port = m.group(1), m.group(2)
    elif value.count(":") == 1:
        host, port = value.split(":")
    if "/" in value or "://" in value:
        raise _bad(path, f"{value!r} must be a registry host[:port] without scheme or path "
                         "(e.g. 192.168.0.10:5000)")
    _host(host, path)
    if port is not None and (not port.isdigit() or not 0 < int(port) < 65536):
        raise _bad(path, f"{value!r} has an invalid port")
    return value


def _pkg_path(d: dict[str, Any], key: str, path: str, *, required: bool) -> str | None:
    v = _str(d, key, path, required=required)
    if v is None:
        return None
    v = v[2:] if v.startswith("./") else v
    if not _PKG_PATH.match(v) or ".." in v.split("/"):
        raise _bad(f"{path}.{key}", f"{v!r} must be a relative path inside the VNF package")
    return v


def _registries(root: dict[str, Any]) -> tuple[RegistryConnection, ...]:
    base = f"{ROOT}.private_registry_connection_info"
    out: list[RegistryConnection] = []
    seen: dict[str, str] = {}
    for i, raw in enumerate(_list(root, "private_registry_connection_info", base)):
        path = f"{base}[{i}]"
        d = _obj(raw, path)
        ct = d.get("connection_type")
        if ct is None:
            raise _bad(f"{path}.connection_type", "is required (0: HTTP, 1: HTTPS)")
        if isinstance(ct, bool) or str(ct).strip() not in ("0", "1"):
            raise _bad(f"{path}.connection_type", f"{ct!r} must be 0 (HTTP) or 1 (HTTPS)")
        https = str(ct).strip() == "1"
        server = _server(_req(d, "server", path), f"{path}.server")
        if server in seen:
            raise _bad(f"{path}.server", f"{server!r} is also {seen[server]}.server")
        seen[server] = path
        user = _str(d, "username", path, required=False)
        pw = d.get("password")
        if pw is not None and (not isinstance(pw, str) or not pw):
            raise _bad(f"{path}.password", "must be a non-empty string")
        if (user is None) != (pw is None):
            raise _bad(path, "give both 'username' and 'password' (or neither)")
        if user is not None and any(c in user for c in "\n\r"):
            raise _bad(f"{path}.username", "must be a single line")
        if pw is not None and any(c in pw for c in "\n\r"):
            raise _bad(f"{path}.password", "must be a single line")  # never echo it
        cert = _pkg_path(d, "certificate_path", path, required=False)
        if cert is not None and not https:
            raise _bad(f"{path}.certificate_path", "a CA certificate needs connection_type 1 (HTTPS); "
                                                   "connection_type 0 is plain HTTP")
        hosts_entry = None
        hs = _str(d, "hosts_string", path, required=False)
        if hs is not None:
            parts = hs.split()
            if len(parts) != 2:
                raise _bad(f"{path}.hosts_string", f"{hs!r} must be '<IP address> <FQDN>'")
            try:
                ipaddress.ip_address(parts[0])
            except ValueError:
                raise _bad(f"{path}.hosts_string", f"{parts[0]!r} is not an IP address "
                                                   "(expected '<IP address> <FQDN>')") from None
            if not _HOSTNAME.match(parts[1]):
                raise _bad(f"{path}.hosts_string", f"{parts[1]!r} is not a host name")
            hosts_entry = (parts[0], parts[1])
        out.append(RegistryConnection(path, https, server, user, pw, cert, hosts_entry))
    return tuple(out)


# ============================================================================= seed 001: storage
def _abs_dir(d: dict[str, Any], key: str, path: str) -> str:
    v = _req(d, key, path)
    if not re.match(r"^/[A-Za-z0-9_./@:+-]*$", v) or "/../" in v + "/" or "//" in v or v == "/":
        raise _bad(f"{path}.{key}", f"{v!r} must be a plain absolute directory path (not /)")
    return v.rstrip("/")


def _storage_server(root: dict[str, Any]) -> StorageServerParams | None:
    if root.get("storage_server") is None:
        return None
    path = f"{ROOT}.storage_server"
    d = _obj(root["storage_server"], path)
    cp = _req(d, "ssh_cp_name", path)
    if not _CP_NAME.match(cp):
        raise _bad(f"{path}.ssh_cp_name", f"{cp!r} contains characters not allowed in a VNFD id")
    node = _node({**d, "nic_cp_name": cp}, path)
    vols: list[VolumeSetup] = []
    vpath = f"{path}.cinder_volume_setup_params"
    raw_vols = _list(d, "cinder_volume_setup_params", vpath)
    if not raw_vols:
        raise _bad(vpath, "is required (at least one volume to mount)")
    mounts: dict[str, str] = {}
    for i, raw in enumerate(raw_vols):
        p = f"{vpath}[{i}]"
        v = _obj(raw, p)
        rid = _req(v, "volume_resource_id", p)
        if not _CP_NAME.match(rid):
            raise _bad(f"{p}.volume_resource_id", f"{rid!r} contains characters not allowed in a VNFD id")
        mount_to = _abs_dir(v, "mount_to", p)
        if mount_to in mounts:
            raise _bad(f"{p}.mount_to", f"{mount_to!r} is also {mounts[mount_to]}.mount_to")
        mounts[mount_to] = p
        dev = _str(v, "device", p, required=False)
        if dev is not None and not re.match(r"^/dev/[A-Za-z0-9_./:-]+$", dev):
            raise _bad(f"{p}.device", f"{dev!r} must be a path under /dev")
        vols.append(VolumeSetup(rid, mount_to, dev))
    exports: list[NfsSetup] = []
    epath = f"{path}.nfs_server_setup_params"
    raw_exports = _list(d, "nfs_server_setup_params", epath)
    if not raw_exports:
        raise _bad(epath, "is required (at least one directory to export over NFS)")
    seen: dict[str, str] = {}
    for i, raw in enumerate(raw_exports):
        p = f"{epath}[{i}]"
        e = _obj(raw, p)
        export_dir = _abs_dir(e, "export_dir", p)
        if export_dir in seen:
            raise _bad(f"{p}.export_dir", f"{export_dir!r} is also {seen[export_dir]}.export_dir")
        seen[export_dir] = p
        export_to = _req(e, "export_to", p)
        if export_to != "*":
            try:
                ipaddress.ip_network(export_to, strict=False)
            except ValueError:
                raise _bad(f"{p}.export_to", f"{export_to!r} is not an address or network "
                                             "(e.g. 10.10.0.0/24)") from None
        exports.append(NfsSetup(export_dir, export_to))
    return StorageServerParams(cp, node["username"], node["password"], node["ssh_private_key"],
                               tuple(vols), tuple(exports))


def _pv_registrations(root: dict[str, Any]) -> tuple[PvRegistration, ...]:
    base = f"{ROOT}.pv_registration_params"
    out: list[PvRegistration] = []
    for i, raw in enumerate(_list(root, "pv_registration_params", base)):
        p = f"{base}[{i}]"
        d = _obj(raw, p)
        manifest = _pkg_path(d, "pv_manifest_file_path", p, required=True)
        assert manifest is not None
        cp = _req(d, "nfs_server_cp", p)
        if not _CP_NAME.match(cp):
            raise _bad(f"{p}.nfs_server_cp", f"{cp!r} contains characters not allowed in a VNFD id")
        out.append(PvRegistration(p, manifest, cp))
    if out and root.get("storage_server") is None:
        raise _bad(f"{ROOT}.storage_server", "is required when pv_registration_params is given (the NFS "
                                             "server the PersistentVolumes point at)")
    return tuple(out)


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
