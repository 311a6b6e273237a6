"""One hook's view of a Kubespray cluster: the shared cluster topology (masters, workers), the
external load balancer VNFC, the operator's Ansible server (a host outside the VNF), and what the
driver asks of them: the inventory, playbook runs with progress, the per-run SSH key.

Node credentials for Ansible: every hook that runs playbooks generates a fresh ed25519 key in
memory, authorises its public half on the nodes through the VNFM's own login (a marked line of
authorized_keys), hands the private half to an ssh-agent on the Ansible server over stdin for each
run, and removes the line again when the hook ends. No private key or password is ever stored on
the Ansible server, the load balancer or in the VNFM's database.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from vnfm.adapters.mgmt.cluster.topology import Cluster, Node, address, gather, login, open_cluster, role_vdus
from vnfm.adapters.mgmt.kubespray import params as K
from vnfm.domain.errors import OperationFailed
from vnfm.nodesteps.base import StepExecutor, StepFailed
from vnfm.nodesteps.kubernetes import node_name
from vnfm.nodesteps.kubespray import (
    AuthorizedKey,
    InventoryHost,
    KubesprayInventory,
    KubesprayPlaybook,
    KubesprayRemoveHost,
)
from vnfm.service.ports import LcmContext, NodeHost, NodeLogin

LB_API_PORT = 8383
API_PORT = 6443
LB_OWNER = "cluster"


@dataclass(frozen=True)
class RunKey:
    private: str = field(repr=False)
    public: str

    @staticmethod
    def generate() -> RunKey:
        key = Ed25519PrivateKey.generate()
        private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                    serialization.NoEncryption()).decode()
        public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                               serialization.PublicFormat.OpenSSH).decode()
        return RunKey(private, public)


class Site:
    """The cluster of one hook, its load balancer and its Ansible server, on one node session."""

    def __init__(self, c: Cluster, kp: K.KubesprayParams, lb: Node | None) -> None:
        self.c = c
        self.kp = kp
        self.lb = lb
        self.ansible = kp.ansible.ip_address
        self.key: RunKey | None = None

    @property
    def ctx(self) -> LcmContext:
        return self.c.ctx

    @property
    def owner(self) -> str:
        return self.ctx.instance.id

    @property
    def marker(self) -> str:
        return f"vnfm-kubespray-{self.owner}"[:63]

    @property
    def lb_node(self) -> Node:
        if self.lb is None:
            raise OperationFailed(f"{K.ROOT}.external_lb_param.ssh_cp_name: no VNFC of this VNF has "
                                  f"'{self.kp.lb.ssh_cp_name}' (the external load balancer is missing)")
        return self.lb

    @property
    def api_url(self) -> str:
        return f"https://{self.lb_node.ssh}:{LB_API_PORT}"

    async def close(self) -> None:
        await self.c.close()

    # ------------------------------------------------------------------ the inventory
    def _env(self) -> list[tuple[str, str]]:
        env: list[tuple[str, str]] = []
        px = self.kp.cluster.proxy
        if px.http_proxy:
            env.append(("VNFM_HTTP_PROXY", px.http_proxy))
        if px.https_proxy:
            env.append(("VNFM_HTTPS_PROXY", px.https_proxy))  # https_proxy from https_proxy
        for role, p in (("MASTER", self.kp.cluster.master), ("WORKER", self.kp.cluster.worker)):
            if p.username != "root" and p.password:
                env.append((f"VNFM_BECOME_PASSWORD_{role}", p.password))
        return env

    def inventory(self, nodes: Sequence[Node]) -> KubesprayInventory:
        cp = self.kp.cluster
        pins = self.ctx.state.get("host_keys") or {}
        hosts = []
        for n in nodes:
            p = cp.master if n.master else cp.worker
            become = f"VNFM_BECOME_PASSWORD_{n.role.upper()}" if p.username != "root" and p.password else None
            hosts.append(InventoryHost(n.name, n.ssh, n.nic, p.username, n.role, become))
        known = tuple((n.ssh, str(pins[n.vnfc.id])) for n in nodes if pins.get(n.vnfc.id))
        lb = self.lb_node
        px = cp.proxy
        return KubesprayInventory(
            self.kp.ansible.kubespray_root_path, self.kp.ansible.transferring_inventory_path, self.owner,
            tuple(hosts), known, cp.master.pod_cidr, cp.master.cluster_cidr,
            ssl_addresses=tuple(dict.fromkeys([lb.ssh, lb.nic])), mtu=self.kp.ansible.mtu,
            http_proxy_env="VNFM_HTTP_PROXY" if px.http_proxy else None,
            https_proxy_env="VNFM_HTTPS_PROXY" if px.https_proxy else None,
            no_proxy=",".join(px.no_proxy), kube_version=self.kp.kubernetes_version)

    async def write_inventory(self, nodes: Sequence[Node]) -> None:
        place = [self.ansible, self.kp.ansible.transferring_inventory_path]
        places = self.ctx.state.setdefault("inventories", [])
        if place not in places:  # recorded first: terminate removes what a failed write left
            places.append(place)
        res = await self.c.ex.run(self.ansible, self.inventory(nodes))
        if res.data.get("created"):
            self.ctx.progress(f"kubespray: inventory {self.kp.ansible.transferring_inventory_path} created on "
                              f"the Ansible server {self.ansible} from {self.kp.ansible.kubespray_root_path}"
                              "/inventory/sample")

    async def remove_from_inventory(self, n: Node) -> None:
        await self.c.ex.run(self.ansible, KubesprayRemoveHost(self.kp.ansible.transferring_inventory_path,
                                                              self.owner, n.name, n.ssh))

    # ------------------------------------------------------------------ runs
    @contextlib.asynccontextmanager
    async def authorized(self, nodes: Sequence[Node]) -> AsyncIterator[None]:
        """A fresh key Ansible may log in to `nodes` with, for the duration of the block."""
        key = RunKey.generate()
        await gather([self.c.ex.run(n.ssh, AuthorizedKey(self.marker, key.public)) for n in nodes])
        self.key = key
        try:
            yield
        finally:
            self.key = None
            for n in nodes:  # best effort: a node may have died meanwhile; the next run replaces the line
                with contextlib.suppress(Exception):
                    await self.c.ex.run(n.ssh, AuthorizedKey(self.marker, ""))

    async def playbook(self, playbook: str, limit: Sequence[str] = (), extra: Sequence[tuple[str, str]] = (),
                       hosts: Sequence[str] = ()) -> None:
        """Run one playbook; its progress names the playbook, the hosts and the duration."""
        if self.key is None:
            raise OperationFailed("internal: a playbook runs inside `authorized`")
        cp = self.kp.cluster
        become = any(p.username != "root" for p in (cp.master, cp.worker))
        step = KubesprayPlaybook(self.kp.ansible.kubespray_root_path, self.kp.ansible.transferring_inventory_path,
                                 self.owner, playbook, tuple(limit), tuple(extra), become,
                                 private_key=self.key.private, env=tuple(self._env()),
                                 timeout_s=self.kp.ansible.playbook_timeout)
        what = playbook + (f" --limit {','.join(limit)}" if limit else "")
        what += "".join(f" -e {k}={v}" for k, v in extra)
        on = ", ".join(hosts or limit) or "every host of the inventory"  # hosts: what a group limit names
        self.ctx.progress(f"kubespray: {what} started on the Ansible server {self.ansible} (hosts: {on})")
        t0 = time.monotonic()
        try:
            await self.c.ex.run(self.ansible, step)
        except StepFailed as e:
            raise OperationFailed(f"kubespray {what} failed after {time.monotonic() - t0:.1f}s "
                                  f"(hosts: {on}): {e.reason}", playbook=playbook) from None
        self.ctx.progress(f"kubespray: {what} finished in {time.monotonic() - t0:.1f}s (hosts: {on})")

    async def reachable(self, n: Node) -> bool:
        """Whether the VNFM reaches `n` over SSH now (a changed host key is not "unreachable")."""
        try:
            await self.c.ex.verify_host_keys([n.ssh])
        except StepFailed:
            return False
        except OperationFailed as e:
            if "host key" in e.detail and "changed" in e.detail:
                raise
            return False
        return True


# ============================================================================= opening
def params(ctx: LcmContext) -> K.KubesprayParams:
    """This operation's parameters as the engine parsed them for the hooks (instantiate's, or the
    stored ones with a scale/heal request's whole dicts; validated when the request arrived)."""
    root = ctx.params
    if not isinstance(root, K.KubesprayRoot):
        raise OperationFailed(f"{K.ROOT}: the engine handed this hook no Kubespray parameters")
    for w in root.params.cluster.warnings:
        ctx.progress(w)
    return root.params


