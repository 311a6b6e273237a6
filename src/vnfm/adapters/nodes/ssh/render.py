"""Pure functions that render the configuration files node steps install. Inputs are the
validated fields of the step dataclasses, so no value can break out of its place in a file."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import yaml

from vnfm.nodesteps.lb import HaproxySetBackends, LbFrontends
from vnfm.nodesteps.registry import RegistryClientConfig, RegistryServe
from vnfm.nodesteps.storage import NfsExport

# the end of `global` and the `defaults` section both HAProxy configurations share
_HAPROXY_TCP_DEFAULTS = (
    "  log stderr format short local0 notice",
    "",
    "defaults",
    "  mode tcp",
    "  log global",
    "  option dontlognull",
    "  timeout connect 5s",
    "  timeout client 1h",
    "  timeout server 1h",
    "  timeout client-fin 30s",
)


def render_haproxy_cfg(step: HaproxySetBackends) -> str:
    bind = f"{'' if step.bind_addr == '*' else step.bind_addr}:{step.frontend_port}"
    if ":" in step.bind_addr:  # IPv6 literal
        bind = f"[{step.bind_addr}]:{step.frontend_port}"
    lines = [
        "# managed by vnfm: changes are overwritten",
        "global",
        "  master-worker",
        f"  pidfile {step.pidfile}",
        "  stats socket /run/haproxy-admin.sock mode 600 level admin expose-fd listeners",
        *_HAPROXY_TCP_DEFAULTS,
        "",
        f"frontend vnfm_fe_{step.frontend_port}",
        f"  bind {bind}",
        f"  default_backend vnfm_be_{step.frontend_port}",
        "",
        f"backend vnfm_be_{step.frontend_port}",
        "  balance roundrobin",
        "  option tcp-check",
        "  default-server fall 2 rise 1",
    ]
    for b in step.backends:
        addr = f"[{b.addr}]" if ":" in b.addr else b.addr
        lines.append(f"  server {b.name} {addr}:{b.port} check inter {step.check_interval_ms}ms")
    return "\n".join(lines) + "\n"


def render_ganesha_conf(step: NfsExport) -> str:
    core = ["Protocols = 4;", f"NFS_Port = {step.port};", "Enable_NLM = false;", "Enable_RQUOTA = false;"]
    if step.bind_addr:
        core.append(f"Bind_addr = {step.bind_addr};")
    clients = ", ".join(step.clients)
    squash = "Root_Squash" if step.root_squash else "No_Root_Squash"
    return (
        "# managed by vnfm: changes are overwritten\n"
        "NFS_CORE_PARAM {\n  " + "\n  ".join(core) + "\n}\n"
        "NFSV4 {\n  Graceless = true;\n}\n"
        "EXPORT {\n"
        f"  Export_Id = {step.export_id};\n"
        f"  Path = {step.path};\n"
        f"  Pseudo = {step.pseudo_path};\n"
        "  Protocols = 4;\n  Transports = TCP;\n  SecType = sys;\n"
        "  Access_Type = None;\n"
        f"  Squash = {squash};\n"
        "  FSAL {\n    Name = VFS;\n  }\n"
        "  CLIENT {\n"
        f"    Clients = {clients};\n"
        "    Access_Type = RW;\n"
        "  }\n"
        "}\n"
        "LOG {\n  Default_Log_Level = EVENT;\n}\n"
    )


def render_registry_config(step: RegistryServe) -> str:
    cfg: dict[str, Any] = {
        "version": 0.1,
        "log": {"level": "warn"},
        "storage": {"filesystem": {"rootdirectory": step.storage_dir}, "delete": {"enabled": True}},
        "http": {"addr": f":{step.port}"},
    }
    if step.tls:
        cfg["http"]["tls"] = {
            "certificate": f"{step.config_dir}/tls.crt",
            "key": f"{step.config_dir}/tls.key",
        }
    return "# managed by vnfm\n" + yaml.safe_dump(cfg, sort_keys=False)


def render_containerd_hosts_toml(step: RegistryClientConfig) -> str:
    scheme = "http" if step.plain_http else "https"
    url = f"{scheme}://{step.registry}"
    lines = [
        "# managed by vnfm",
        f"server = {json.dumps(url)}",
        "",
        f"[host.{json.dumps(url)}]",
        '  capabilities = ["pull", "resolve", "push"]',
    ]
    if step.ca_pem:
        lines.append(f"  ca = {json.dumps(f'{step.certs_dir}/{step.registry}/ca.crt')}")
    return "\n".join(lines) + "\n"


def render_registries_conf(step: RegistryClientConfig) -> str:
    """containers-registries.conf(5) drop-in; only needed for a plain-HTTP registry."""
    return (
        "# managed by vnfm\n"
        "[[registry]]\n"
        f"location = {json.dumps(step.registry)}\n"
        f"insecure = {'true' if step.plain_http else 'false'}\n"
    )


def render_hosts_block(block: str, entries: Sequence[tuple[str, Sequence[str]]]) -> str:
    if not entries:
        return ""
    body = "".join(f"{addr} {' '.join(names)}\n" for addr, names in entries)
    return f"# BEGIN {block} (managed by vnfm)\n{body}# END {block}\n"


def render_nfs_pv_manifest(
    name: str,
    server: str,
    path: str,
    capacity: str = "1Gi",
    access_modes: Sequence[str] = ("ReadWriteMany",),
    reclaim_policy: str = "Retain",
    storage_class: str = "",
    mount_options: Sequence[str] = ("nfsvers=4.1", "hard"),
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Kubernetes PersistentVolume for an NFS export served by `NfsExport` (`path` is its
    NFSv4 pseudo path, which defaults to the export path)."""
    if not path.startswith("/"):
        raise ValueError("NFS path must be absolute")
    if reclaim_policy not in ("Retain", "Delete", "Recycle"):
        raise ValueError(f"bad reclaim policy {reclaim_policy!r}")
    for m in access_modes:
        if m not in ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"):
            raise ValueError(f"bad access mode {m!r}")
    pv: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {
            "capacity": {"storage": capacity},
            "accessModes": list(access_modes),
            "persistentVolumeReclaimPolicy": reclaim_policy,
            "storageClassName": storage_class,
            "mountOptions": list(mount_options),
            "nfs": {"server": server, "path": path},
        },
    }
    if not pv["metadata"]["labels"]:
        del pv["metadata"]["labels"]
    return pv


