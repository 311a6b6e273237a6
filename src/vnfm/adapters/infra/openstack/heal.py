"""Heal by replacing servers in place: the server resource inside the member stack is marked
unhealthy (its volumes too when storage is not kept), then the stack is updated. Heat replaces the
server and keeps the port, so the VNFC keeps its id, port and addresses. A kept volume is detached
from the old server first (Heat creates the replacement before it deletes the old server, and an
in-use volume cannot be attached twice), then the new server attaches it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from vnfm.adapters.infra.openstack.cloud import Cloud
from vnfm.adapters.infra.openstack.hot import VOLUME_TYPE
from vnfm.adapters.infra.openstack.tree import Tree, server_of
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.resources import VnfResources
from vnfm.service.ports import InfraContext


async def mark_for_heal(
    ctx: InfraContext, cloud: Cloud, tree: Tree, ids: Sequence[str], *, keep_storage: bool, timeout: float
) -> dict[str, str]:
    """Mark the servers of `ids` (and their volumes unless kept) unhealthy, detaching kept volumes
    first. Returns VNFC id -> the server it had."""
    present = tree.by_id()
    unknown = [i for i in ids if i not in present]
    if unknown:
        raise UnprocessableEntity(
            f"VNFC instance(s) {', '.join(unknown)} do not exist in VNF instance {ctx.instance_id}"
        )
    before = {i: server_of(present[i]) for i in ids}
    for vid in ids:
        m = present[vid]
        storages = ctx.flavour.vdus[m.vdu_id].storages
        volumes = [r for r in m.resources if r.get("resource_type") == VOLUME_TYPE and r["resource_name"] in storages]
        server_id = before[vid]
        if keep_storage and server_id:
            # Heat creates the replacement server before it deletes the old one: a volume the
            # old server still holds (in-use) cannot be attached to the new one. Detach first.
            for vol_id in [str(r["physical_resource_id"]) for r in volumes if r.get("physical_resource_id")]:
                ctx.progress(f"detaching volume {vol_id} from server {server_id} (kept for the new server)")
                await asyncio.to_thread(cloud.detach_volume, server_id, vol_id, timeout)
        ctx.progress(f"marking the server of VNFC {vid} unhealthy")
        await asyncio.to_thread(cloud.mark_unhealthy, m.stack_id, m.vdu_id, f"vnfm: heal VNFC {vid}")
        if not keep_storage:
            for r in volumes:
                await asyncio.to_thread(cloud.mark_unhealthy, m.stack_id, r["resource_name"], f"vnfm: heal VNFC {vid}")
    return before


def check_healed(after: VnfResources, before: dict[str, str]) -> None:
    for vid, old_server in before.items():
        v = after.by_id(vid)
        if v is None:
            raise OperationFailed(f"VNFC {vid} disappeared while it was healed")
        if v.server_id and v.server_id == old_server:
            raise OperationFailed(f"Heat did not replace the server {old_server} of VNFC {vid}")