def lb_vdu(ctx: LcmContext, kp: K.KubesprayParams) -> str | None:
    """The VDU of the external load balancer: the VDU of the CP `ssh_cp_name`, or of a floating IP
    named `<VDU or CP>_FloatingIP`."""
    name = kp.lb.ssh_cp_name
    cps, vdus = ctx.flavour.cps, ctx.flavour.vdus
    if name in cps:
        return cps[name].vdu_id
    prefix = name[: -len("_FloatingIP")] if name.endswith("_FloatingIP") else None
    if prefix in vdus:
        return prefix
    if prefix in cps:
        return cps[prefix].vdu_id
    return None


def find_lb(ctx: LcmContext, kp: K.KubesprayParams) -> Node | None:
    masters, workers = role_vdus(ctx.flavour, kp.cluster)
    name = kp.lb.ssh_cp_name
    vdu = lb_vdu(ctx, kp)
    for v in sorted(ctx.resources.vnfcs, key=lambda v: v.seq):
        if v.vdu_id in masters | workers:
            continue
        if v.vdu_id == vdu or (vdu is None and (v.cp(name) or (v.metadata.get("floating_ip_resources") or {})
                                                 .get(name))):
            ssh = address(v, name, floating=True, what="external_lb_param.ssh_cp_name")
            fixed = [a for cp in v.cps for a in cp.ip_addresses]
            return Node(v, "lb", node_name(v.name or v.id), ssh, fixed[0] if fixed else ssh)
    return None