def manifest_yaml(manifest: dict[str, Any]) -> str:
    return yaml.safe_dump(manifest, sort_keys=False)


# ---------------------------------------------------------------- external load balancer (LbFrontends)
def lb_main_config_path(conf_dir: str) -> str:
    """Where the load balancer's global settings live: beside the owners' directory, named after
    it (/etc/haproxy/vnfm.d -> /etc/haproxy/vnfm.cfg)."""
    base = conf_dir.rstrip("/")
    return (base[:-2] if base.endswith(".d") else base) + ".cfg"


def lb_stats_socket(pidfile: str) -> str:
    return (pidfile[:-4] if pidfile.endswith(".pid") else pidfile) + "-vnfm.sock"


def render_lb_main(step: LbFrontends) -> str:
    """Global settings of the external load balancer: master-worker (hitless reloads), the pid
    file, the socket through which a new worker takes over the listeners, TCP defaults."""
    return "\n".join([
        "# managed by vnfm: the external load balancer's global settings; each owner's frontends are in",
        f"# {step.conf_dir}/<owner>.cfg. HAProxy runs as:",
        f"#   haproxy -W -D -p {step.pidfile} -f {lb_main_config_path(step.conf_dir)} -f {step.conf_dir}",
        "global",
        "  master-worker",
        f"  pidfile {step.pidfile}",
        f"  stats socket {lb_stats_socket(step.pidfile)} mode 600 level admin expose-fd listeners",
        *_HAPROXY_TCP_DEFAULTS,
    ]) + "\n"


def _server_addr(addr: str, port: int | None) -> str:
    host = f"[{addr}]" if ":" in addr else addr  # IPv6 literal
    return host if port is None else f"{host}:{port}"


def lb_proxy_name(owner: str, what: str, name: str) -> str:
    """HAProxy's name of an owner's frontend ("fe"), its backend ("be") or a pool ("pool")."""
    return f"vnfm_{owner}_{what}_{name}"


def render_lb_owner(step: LbFrontends) -> str:
    """One owner's file in the LB's conf_dir; "" when the owner has nothing (its file goes)."""
    if not step.frontends and not step.pools:
        return ""
    ports = ", ".join(str(f.port) for f in step.frontends) or "none"
    lines = [f"# managed by vnfm: the part of owner {step.owner} (ports {ports}); the other owners' parts "
             "are the other files of this directory"]
    for f in step.frontends:
        fe = ["", f"frontend {lb_proxy_name(step.owner, 'fe', f.name)}", "  mode tcp", f"  bind :{f.port}"]
        if f.pool is not None:  # another owner's pool (haproxy -c fails while it does not exist)
            lines += [*fe, f"  default_backend {lb_proxy_name(f.pool.owner, 'pool', f.pool.name)}"]
            continue
        be = lb_proxy_name(step.owner, "be", f.name)
        lines += [*fe, f"  default_backend {be}", "", f"backend {be}", "  mode tcp", "  balance roundrobin",
                  "  default-server inter 2s fall 2 rise 1"]
        lines += [f"  server {b.name} {_server_addr(b.addr, b.port)} check" for b in f.backends]
    for p in step.pools:
        # no port of its own: a server takes the port the client connected to (NodePorts)
        lines += ["", f"backend {lb_proxy_name(step.owner, 'pool', p.name)}", "  mode tcp", "  balance roundrobin"]
        lines += [f"  server {n} {_server_addr(addr, None)}" for n, addr in p.servers]
    return "\n".join(lines) + "\n"
