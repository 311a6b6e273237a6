"""Workers joining and leaving a Kubespray cluster (scale out/in, heal of a worker).

Joining: only the new nodes are processed: the inventory gains them, facts.yml refreshes the facts
of every node (Kubespray's rule before a limited run), then scale.yml --limit <new nodes>.
Leaving: drained through the LB's kubectl, remove-node.yml -e node=<name> answered
non-interactively, the run key authorised on every host the run reaches (its facts play targets
every host; ungraceful when the node does not answer: its VM may be dead), then the node leaves the
inventory (edited as YAML) and the LB's NodePort pool.
"""

from __future__ import annotations

from collections.abc import Sequence

from vnfm.adapters.mgmt.cluster.topology import Node, gather, pin
from vnfm.adapters.mgmt.kubespray import lb
from vnfm.adapters.mgmt.kubespray.site import Site
from vnfm.domain.errors import OperationFailed
from vnfm.nodesteps.kubernetes import DeleteNode, DrainNode

# remove-node.yml's confirmation answered: skip_confirmation since v2.17, the vars_prompt
# delete_nodes_confirmation of v2.16
CONFIRM = (("skip_confirmation", "yes"), ("delete_nodes_confirmation", "yes"))


def workers_only(nodes: Sequence[Node], what: str) -> None:
    masters = [n.name for n in nodes if n.master]
    if masters:
        raise OperationFailed(f"{what} would change control plane node(s) {', '.join(masters)}: the Kubespray "
                              "driver scales and heals workers only (heal the entire VNF to rebuild the cluster)")


async def answering(s: Site, nodes: Sequence[Node]) -> dict[str, bool]:
    """Whether each of `nodes` answers over SSH now (by VNFC id), asked in parallel."""
    return dict(zip([n.vnfc.id for n in nodes], await gather([s.reachable(n) for n in nodes]), strict=True))


def refuse_silent(nodes: Sequence[Node], answers: dict[str, bool], playbook: str) -> None:
    """A playbook that gathers the facts of every host would fail UNREACHABLE on a node that does
    not answer: the operation fails first, naming them, before any playbook runs."""
    silent = [n.name for n in nodes if not answers[n.vnfc.id]]
    if silent:
        raise OperationFailed(f"node(s) {', '.join(silent)} of the cluster do not answer over SSH (their VMs may be "
                              f"down) and Kubespray's {playbook} gathers the facts of every host: heal them first "
                              "(or name them in the same heal request); no playbook was run")


async def add_workers(s: Site, added: Sequence[Node]) -> None:
    c = s.c
    workers_only(added, "adding nodes")
    if added:
        new = {n.vnfc.id for n in added}
        existing = [n for n in c.nodes if n.vnfc.id not in new]
        refuse_silent(existing, await answering(s, existing), "facts.yml")
    await pin(c, [*c.nodes, s.lb_node], repin=added)
    await c.ex.verify_host_keys([s.ansible])
    if added:
        await s.write_inventory(c.nodes)
        async with s.authorized(c.nodes):
            await s.playbook("facts.yml", hosts=[n.name for n in c.nodes])
            await s.playbook("scale.yml", limit=[n.name for n in added])
        c.ctx.progress(f"node(s) {', '.join(n.name for n in added)} joined the cluster")
    await lb.set_frontends(s)


async def remove_workers(s: Site, removed: Sequence[Node]) -> None:
    """Each of `removed` leaves the cluster, the inventory and the LB (an unreachable one too).

    remove-node.yml gathers the facts of every host of the inventory (since Kubespray v2.18) and
    resets the node, unless the removal is ungraceful (reset_nodes=false: then only the first
    control plane is reached): so every other host must answer. A removed node whose VM does not
    answer goes first, ungracefully (it then leaves the inventory, and later facts runs skip it);
    another host that does not answer fails the operation before anything changed, naming it."""
    c = s.c
    workers_only(removed, "removing nodes")
    if not removed:
        return
    gone = {n.vnfc.id for n in removed}
    survivors = [n for n in c.nodes if n.vnfc.id not in gone]
    await pin(c, [*c.masters, s.lb_node])
    await c.ex.verify_host_keys([s.ansible])
    answers = await answering(s, c.nodes)
    refuse_silent(survivors, answers, "remove-node.yml")  # before the drain: nothing changed yet
    lb_host = s.lb_node.ssh
    # the inventory of the nodes as they are now: this operation's Ansible server may be another
    # one (a request's `ansible` override) or lack a node a failed run left out
    await s.write_inventory(c.nodes)
    left = {n.vnfc.id for n in c.nodes}
    for n in sorted(removed, key=lambda n: answers[n.vnfc.id]):  # the dead ones first
        reachable = answers[n.vnfc.id]
        if reachable:
            c.ctx.progress(f"draining node {n.name} through the LB's kubectl")
            await c.ex.run(lb_host, DrainNode(n.name, c.p.drain_timeout))
            extra = [("node", n.name), *CONFIRM]
            reached = [m for m in c.nodes if m.vnfc.id in left]  # facts of every host, the node reset
        else:  # a drain would wait for pods a dead kubelet never stops: deleting the node moves them
            c.ctx.progress(f"node {n.name}: its VM does not answer: ungraceful removal (reset_nodes=false: no drain, "
                           "no reset, no facts gathered; its pods are rescheduled when the node is deleted)")
            extra = [("node", n.name), *CONFIRM, ("reset_nodes", "false"), ("allow_ungraceful_removal", "true")]
            reached = list(c.masters)  # the node is deleted through the first control plane
        async with s.authorized(reached):
            await s.playbook("remove-node.yml", extra=extra, hosts=[n.name])
        await s.remove_from_inventory(n)
        left.discard(n.vnfc.id)
        await c.ex.run(lb_host, DeleteNode(n.name))
    await lb.set_frontends(s, survivors)