def open_site(ctx: LcmContext) -> Site:
    kp = params(ctx)
    lb = find_lb(ctx, kp)
    a, e = kp.ansible, kp.lb
    extra = [NodeHost(a.ip_address, NodeLogin(a.username, a.password, a.ssh_private_key))]
    if lb is not None:
        extra.append(NodeHost(lb.ssh, NodeLogin(e.ssh_username, e.ssh_password, e.ssh_private_key), lb.vnfc.id))
    c = open_cluster(ctx, extra_hosts=extra, cp=kp.cluster)
    return Site(c, kp, lb)


def ansible_session(ctx: LcmContext, addresses: Sequence[str]) -> StepExecutor:
    """A session to Ansible server(s) only (no VNFC), with this operation's Ansible login."""
    if ctx.nodes is None:
        raise OperationFailed("no node access is available for this instance's VIM")
    a = params(ctx).ansible
    login_ = NodeLogin(a.username, a.password, a.ssh_private_key)
    return ctx.nodes.session(ctx.instance.id, [NodeHost(ip, login_) for ip in dict.fromkeys(addresses)],
                             ctx.state.setdefault("host_keys", {}))


def forget_vnfc_pins(ctx: LcmContext) -> None:
    """Heal entire replaces every VM: their pinned keys go; hosts outside the VNF (the Ansible
    server, pinned as "host:<address>") keep theirs."""
    pins = ctx.state.get("host_keys") or {}
    ctx.state["host_keys"] = {k: v for k, v in pins.items() if k.startswith("host:")}


def node_login(kp: K.KubesprayParams, n: Node) -> NodeLogin:
    return login(kp.cluster, n)
