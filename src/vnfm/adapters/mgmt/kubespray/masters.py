"""Control planes joining and leaving a Kubespray cluster (scale of the master aspect), one at a
time, as Kubespray's docs/operations/nodes.md does it for a host that is both a control plane and
an etcd member (vnfm's inventory puts every master in `kube_control_plane` and `etcd`):

- joining, per new master (appended to `kube_control_plane` and `etcd`, never first): facts.yml,
  `cluster.yml --limit etcd,kube_control_plane -e ignore_assert_errors=yes` ("Adding an etcd
  node": scale.yml cannot add a control plane), then `upgrade-cluster.yml` with the same limit
  and variable ("necessary to update all etcd configuration in the cluster"); etcd then has
  exactly the masters so far, all healthy, and the external LB's API frontend lists them. After
  the last one, `cluster.yml --limit kube_node` rewrites the workers' localhost API proxy
  (nginx-proxy) with the new control planes; its static pod carries the configuration's checksum
  (every release vnfm supports), so the kubelet restarts it.
- leaving, per removed master (never the first of `kube_control_plane`, which Kubespray cannot
  remove): the LB's API frontend drops it first (the VIM keeps answering through the others), a
  drain through the LB's kubectl, `remove-node.yml -e node=<name>` (ungraceful when its VM does not
  answer), the host leaves the inventory, then `cluster.yml` regenerates the etcd and API proxy
  configuration of the remaining nodes ("Removing an etcd node", step 3); etcd then has exactly the
  remaining masters, all healthy.
An even etcd count in between (1 -> 2 -> 3) needs `-e ignore_assert_errors=yes` (Kubespray stops on
an even number of etcd hosts otherwise); the final count is odd (checked at request time).

Before anything changes, the quorum rules (domain/etcd_quorum.py) are checked against etcd as it
is now (members and each one's health, read through the first master with Kubespray's etcd
admin certificate); what was seen is kept in the driver state (`etcd`) for the request-time checks
of the next operation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from vnfm.adapters.mgmt.cluster.topology import Node, pin
from vnfm.adapters.mgmt.kubespray import lb
from vnfm.adapters.mgmt.kubespray.nodes import CONFIRM, answering, refuse_silent
from vnfm.adapters.mgmt.kubespray.site import Site
from vnfm.adapters.mgmt.kubespray.upgrade import etcd_tls
from vnfm.domain import etcd_quorum
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.etcd import EtcdHealth, EtcdMemberList
from vnfm.nodesteps.kubernetes import DeleteNode, DrainNode

ETCD_LIMIT = ("etcd", "kube_control_plane")  # docs/operations/nodes.md, "Adding an etcd node"
IGNORE_ASSERTS = ("ignore_assert_errors", "yes")
LOCAL_ETCD = ("https://127.0.0.1:2379",)  # Kubespray's etcd also listens there
HEALTH_WAIT_S = 60.0  # a new or remaining member healthy within this


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _client_url(peer_url: str) -> str:
    return peer_url.replace(":2380", ":2379")


def _asserts(n_masters: int) -> list[tuple[str, str]]:
    """Kubespray's "Stop if even number of etcd hosts" is skipped this way (an intermediate size)."""
    return [IGNORE_ASSERTS] if n_masters % 2 == 0 else []


def version_vars(s: Site) -> list[tuple[str, str]]:
    """The version the cluster runs (the VIM's record after an upgrade, else the instantiate
    parameter): upgrade-cluster.yml must not move it. None known: the release's default, which
    is what such a cluster runs."""
    vims, vim_id = s.ctx.vims, s.ctx.state.get("vim_id")
    vim = vims.get(vim_id) if vims is not None and vim_id else None
    v = (vim.extra.get("kubernetes_version") if vim is not None else None) or s.kp.kubernetes_version
    return [("kube_version", str(v))] if v else []


