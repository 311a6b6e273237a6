"""Kubespray steps: an inventory on the operator's Ansible server (copied from the Kubespray tree's
`inventory/sample`, owned by one cluster), playbook runs there, the per-run SSH key Ansible logs in
to the nodes with, and the admin kubeconfig carried from a control plane to the external load
balancer (the kubectl jump host).

Secrets (the run's private key, proxy URLs that may carry credentials, become passwords, the
kubeconfig) are fields with repr=False: executors hand them to hosts as exported variables on
stdin, never in argv, and nothing writes them to a file on the Ansible server. The inventory files
refer to them with `lookup('env', ...)`; the private key lives in an ssh-agent for one run.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_host, _check_ip, _check_name, _check_path
from vnfm.nodesteps.kubernetes import _check_node
from vnfm.nodesteps.kubespray_tree import PLAYBOOKS

# the groups Kubespray's playbooks target
GROUPS = ("kube_control_plane", "etcd", "kube_node", "k8s_cluster", "calico_rr")
_ENV = re.compile(r"^VNFM_[A-Z0-9_]{1,60}$")
_VAR = re.compile(r"^[a-z_][a-z0-9_]{0,63}$")
_SIMPLE_VALUE = re.compile(r"^[A-Za-z0-9_.,:/@=-]{0,253}$")
_PUBKEY = re.compile(r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/=]{16,4096}$")
KUBE_VERSION = re.compile(r"^1\.[0-9]{1,2}\.[0-9]{1,3}$")
_USER = re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$", re.IGNORECASE)
OWNER_FILE = ".vnfm-owner"


def env_lookup(name: str) -> str:
    """An Ansible expression reading variable `name` of ansible-playbook's environment."""
    return "{{ lookup('env', '" + name + "') }}"


def _check_inventory(root: str, inventory: str) -> None:
    _check_path("kubespray root path", root)
    _check_path("inventory path", inventory)
    r, i = root.rstrip("/"), inventory.rstrip("/")
    if i in ("", "/", r, f"{r}/inventory", f"{r}/inventory/sample") or r.startswith(i + "/"):
        raise ValueError(f"inventory path {inventory!r} must be a directory of its own (not the Kubespray "
                         "tree, its inventory/ or inventory/sample, nor one of their parents)")


@dataclass(frozen=True)
class InventoryHost:
    """One node in hosts.yaml: its inventory name is its Kubernetes node name."""

    name: str
    ansible_host: str  # the address Ansible reaches it at (SSH)
    ip: str  # the address the cluster uses
    user: str
    role: str  # "master" | "worker"
    become_password_env: str | None = None  # env variable holding the sudo password, when needed

    def __post_init__(self) -> None:
        _check_node(self.name)
        _check_host("ansible_host", self.ansible_host)
        _check_ip("ip", self.ip)
        if not _USER.match(self.user):
            raise ValueError(f"user {self.user!r} is not a valid login name")
        if self.role not in ("master", "worker"):
            raise ValueError(f"role {self.role!r} must be master or worker")
        if self.become_password_env is not None and not _ENV.match(self.become_password_env):
            raise ValueError(f"{self.become_password_env!r} is not a VNFM_* variable name")


