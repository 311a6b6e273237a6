"""The simulated cloud's side of a Kubernetes cluster: a twin that carries out the same typed steps
as the SSH executor, on state kept in the SimCloud extras of the instance (key "k8s").

State (JSON): cluster (endpoint, CA, bootstrap token hash), nodes (role, ready, addresses, labels,
cordoned), pods and pdbs, etcd members (name, peer URL, healthy), per-host HAProxy backends,
keepalived and /etc/hosts blocks (host-local state is keyed by server id, so a healed VM starts
clean), service accounts (token hashes only), the registered VIM (no secrets), faults.

Faults (set in `extras["k8s"]["faults"]` or `TwinConfig`): `never_ready` node names, a pod
disruption budget that blocks a drain, and an unreachable host (the server's `ssh_reachable`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vnfm.adapters.mgmt.kubernetes.steps import (
    ApplyPersistentVolume,
    ContainerdRegistries,
    DeleteNode,
    DeletePersistentVolumes,
    DrainNode,
    InstallNfsClient,
    JoinInfo,
    KeepalivedVip,
    KubeadmInit,
    KubeadmJoin,
    LabelNode,
    NfsExports,
    NodeRegistryConfig,
    PrepareNode,
    PrepareVolume,
    VimToken,
    WaitNodeReady,
)
from vnfm.nodesteps.steps import (
    EtcdHealth,
    EtcdMemberAdd,
    EtcdMemberList,
    EtcdMemberRemove,
    HaproxySetBackends,
    NfsExport,
    NodeStep,
    RegistryClientConfig,
    SetHostsEntries,
    StepExecutor,
    StepFailed,
    StepResult,
)

KEY = "k8s"


@dataclass
class TwinConfig:
    """Latencies (seconds) of the twin. `step_latency` is keyed by step kind."""

    join_time: float = 0.0  # kubeadm join of one node
    # What the twin observed while running (e.g. how many joins ran at once): makes parallelism
    # checkable without timing assertions.
    observed: dict[str, int] = field(default_factory=dict)
    ready_delay: float = 0.0  # from join until the node reports Ready
    step_latency: dict[str, float] = field(default_factory=dict)
    poll: float = 0.01


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _fake_ca() -> tuple[str, str]:
    body = base64.b64encode(secrets.token_bytes(96)).decode()
    pem = "-----BEGIN CERTIFICATE-----\n" + "\n".join(body[i:i + 64] for i in range(0, len(body), 64)) \
        + "\n-----END CERTIFICATE-----\n"
    return pem, "sha256:" + _sha(pem)


def empty() -> dict[str, Any]:
    return {"cluster": {}, "nodes": {}, "pods": {}, "pdbs": {}, "etcd": {"members": {}},
            "hosts": {}, "service_accounts": {}, "vim": None, "faults": {}, "volumes": {}, "pvs": {}}


class TwinExecutor(StepExecutor):
    """Hosts are addresses (fixed or floating) of VNFC servers of the simulated cloud."""

    def __init__(self, sim: Any, instance_id: str, config: TwinConfig | None = None) -> None:
        self.sim = sim
        self.instance_id = instance_id
        self.config = config or TwinConfig()
        self._handlers: dict[type[NodeStep], Callable[[str, str, Any], Any]] = {
            PrepareNode: self._prepare,
            KubeadmInit: self._init,
            JoinInfo: self._join_info,
            KubeadmJoin: self._join,
            WaitNodeReady: self._wait_ready,
            DrainNode: self._drain,
            DeleteNode: self._delete,
            LabelNode: self._label,
            KeepalivedVip: self._keepalived,
            VimToken: self._vim_token,
            EtcdMemberList: self._etcd_list,
            EtcdMemberRemove: self._etcd_remove,
            EtcdMemberAdd: self._etcd_add,
            EtcdHealth: self._etcd_health,
            HaproxySetBackends: self._haproxy,
            SetHostsEntries: self._hosts_entries,
            RegistryClientConfig: self._registry_client,
            NodeRegistryConfig: self._registry_client,
            ContainerdRegistries: self._containerd_registries,
            PrepareVolume: self._prepare_volume,
            NfsExport: self._nfs_export,
            NfsExports: self._nfs_exports,
            InstallNfsClient: self._nfs_client,
            ApplyPersistentVolume: self._apply_pv,
            DeletePersistentVolumes: self._delete_pvs,
        }

    # ------------------------------------------------------------------ state helpers
    def state(self) -> dict[str, Any]:
        return dict(self.sim.extras(self.instance_id).get(KEY) or empty())

    def _tx(self, fn: Callable[[dict[str, Any]], Any]) -> Any:
        def wrap(extras: dict[str, Any]) -> Any:
            st = extras.setdefault(KEY, empty())
            for k, v in empty().items():
                st.setdefault(k, v)
            return fn(st)

        return self.sim.update_extras(self.instance_id, wrap)

    def _server(self, host: str, step: NodeStep) -> dict[str, Any]:
        server = self.sim.server_by_address(host)
        if server is None:
            raise StepFailed(host, step, "no server has this address (unreachable)")
        if server.get("status") != "ACTIVE" or not server.get("ssh_reachable", True):
            raise StepFailed(host, step, f"host unreachable: server {server['name']} does not answer on SSH")
        return dict(server)

    def host_key(self, host: str) -> str:
        server = self.sim.server_by_address(host)
        if server is None or not server.get("ssh_reachable", True) or server.get("status") != "ACTIVE":
            raise StepFailed(host, NodeStep(), "host unreachable: cannot read its SSH host key")
        return str(server["host_key"]["public_key"])

    def record_vim(self, record: dict[str, Any] | None) -> None:
        def fn(st: dict[str, Any]) -> None:
            st["vim"] = record

        self._tx(fn)

    def set_faults(self, **faults: Any) -> None:
        def fn(st: dict[str, Any]) -> None:
            st["faults"].update(faults)

        self._tx(fn)

    def add_pod(self, name: str, node: str, *, namespace: str = "default", labels: dict[str, str] | None = None,
                daemonset: bool = False, mirror: bool = False) -> None:
        def fn(st: dict[str, Any]) -> None:
            st["pods"][f"{namespace}/{name}"] = {"name": name, "namespace": namespace, "node": node,
                                                 "labels": dict(labels or {}), "daemonset": daemonset,
                                                 "mirror": mirror}

        self._tx(fn)

    def add_pdb(self, name: str, selector: dict[str, str], max_unavailable: int = 0) -> None:
        def fn(st: dict[str, Any]) -> None:
            st["pdbs"][name] = {"selector": dict(selector), "max_unavailable": max_unavailable}

        self._tx(fn)

    # ------------------------------------------------------------------ dispatch
    async def run(self, host: str, step: NodeStep) -> StepResult:
        handler = self._handlers.get(type(step))
        if handler is None:
            raise StepFailed(host, step, f"step {type(step).__name__} is not supported by the twin")
        server = self._server(host, step)
        delay = self.config.step_latency.get(step.kind, 0.0)
        joining = isinstance(step, KubeadmJoin)
        if joining:
            delay += self.config.join_time
            seen = self.config.observed
            seen["joins_in_flight"] = seen.get("joins_in_flight", 0) + 1
            seen["max_joins_in_flight"] = max(seen.get("max_joins_in_flight", 0), seen["joins_in_flight"])
        try:
            if delay > 0:
                await asyncio.sleep(delay)
                server = self._server(host, step)
        finally:
            if joining:
                self.config.observed["joins_in_flight"] -= 1
        result = handler(host, server["id"], step)
        if asyncio.iscoroutine(result):
            result = await result
        assert isinstance(result, StepResult)
        return result

    # ------------------------------------------------------------------ host steps
    def _prepare(self, host: str, sid: str, step: PrepareNode) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            h = st["hosts"].setdefault(sid, {})
            want = {"version": step.version, "hostname": step.node, "proxy": bool(step.http_proxy or step.https_proxy)}
            if h.get("prepared") == want:
                return False
            h["prepared"] = want
            return True

        return StepResult(self._tx(fn))

    def _init(self, host: str, sid: str, step: KubeadmInit) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            if not st["hosts"].get(sid, {}).get("prepared"):
                raise StepFailed(host, step, "node is not prepared (containerd/kubeadm missing)")
            c = st["cluster"]
            node = st["nodes"].get(step.node)
            if c.get("initialized") and node is not None and node.get("server_id") == sid:
                return False
            if c.get("initialized") and st["nodes"]:
                raise StepFailed(host, step, "a cluster already exists; join it instead")
            ca, ca_hash = _fake_ca()
            st["cluster"] = {"initialized": True, "endpoint": step.control_plane_endpoint, "ca_pem": ca,
                             "ca_cert_hash": ca_hash, "pod_cidr": step.pod_cidr,
                             "service_cidr": step.service_cidr, "version": step.version,
                             "cert_sans": list(step.cert_sans), "token_sha256": [], "cert_key_sha256": []}
            st["nodes"] = {}
            st["etcd"] = {"members": {}}
            self._register(st, sid, step.node, "master", step.advertise_address, ready_now=True)
            return True

        return StepResult(self._tx(fn))

    def _register(self, st: dict[str, Any], sid: str, name: str, role: str, addr: str, *, ready_now: bool) -> None:
        now = time.time()
        st["nodes"][name] = {"name": name, "role": role, "server_id": sid, "addresses": [addr],
                             "labels": {"kubernetes.io/hostname": name,
                                        **({"node-role.kubernetes.io/control-plane": ""} if role == "master" else {})},
                             "cordoned": False, "ready": False,
                             "ready_at": now + (0.0 if ready_now else self.config.ready_delay)}
        if role == "master":
            st["etcd"]["members"][name] = {"name": name, "peer_url": f"https://{addr}:2380", "healthy": True}
        st["hosts"].setdefault(sid, {})["kubelet"] = name

    def _join_info(self, host: str, sid: str, step: JoinInfo) -> StepResult:
        token = f"{secrets.token_hex(3)}.{secrets.token_hex(8)}"
        cert_key = secrets.token_hex(32)

        def fn(st: dict[str, Any]) -> dict[str, Any]:
            c = st["cluster"]
            if not c.get("initialized") or self._node_on(st, sid, "master") is None:
                raise StepFailed(host, step, "this host is not a control plane of an initialised cluster")
            # like kubeadm, every token created stays valid (until its TTL): parallel joins may use any
            c["token_sha256"] = [*(c.get("token_sha256") or [])[-31:], _sha(token)]
            c["cert_key_sha256"] = [*(c.get("cert_key_sha256") or [])[-31:], _sha(cert_key)]
            return {"endpoint": c["endpoint"], "ca_cert_hash": c["ca_cert_hash"]}

        data = self._tx(fn)
        return StepResult(False, {**data, "token": token, "certificate_key": cert_key})

    @staticmethod
    def _node_on(st: dict[str, Any], sid: str, role: str | None = None) -> dict[str, Any] | None:
        for n in st["nodes"].values():
            if n.get("server_id") == sid and (role is None or n["role"] == role):
                return dict(n)
        return None

    def _join(self, host: str, sid: str, step: KubeadmJoin) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            if not st["hosts"].get(sid, {}).get("prepared"):
                raise StepFailed(host, step, "node is not prepared (containerd/kubeadm missing)")
            c = st["cluster"]
            existing = st["nodes"].get(step.node)
            if existing is not None and existing.get("server_id") == sid:
                return False
            if not c.get("initialized") or c.get("endpoint") != step.endpoint:
                raise StepFailed(host, step, f"no API server answers at {step.endpoint}")
            if _sha(step.token) not in (c.get("token_sha256") or []) or c.get("ca_cert_hash") != step.ca_cert_hash:
                raise StepFailed(host, step, "the bootstrap token or CA hash was rejected")
            if step.control_plane:
                if _sha(step.certificate_key or "") not in (c.get("cert_key_sha256") or []):
                    raise StepFailed(host, step, "the certificate key was rejected")
                masters = [m for m in st["etcd"]["members"].values()]
                if masters and not all(m["healthy"] for m in masters):
                    raise StepFailed(host, step, "etcd is not healthy: cannot add a member")
                # a stale member of the same name (healed VM) blocks kubeadm's etcd join
                if step.node in st["etcd"]["members"]:
                    raise StepFailed(host, step, f"etcd already has a member named {step.node}")
            if existing is not None:
                raise StepFailed(host, step, f"a node named {step.node} already exists; delete it first")
            self._register(st, sid, step.node, "master" if step.control_plane else "worker",
                           step.advertise_address, ready_now=False)
            return True

        return StepResult(self._tx(fn))

    async def _wait_ready(self, host: str, sid: str, step: WaitNodeReady) -> StepResult:
        deadline = time.monotonic() + step.deadline_s
        while True:
            def fn(st: dict[str, Any]) -> tuple[bool, bool]:
                n = st["nodes"].get(step.node)
                if n is None:
                    return False, False
                if n["ready"]:
                    return True, False
                never = step.node in (st["faults"].get("never_ready") or [])
                if not never and time.time() >= n["ready_at"]:
                    n["ready"] = True
                    return True, True
                return False, False

            ready, changed = self._tx(fn)
            if ready:
                return StepResult(changed)
            if time.monotonic() >= deadline:
                node = self.state()["nodes"].get(step.node)
                why = "it is not registered" if node is None else "its kubelet reports NotReady"
                raise StepFailed(host, step, f"node {step.node} did not become Ready within "
                                             f"{step.deadline_s:g}s: {why}")
            await asyncio.sleep(self.config.poll)

    async def _drain(self, host: str, sid: str, step: DrainNode) -> StepResult:
        deadline = time.monotonic() + step.deadline_s
        changed = False
        while True:
            def fn(st: dict[str, Any]) -> tuple[bool, list[str]]:
                n = st["nodes"].get(step.node)
                if n is None:
                    return False, []
                moved = False
                if not n["cordoned"]:
                    n["cordoned"] = True
                    moved = True
                blocking: list[str] = []
                for key, pod in sorted(st["pods"].items()):
                    if pod["node"] != step.node or pod["daemonset"] or pod["mirror"]:
                        continue
                    pdb = self._blocking_pdb(st, pod)
                    if pdb is not None:
                        blocking.append(f"{key} (PodDisruptionBudget {pdb})")
                        continue
                    targets = sorted(x["name"] for x in st["nodes"].values()
                                     if x["name"] != step.node and x["ready"] and not x["cordoned"]
                                     and x["role"] == "worker")
                    pod["node"] = targets[hash(key) % len(targets)] if targets else None
                    moved = True
                return moved, blocking

            moved, blocking = self._tx(fn)
            changed = changed or moved
            if not blocking:
                return StepResult(changed)
            if time.monotonic() >= deadline:
                raise StepFailed(host, step, f"drain of {step.node} did not finish within {step.deadline_s:g}s; "
                                             f"blocking pods: {', '.join(blocking)}")
            await asyncio.sleep(self.config.poll)

    @staticmethod
    def _blocking_pdb(st: dict[str, Any], pod: dict[str, Any]) -> str | None:
        for name, pdb in sorted(st["pdbs"].items()):
            sel = pdb["selector"]
            if sel and all(pod["labels"].get(k) == v for k, v in sel.items()):
                matching = [p for p in st["pods"].values()
                            if all(p["labels"].get(k) == v for k, v in sel.items())]
                unavailable = sum(1 for p in matching if p["node"] is None)
                if unavailable + 1 > int(pdb.get("max_unavailable", 0)):
                    return str(name)
        return None

    def _delete(self, host: str, sid: str, step: DeleteNode) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            if st["nodes"].pop(step.node, None) is None:
                return False
            for pod in st["pods"].values():
                if pod["node"] == step.node:
                    pod["node"] = None
            return True

        return StepResult(self._tx(fn))

    def _label(self, host: str, sid: str, step: LabelNode) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            n = st["nodes"].get(step.node)
            if n is None:
                raise StepFailed(host, step, f"node {step.node} not found")
            want = dict(step.labels)
            if all(n["labels"].get(k) == v for k, v in want.items()):
                return False
            n["labels"].update(want)
            return True

        return StepResult(self._tx(fn))

    def _keepalived(self, host: str, sid: str, step: KeepalivedVip) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            h = st["hosts"].setdefault(sid, {})
            want = {"vip": step.vip, "priority": step.priority, "peers": sorted(step.peers),
                    "local_address": step.local_address}
            if h.get("keepalived") == want:
                return False
            h["keepalived"] = want
            return True

        return StepResult(self._tx(fn))

    def _vim_token(self, host: str, sid: str, step: VimToken) -> StepResult:
        token = secrets.token_urlsafe(32)

        def fn(st: dict[str, Any]) -> str:
            if self._node_on(st, sid, "master") is None:
                raise StepFailed(host, step, "this host is not a control plane")
            st["service_accounts"][f"{step.namespace}/{step.service_account}"] = {"token_sha256": _sha(token)}
            return str(st["cluster"]["ca_pem"])

        ca = self._tx(fn)
        return StepResult(True, {"token": token, "ca_pem": ca})

    # ------------------------------------------------------------------ etcd
    def _etcd_quorum(self, host: str, sid: str, step: NodeStep, st: dict[str, Any]) -> None:
        if self._node_on(st, sid, "master") is None:
            raise StepFailed(host, step, "no etcd member runs on this host")

    def _etcd_list(self, host: str, sid: str, step: EtcdMemberList) -> StepResult:
        def fn(st: dict[str, Any]) -> list[dict[str, Any]]:
            self._etcd_quorum(host, sid, step, st)
            return [{"id": _sha(m["name"])[:16], "name": m["name"], "peer_urls": [m["peer_url"]],
                     "client_urls": [m["peer_url"].replace(":2380", ":2379")], "learner": False}
                    for m in sorted(st["etcd"]["members"].values(), key=lambda m: m["name"])]

        return StepResult(False, {"members": self._tx(fn)})

    def _etcd_remove(self, host: str, sid: str, step: EtcdMemberRemove) -> StepResult:
        def fn(st: dict[str, Any]) -> tuple[bool, str]:
            self._etcd_quorum(host, sid, step, st)
            members = st["etcd"]["members"]
            gone = [k for k, m in members.items()
                    if m["name"] == step.name or (step.peer_url and m["peer_url"] == step.peer_url)]
            for k in gone:
                del members[k]
            return (bool(gone), ",".join(_sha(k)[:16] for k in gone))

        changed, mid = self._tx(fn)
        return StepResult(changed, {"id": mid})

    def _etcd_add(self, host: str, sid: str, step: EtcdMemberAdd) -> StepResult:
        def fn(st: dict[str, Any]) -> tuple[bool, list[tuple[str, str]]]:
            self._etcd_quorum(host, sid, step, st)
            members = st["etcd"]["members"]
            changed = not any(m["peer_url"] == step.peer_url for m in members.values())
            if changed:
                members[step.name] = {"name": step.name, "peer_url": step.peer_url, "healthy": True}
            return changed, [(m["name"], m["peer_url"]) for m in members.values()]

        changed, pairs = self._tx(fn)
        return StepResult(changed, {"initial_cluster": ",".join(f"{n}={u}" for n, u in pairs), "members": pairs})

    def _etcd_health(self, host: str, sid: str, step: EtcdHealth) -> StepResult:
        def fn(st: dict[str, Any]) -> dict[str, bool]:
            self._etcd_quorum(host, sid, step, st)
            return {m["peer_url"].replace(":2380", ":2379"): bool(m["healthy"])
                    for m in st["etcd"]["members"].values()}

        per = self._tx(fn)
        return StepResult(False, {"healthy": bool(per) and all(per.values()), "endpoints": per})

    # ------------------------------------------------------------------ haproxy / hosts
    def _haproxy(self, host: str, sid: str, step: HaproxySetBackends) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            h = st["hosts"].setdefault(sid, {})
            want = {"frontend_port": step.frontend_port,
                    "backends": [[b.name, b.addr, b.port] for b in step.backends]}
            cur = h.get("haproxy")
            if cur is not None and {k: cur[k] for k in want} == want:
                return False
            h["haproxy"] = {**want, "reloads": (cur or {}).get("reloads", -1) + 1, "address": host}
            return True

        return StepResult(self._tx(fn))

    def _hosts_entries(self, host: str, sid: str, step: SetHostsEntries) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            h = st["hosts"].setdefault(sid, {})
            blocks = h.setdefault("etc_hosts", {})
            want = [[a, list(n)] for a, n in step.entries]
            if blocks.get(step.block) == want or (not want and step.block not in blocks):
                return False
            if want:
                blocks[step.block] = want
            else:
                blocks.pop(step.block, None)
            h["etc_hosts_writes"] = h.get("etc_hosts_writes", 0) + 1
            return True

        return StepResult(self._tx(fn))

    # ------------------------------------------------------------------ registries (seed 003)
    def _registry_client(self, host: str, sid: str, step: RegistryClientConfig) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            h = st["hosts"].setdefault(sid, {})
            regs = h.setdefault("registries", {})
            want = {"scheme": "http" if step.plain_http else "https",
                    "hosts_toml": f"{step.certs_dir}/{step.registry}/hosts.toml",
                    "ca_sha256": _sha(step.ca_pem.strip()) if step.ca_pem else None,
                    "hosts_entry": list(step.hosts_entry) if step.hosts_entry else None}
            changed = regs.get(step.registry) != want
            regs[step.registry] = want
            if step.hosts_entry is not None:
                block = f"vnfm-registry-{step.registry_host}"[:63]
                blocks = h.setdefault("etc_hosts", {})
                entry = [[step.hosts_entry[0], [step.hosts_entry[1]]]]
                if blocks.get(block) != entry:
                    blocks[block] = entry
                    h["etc_hosts_writes"] = h.get("etc_hosts_writes", 0) + 1
                    changed = True
            return changed

        return StepResult(self._tx(fn))

    def _containerd_registries(self, host: str, sid: str, step: ContainerdRegistries) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            h = st["hosts"].setdefault(sid, {})
            if not h.get("prepared"):
                raise StepFailed(host, step, f"{step.config_file} does not exist: containerd is not installed "
                                             "(prepare the node first)")
            # credentials: only which registry has some, and a hash (never the secrets themselves)
            want = {"config_path": step.config_path,
                    "auth": {a.server: _sha(f"{a.username}:{a.password}") for a in step.auth}}
            cur = h.get("containerd")
            if cur is not None and {k: cur[k] for k in want} == want:
                return False
            h["containerd"] = {**want, "restarts": (cur or {}).get("restarts", 0) + 1}
            return True

        return StepResult(self._tx(fn))

    # ------------------------------------------------------------------ storage (seed 001)
    def _prepare_volume(self, host: str, sid: str, step: PrepareVolume) -> StepResult:
        server = self.sim.server_by_address(host) or {}
        if step.volume_id not in (server.get("volumes") or []):
            raise StepFailed(host, step, f"no block device for volume {step.volume_id}: it is not attached to "
                                         f"server {server.get('name', sid)}")

        def fn(st: dict[str, Any]) -> tuple[bool, bool]:
            vol = st["volumes"].setdefault(step.volume_id, {})  # lives with the volume, across heals
            changed = formatted = False
            if not vol.get("fs"):
                vol.update(fs=step.fs_type, uuid=_sha(step.volume_id)[:8] + "-" + secrets.token_hex(4),
                           formats=vol.get("formats", 0) + 1)
                changed = formatted = True
            for other_sid, other in st["hosts"].items():  # a volume is attached to one server: the old one
                if other_sid != sid and step.volume_id in (other.get("mounts") or {}).values():  # is gone
                    for k in ("mounts", "fstab", "nfs"):
                        other.pop(k, None)
            h = st["hosts"].setdefault(sid, {})  # host-local: a healed server starts clean
            line = f"UUID={vol['uuid']} {step.mount_to} {vol['fs']} defaults,nofail 0 2"
            fstab = h.setdefault("fstab", {})
            if fstab.get(step.mount_to) != line:
                fstab[step.mount_to] = line
                changed = True
            mounts = h.setdefault("mounts", {})
            if step.mount_to in mounts and mounts[step.mount_to] != step.volume_id:
                raise StepFailed(host, step, f"{step.mount_to} has another device mounted")
            if step.mount_to not in mounts:
                mounts[step.mount_to] = step.volume_id
                changed = True
            return changed, formatted

        changed, formatted = self._tx(fn)
        return StepResult(changed, {"device": f"/dev/disk/by-id/virtio-{step.volume_id[:20]}",
                                    "formatted": formatted})

    def _nfs_export(self, host: str, sid: str, step: NfsExport) -> StepResult:
        return self._nfs_exports(host, sid, NfsExports((step,)))

    def _nfs_exports(self, host: str, sid: str, step: NfsExports) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            h = st["hosts"].setdefault(sid, {})
            mounts = h.get("mounts") or {}
            want = []
            for e in step.exports:
                on = next((st["volumes"][v]["uuid"] for m, v in mounts.items()
                           if e.path == m or e.path.startswith(m + "/")), None)
                want.append({"path": e.path, "pseudo": e.pseudo_path, "clients": list(e.clients),
                             "port": e.port, "volume_uuid": on})
            cur = h.get("nfs")
            if cur is not None and cur["exports"] == want:
                return False
            h["nfs"] = {"exports": want, "restarts": (cur or {}).get("restarts", -1) + 1, "address": host}
            return True

        return StepResult(self._tx(fn), {"pseudo": [e.pseudo_path for e in step.exports]})

    def _nfs_client(self, host: str, sid: str, step: InstallNfsClient) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            h = st["hosts"].setdefault(sid, {})
            if h.get("nfs_client"):
                return False
            h["nfs_client"] = True
            return True

        return StepResult(self._tx(fn))

    def _apply_pv(self, host: str, sid: str, step: ApplyPersistentVolume) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            if self._node_on(st, sid, "master") is None:
                raise StepFailed(host, step, "this host is not a control plane")
            cur = st["pvs"].get(step.name)
            want = {"nfs_server": step.nfs_server, "nfs_path": step.nfs_path, "manifest_sha256": _sha(step.manifest)}
            if cur is not None:
                if {k: cur[k] for k in want} == want:
                    return False
                if (cur["nfs_server"], cur["nfs_path"]) != (step.nfs_server, step.nfs_path) \
                        and cur.get("phase") == "Bound":
                    raise StepFailed(host, step, f"PersistentVolume {step.name} points at "
                                                 f"'{cur['nfs_server']} {cur['nfs_path']}' and is Bound to "
                                                 f"{cur.get('claim')}: cannot move it")
                if (cur["nfs_server"], cur["nfs_path"]) == (step.nfs_server, step.nfs_path):
                    cur.update(want)
                    return True
            st["pvs"][step.name] = {**want, "phase": "Available", "claim": None,
                                    "created": (cur or {}).get("created", 0) + 1}
            return True

        return StepResult(self._tx(fn))

    def _delete_pvs(self, host: str, sid: str, step: DeletePersistentVolumes) -> StepResult:
        def fn(st: dict[str, Any]) -> bool:
            if self._node_on(st, sid, "master") is None:
                raise StepFailed(host, step, "this host is not a control plane")
            present = [n for n in step.names if n in st["pvs"]]
            bound = [f"{n} (claim {st['pvs'][n]['claim']})" for n in present if st["pvs"][n]["phase"] == "Bound"]
            if bound:
                raise StepFailed(host, step, f"PersistentVolumes in use: {' '.join(bound)}")
            for n in present:
                del st["pvs"][n]
            return bool(present)

        return StepResult(self._tx(fn))

    def bind_pv(self, name: str, claim: str | None) -> None:
        """Test helper: a claim binds (or, None, releases) a PersistentVolume."""
        def fn(st: dict[str, Any]) -> None:
            pv = st["pvs"][name]
            pv["phase"], pv["claim"] = ("Bound", claim) if claim else ("Available", None)

        self._tx(fn)


def view(extras: dict[str, Any]) -> dict[str, Any]:
    """A readable summary of the twin (for the CLI, the simulator API and tests)."""
    st = extras.get(KEY) or empty()
    hosts = st.get("hosts", {})
    names = {n["server_id"]: n["name"] for n in st.get("nodes", {}).values()}
    return {
        "endpoint": st.get("cluster", {}).get("endpoint"),
        "nodes": {n: {"role": v["role"], "ready": v["ready"], "cordoned": v["cordoned"],
                      "addresses": v["addresses"], "labels": v["labels"]}
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