async def etcd_view(s: Site, via: Node, masters: Sequence[Node], wait_s: float = 0.0) -> tuple[list[str], set[str]]:
    """(members, unhealthy): etcd's members as node names (a member whose peer address is no master
    of this VNF keeps its etcd name) and those whose endpoint does not answer healthy, read through
    `via`; also kept in the driver state for the request-time checks."""
    tls = etcd_tls(via)
    try:
        raw = (await s.c.ex.run(via.ssh, EtcdMemberList(endpoints=LOCAL_ETCD, tls=tls))).data["members"]
    except StepFailed as e:
        raise OperationFailed(f"etcd's members could not be read through {via.name}: {e.reason}") from None
    by_addr = {m.nic.lower(): m.name for m in masters}
    members: list[str] = []
    urls: dict[str, str] = {}
    for m in raw:
        peer = next(iter(m.get("peer_urls") or []), "")
        name = by_addr.get(_host(peer)) or str(m.get("name") or peer or m.get("id"))
        members.append(name)
        if peer:
            urls[name] = _client_url(peer)
    health = (await s.c.ex.run(via.ssh, EtcdHealth(endpoints=tuple(urls.values()) or LOCAL_ETCD, tls=tls,
                                                   wait_s=wait_s))).data
    per = health.get("endpoints") or {}
    unhealthy = {n for n in members if not per.get(urls.get(n, ""), False)}
    s.ctx.state["etcd"] = {"members": members, "unhealthy": sorted(unhealthy)}
    return members, unhealthy


async def check_members(s: Site, via: Node, masters: Sequence[Node], want: Sequence[str]) -> None:
    """etcd has exactly the members `want` (node names), every one healthy (waiting up to HEALTH_WAIT_S)."""
    members, unhealthy = await etcd_view(s, via, masters, HEALTH_WAIT_S)
    if sorted(members) != sorted(want):
        raise OperationFailed(f"etcd has members {', '.join(sorted(members))}, expected {', '.join(sorted(want))}")
    if unhealthy:
        raise OperationFailed(f"etcd member(s) {', '.join(sorted(unhealthy))} not healthy after "
                              f"{HEALTH_WAIT_S:.0f}s")


def _quorum(what: str, fn: Callable[[], object]) -> None:
    """A quorum rule broken at run time fails the operation (nothing was changed yet)."""
    try:
        fn()
    except UnprocessableEntity as e:
        raise OperationFailed(f"{what}: {e.detail} (as etcd is now; nothing was changed)") from None


def _moment(s: Site, masters: Sequence[Node], workers: Sequence[Node]) -> str:
    n = len(masters)
    return (f"{n} control plane(s) behind the external LB {s.lb_node.ssh}, etcd {n} member(s) "
            f"(quorum {etcd_quorum.quorum(n)}, tolerates {etcd_quorum.tolerated(n)} failure(s)); "
            f"{len(workers)} worker(s)")


async def add_masters(s: Site, added: Sequence[Node]) -> None:
    """`added` join the control plane and etcd, one at a time (those already healthy members are
    kept: a retry, or the rollback of a scale-in that had not removed them)."""
    c = s.c
    workers = c.workers
    existing = [n for n in c.nodes if n.vnfc.id not in {m.vnfc.id for m in added}]
    if not any(n.master for n in existing):
        raise OperationFailed("no control plane to add masters to (heal the entire VNF)")
    first = next(n for n in existing if n.master)
    refuse_silent(existing, await answering(s, existing), "cluster.yml")
    await pin(c, [*c.nodes, s.lb_node], repin=added)
    await c.ex.verify_host_keys([s.ansible])
    members, unhealthy = await etcd_view(s, first, c.masters)
    pending = sorted((m for m in added if m.name not in members or m.name in unhealthy), key=lambda n: n.vnfc.seq)
    if not pending:
        await lb.set_frontends(s)
        return
    _quorum("adding control planes", lambda: etcd_quorum.check_add(
        [x for x in members if x not in {m.name for m in pending}], unhealthy, len(pending)))
    joined = [m for m in c.masters if m not in pending]
    version = version_vars(s)
    if any(m.name in members for m in added):  # a run stopped half-way: every member's etcd configuration first
        await resync(s, joined, workers)
    want = set(members)
    for m in pending:
        now = [*joined, m]
        await s.write_inventory([*now, *workers])
        async with s.authorized([*now, *workers]):
            await s.playbook("facts.yml", extra=_asserts(len(now)), hosts=[n.name for n in [*now, *workers]])
            # as the guide gives them, whatever the count
            await s.playbook("cluster.yml", limit=ETCD_LIMIT, extra=[IGNORE_ASSERTS], hosts=[n.name for n in now])
            await s.playbook("upgrade-cluster.yml", limit=ETCD_LIMIT, extra=[IGNORE_ASSERTS, *version],
                             hosts=[n.name for n in now])
        want.add(m.name)
        await check_members(s, first, c.masters, sorted(want))
        joined = now
        await lb.set_frontends(s, [*joined, *workers])
        c.ctx.progress(f"control plane {m.name} joined: {_moment(s, joined, workers)}")
    await s.write_inventory(c.nodes)
    if workers:  # their localhost API proxy lists the control planes of its last run
        async with s.authorized(c.nodes):
            await s.playbook("facts.yml", hosts=[n.name for n in c.nodes])
            await s.playbook("cluster.yml", limit=("kube_node",), hosts=[n.name for n in workers])
    await lb.set_frontends(s)