@dataclass(frozen=True)
class KubesprayInventory(NodeStep):
    """On the Ansible server: the cluster's inventory at `inventory_path`. The first time, the
    Kubespray tree's `inventory/sample` is copied there and the directory is marked as `owner`'s;
    a directory that holds another cluster's inventory (another owner's mark, or hosts of an
    inventory nobody marked) is refused and nothing is written. Then `hosts.yaml` (the groups
    Kubespray targets, the hosts, their login), `known_hosts` (the host keys the VNFM pinned) and
    `vnfm-vars.yml` (the cluster's variables; secrets only as env lookups) are written whole.
    data: created (the sample was copied now)."""

    kind: ClassVar[str] = "kubespray-inventory"
    kubespray_root: str
    inventory_path: str
    owner: str
    hosts: tuple[InventoryHost, ...]
    known_hosts: tuple[tuple[str, str], ...]  # (address, "ssh-ed25519 AAAA...")
    pod_cidr: str
    service_cidr: str
    ssl_addresses: tuple[str, ...] = ()  # supplementary_addresses_in_ssl_keys
    mtu: int | None = None
    http_proxy_env: str | None = None  # proxies: names of env variables given at run time
    https_proxy_env: str | None = None
    no_proxy: str = ""
    kube_version: str | None = None  # Kubespray's kube_version (1.x.y, no "v": v2.28 and later)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hosts", tuple(InventoryHost(*h) if isinstance(h, tuple) else h
                                                for h in self.hosts))
        object.__setattr__(self, "known_hosts", tuple(tuple(k) for k in self.known_hosts))
        object.__setattr__(self, "ssl_addresses", tuple(self.ssl_addresses))
        _check_inventory(self.kubespray_root, self.inventory_path)
        _check_name("owner", self.owner)
        names = [h.name for h in self.hosts]
        if len(set(names)) != len(names):
            raise ValueError("a host is listed twice")
        if not any(h.role == "master" for h in self.hosts):
            raise ValueError("the inventory needs a control plane host")
        for addr, key in self.known_hosts:
            _check_host("known host", addr)
            if not _PUBKEY.match(key):
                raise ValueError(f"host key of {addr} is not an OpenSSH public key line")
        for cidr in (self.pod_cidr, self.service_cidr):
            ipaddress.ip_network(cidr)
        for a in self.ssl_addresses:
            _check_host("certificate address", a)
        if self.mtu is not None and not 576 <= self.mtu <= 9216:
            raise ValueError(f"MTU {self.mtu} must be within 576..9216")
        for env in (self.http_proxy_env, self.https_proxy_env):
            if env is not None and not _ENV.match(env):
                raise ValueError(f"{env!r} is not a VNFM_* variable name")
        for item in filter(None, self.no_proxy.split(",")):
            if not _SIMPLE_VALUE.match(item):
                raise ValueError(f"no_proxy entry {item!r} is not a host, address or CIDR")
        if self.kube_version is not None and not KUBE_VERSION.match(self.kube_version):
            raise ValueError(f"kube_version {self.kube_version!r} is not like 1.31.2")

    def groups(self) -> dict[str, list[str]]:
        masters = [h.name for h in self.hosts if h.role == "master"]
        workers = [h.name for h in self.hosts if h.role == "worker"]
        # k8s_cluster is the parent of kube_control_plane, kube_node and calico_rr (hosts.yaml
        # says so with `children`); listed here with the hosts it ends up with
        return {"kube_control_plane": masters, "etcd": list(masters), "kube_node": workers,
                "k8s_cluster": [*masters, *workers], "calico_rr": []}

    def variables(self) -> dict[str, object]:
        """The cluster's variables as Kubespray names them (secrets as env lookups only)."""
        out: dict[str, object] = {"kube_pods_subnet": self.pod_cidr, "kube_service_addresses": self.service_cidr,
                                  "supplementary_addresses_in_ssl_keys": list(self.ssl_addresses)}
        if self.mtu is not None:
            out["calico_mtu"] = self.mtu
        if self.kube_version is not None:
            out["kube_version"] = self.kube_version
        if self.http_proxy_env:
            out["http_proxy"] = env_lookup(self.http_proxy_env)
        if self.https_proxy_env:
            out["https_proxy"] = env_lookup(self.https_proxy_env)
        if self.no_proxy and (self.http_proxy_env or self.https_proxy_env):
            out["additional_no_proxy"] = self.no_proxy
        return out

    def describe(self) -> str:
        return f"{self.kind} {self.inventory_path} [{', '.join(h.name for h in self.hosts)}]"


@dataclass(frozen=True)
class KubesprayCheckInventory(NodeStep):
    """On the Ansible server, before anything is created: the Kubespray tree at `kubespray_root`
    has the entry points of a known release layout (kubespray_tree.LAYOUTS: cluster, scale,
    remove-node and facts playbooks where that release keeps them, inventory/sample/; a tree that
    fits none fails the step naming the known layouts) and `inventory_path` is
    free or `owner`'s own; an inventory of another cluster there (another owner's mark, or a
    hosts.yaml nobody marked) fails the step naming it. Without `claim` nothing is written; with
    it a free path is taken at once (inventory/sample copied there and marked as `owner`'s), so
    that a second cluster given the same path is refused even while the first one is being built.
    data: created (the path was claimed now), layout (the label of the tree's release layout)."""

    kind: ClassVar[str] = "kubespray-inventory-check"
    kubespray_root: str
    inventory_path: str
    owner: str
    claim: bool = False

    def __post_init__(self) -> None:
        _check_inventory(self.kubespray_root, self.inventory_path)
        _check_name("owner", self.owner)

    def describe(self) -> str:
        return f"{self.kind} {self.inventory_path}"


@dataclass(frozen=True)
class KubesprayRemoveHost(NodeStep):
    """On the Ansible server: `node` leaves every group of the owner's hosts.yaml (the file is read
    and written as YAML; other hosts and keys stay) and its known_hosts lines go. A missing node
    is a no-op."""

    kind: ClassVar[str] = "kubespray-inventory-remove-host"
    inventory_path: str
    owner: str
    node: str
    address: str = ""  # its known_hosts entry to drop

    def __post_init__(self) -> None:
        _check_path("inventory path", self.inventory_path)
        _check_name("owner", self.owner)
        _check_node(self.node)
        if self.address:
            _check_host("address", self.address)

    def describe(self) -> str:
        return f"{self.kind} {self.node}"


@dataclass(frozen=True)
class KubesprayRemoveInventory(NodeStep):
    """On the Ansible server: delete the owner's inventory directory, and nothing else (not the
    Kubespray tree, not ~/.ssh). A directory another owner marked is refused; a missing one is a
    no-op."""

    kind: ClassVar[str] = "kubespray-inventory-delete"
    kubespray_root: str
    inventory_path: str
    owner: str

    def __post_init__(self) -> None:
        _check_inventory(self.kubespray_root, self.inventory_path)
        _check_name("owner", self.owner)


