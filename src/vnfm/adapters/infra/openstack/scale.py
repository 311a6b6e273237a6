"""Scale in by name: the members named in `remove` are marked unhealthy, then the stack is updated
with the smaller capacity. Heat removes failed members first, so exactly those go (checked
afterwards)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from vnfm.adapters.infra.openstack.cloud import Cloud
from vnfm.adapters.infra.openstack.hot import BaseHot
from vnfm.adapters.infra.openstack.tree import Tree
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.resources import VnfResources
from vnfm.service.ports import InfraContext


def removals(
    ctx: InfraContext, hot: BaseHot, tree: Tree, full: dict[str, int], remove: Sequence[str]
) -> list[str]:
    """The VNFCs of `remove` that still exist; refuses when they are not exactly what the new
    counts remove from each VDU."""
    present = tree.by_id()
    to_remove = [i for i in dict.fromkeys(remove) if i in present]
    gone = [i for i in dict.fromkeys(remove) if i not in present]
    if gone:
        ctx.progress(f"VNFC(s) {', '.join(gone)} already removed")
    for vdu_id in ctx.flavour.vdus:
        cur = [m for m in tree.members if m.vdu_id == vdu_id]
        rm = [i for i in to_remove if present[i].vdu_id == vdu_id]
        shrink = len(cur) - full[vdu_id]
        if max(shrink, 0) != len(rm):
            raise UnprocessableEntity(
                f"VDU {vdu_id}: going from {len(cur)} to {full[vdu_id]} VNFCs removes {max(shrink, 0)}, "
                f"but `remove` names {len(rm)} of its VNFCs ({', '.join(rm) or 'none'})"
            )
        if rm and hot.group_of_vdu(vdu_id) is None:
            raise UnprocessableEntity(f"VDU {vdu_id} is a single server of the top template: it cannot scale")
    return to_remove


async def mark_removals(ctx: InfraContext, cloud: Cloud, tree: Tree, to_remove: Sequence[str]) -> None:
    present = tree.by_id()
    for vid in to_remove:
        m = present[vid]
        ctx.progress(f"marking VNFC {vid} ({m.group}/{m.member_name}) unhealthy so that Heat removes it")
        await asyncio.to_thread(
            cloud.mark_unhealthy, m.holder_stack_id, m.member_name, f"vnfm: scale in removes VNFC {vid}"
        )


def check_removed(after: VnfResources, to_remove: Sequence[str]) -> None:
    left = [i for i in to_remove if after.by_id(i) is not None]
    if left:
        raise OperationFailed(f"Heat kept VNFC(s) {', '.join(left)} that scale in was to remove")