async def resync(s: Site, members: Sequence[Node], workers: Sequence[Node]) -> None:
    """After a change that stopped half-way (a cluster.yml that added a member, not followed by its
    upgrade-cluster.yml): the etcd configuration of every member brought up to date, with an
    inventory of the members (and the workers) only."""
    await s.write_inventory([*members, *workers])
    async with s.authorized([*members, *workers]):
        await s.playbook("facts.yml", extra=_asserts(len(members)), hosts=[n.name for n in [*members, *workers]])
        await s.playbook("upgrade-cluster.yml", limit=ETCD_LIMIT, extra=[IGNORE_ASSERTS, *version_vars(s)],
                         hosts=[n.name for n in members])
    s.ctx.progress(f"etcd configuration of {', '.join(n.name for n in members)} brought up to date (a previous "
                   "run had stopped half-way)")


def removal_plan(s: Site, removed: Sequence[Node], members: Sequence[str], unhealthy: set[str],
                 answers: dict[str, bool]) -> list[Node]:
    """The order the masters leave in (unhealthy first), or OperationFailed with the numbers."""
    first = s.c.masters[0]
    if first.vnfc.id in {n.vnfc.id for n in removed}:
        raise OperationFailed(f"{first.name} is the first host of kube_control_plane, which Kubespray cannot remove "
                              "(docs/operations/nodes.md); scale in the other masters")
    lost = unhealthy | {n.name for n in removed if not answers[n.vnfc.id]}
    in_etcd = [n.name for n in sorted(removed, key=lambda n: -n.vnfc.seq) if n.name in members]  # newest first
    order: list[str] = []
    _quorum("removing control planes", lambda: order.extend(etcd_quorum.removal_order(members, lost, in_etcd)))
    by_name = {n.name: n for n in removed}
    return [*(n for n in removed if n.name not in members), *(by_name[x] for x in order)]


async def remove_masters(s: Site, removed: Sequence[Node]) -> None:
    c = s.c
    gone = {n.vnfc.id for n in removed}
    survivors = [n for n in c.nodes if n.vnfc.id not in gone]
    first = c.masters[0]
    await pin(c, [*c.masters, s.lb_node])
    await c.ex.verify_host_keys([s.ansible])
    answers = await answering(s, c.nodes)
    refuse_silent(survivors, answers, "remove-node.yml")
    members, unhealthy = await etcd_view(s, first, c.masters)
    plan = removal_plan(s, removed, members, unhealthy, answers)
    if s.ctx.rollback and any(n.name in members for n in removed):  # undoing a scale-out that may have stopped
        await resync(s, [m for m in c.masters if m.name in members], [n for n in survivors if not n.master])
    await s.write_inventory(c.nodes)
    left = list(c.nodes)
    lb_host = s.lb_node.ssh
    for n in plan:
        left = [x for x in left if x.vnfc.id != n.vnfc.id]
        masters_left = [x for x in left if x.master]
        await lb.set_frontends(s, left)  # the API frontend without it before it goes
        in_inventory = len(masters_left) + 1
        if answers[n.vnfc.id]:
            c.ctx.progress(f"draining control plane {n.name} through the LB's kubectl")
            await c.ex.run(lb_host, DrainNode(n.name, c.p.drain_timeout))
            extra = [("node", n.name), *CONFIRM, *_asserts(in_inventory)]
            reached = [*left, n]
        else:
            c.ctx.progress(f"control plane {n.name}: its VM does not answer: ungraceful removal (reset_nodes=false)")
            extra = [("node", n.name), *CONFIRM, ("reset_nodes", "false"), ("allow_ungraceful_removal", "true"),
                     *_asserts(in_inventory)]
            reached = [first]
        async with s.authorized(reached):
            await s.playbook("remove-node.yml", extra=extra, hosts=[n.name])
        await s.remove_from_inventory(n)
        await c.ex.run(lb_host, DeleteNode(n.name))
        async with s.authorized(left):  # the etcd and API proxy configuration of the remaining nodes
            await s.playbook("cluster.yml", extra=_asserts(len(masters_left)), hosts=[x.name for x in left])
        await check_members(s, first, c.masters, [x.name for x in masters_left])
        c.ctx.progress(f"control plane {n.name} removed: {_moment(s, masters_left, [x for x in left if not x.master])}")
    await lb.set_frontends(s, survivors)