@dataclass(frozen=True)
class KubesprayPlaybook(NodeStep):
    """On the Ansible server: run `playbook` (its historic name: where the tree's release layout
    keeps it, kubespray_tree.LAYOUTS) of the Kubespray tree on the owner's inventory, with
    `--limit` when `limit` is given (node names or inventory groups, e.g. Kubespray's documented
    `--limit=etcd,kube_control_plane` of an etcd change) and `extra_vars` (plain, non-secret values). Ansible checks the
    nodes' host keys against the inventory's known_hosts; it logs in with `private_key`, held in an
    ssh-agent for the run only; `env` are secrets the inventory looks up (proxies, sudo passwords).
    remove-node.yml is answered non-interactively. A failed run fails the step naming the playbook,
    the failing task and the end of its output.
    data: seconds (the run's duration), recap {host: {ok, changed, unreachable, failed}}, path (where
    the tree keeps the playbook)."""

    kind: ClassVar[str] = "kubespray-playbook"
    kubespray_root: str
    inventory_path: str
    owner: str
    playbook: str
    limit: tuple[str, ...] = ()
    extra_vars: tuple[tuple[str, str], ...] = ()
    become: bool = False
    private_key: str = field(default="", repr=False)
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    timeout_s: float = 3600.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "limit", tuple(self.limit))
        object.__setattr__(self, "extra_vars", tuple(tuple(v) for v in self.extra_vars))
        object.__setattr__(self, "env", tuple(tuple(v) for v in self.env))
        _check_inventory(self.kubespray_root, self.inventory_path)
        _check_name("owner", self.owner)
        if self.playbook not in PLAYBOOKS:
            raise ValueError(f"playbook {self.playbook!r} is not one of {', '.join(PLAYBOOKS)}")
        for n in self.limit:  # node names, or groups of the inventory (Kubespray's documented limits)
            if n not in GROUPS:
                _check_node(n)
        for k, v in self.extra_vars:
            if not _VAR.match(k) or not _SIMPLE_VALUE.match(v):
                raise ValueError(f"extra variable {k!r} (or its value) is not a plain name=value")
            if k == "kube_version" and not KUBE_VERSION.match(v):
                raise ValueError(f"kube_version {v!r} is not like 1.31.2")
        for k, _ in self.env:
            if not _ENV.match(k):
                raise ValueError(f"{k!r} is not a VNFM_* variable name")
        if self.private_key and "PRIVATE KEY" not in self.private_key:
            raise ValueError("private_key must be an OpenSSH or PEM private key")
        if not 1 <= self.timeout_s <= 86400:
            raise ValueError("timeout_s must be within 1..86400")

    def var(self, name: str) -> str | None:
        return next((v for k, v in self.extra_vars if k == name), None)

    def describe(self) -> str:
        limit = f" --limit {','.join(self.limit)}" if self.limit else ""
        extra = "".join(f" -e {k}={v}" for k, v in self.extra_vars)
        return f"{self.kind} {self.playbook}{limit}{extra}"


@dataclass(frozen=True)
class AuthorizedKey(NodeStep):
    """On a node: own one marked line of the login user's ~/.ssh/authorized_keys: exactly
    `public_key` (the key Ansible logs in with), or no line when it is empty. Other lines stay."""

    kind: ClassVar[str] = "ssh-authorized-key"
    marker: str
    public_key: str = ""

    def __post_init__(self) -> None:
        _check_name("marker", self.marker)
        if self.public_key and not _PUBKEY.match(self.public_key):
            raise ValueError("public_key is not an OpenSSH public key line (type and base64)")

    def describe(self) -> str:
        return f"{self.kind} {self.marker} {'set' if self.public_key else 'removed'}"


@dataclass(frozen=True)
class ReadKubeconfig(NodeStep):
    """On a control plane: its admin kubeconfig. data: kubeconfig (secret)."""

    kind: ClassVar[str] = "k8s-read-kubeconfig"
    path: str = "/etc/kubernetes/admin.conf"

    def __post_init__(self) -> None:
        _check_path("kubeconfig path", self.path)


@dataclass(frozen=True)
class InstallKubeconfig(NodeStep):
    """On the external load balancer: the admin kubeconfig with its server set to `server`, at
    `path` and as the login user's ~/.kube/config (mode 0600), and kubectl, so that the load
    balancer is the cluster's kubectl jump host."""

    kind: ClassVar[str] = "k8s-install-kubeconfig"
    kubeconfig: str = field(repr=False)
    server: str
    path: str = "/etc/kubernetes/admin.conf"

    def __post_init__(self) -> None:
        _check_path("kubeconfig path", self.path)
        m = re.match(r"^https://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$", self.server)
        if not m or not 0 < int(m.group(2)) < 65536:
            raise ValueError(f"server {self.server!r} is not an https://host:port URL")
        if "apiVersion" not in self.kubeconfig or "clusters" not in self.kubeconfig:
            raise ValueError("kubeconfig is not a kubeconfig document")

    def describe(self) -> str:
        return f"{self.kind} {self.server}"
