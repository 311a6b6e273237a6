"""The VNF's Heat stack: its name, the template and parameters sent, create / update / delete, and
waiting for Heat.

Counts are absolute: every call sends the whole template with each AutoScalingGroup's
`desired_capacity` set from the VDU counts, so an update never undoes a scale and a retried call
converges. Stacks are awaited by status polling with exponential backoff and a deadline; a failed
stack raises `HeatStackError` carrying Heat's status reason.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from vnfm.adapters.infra.openstack.cloud import Cloud
from vnfm.adapters.infra.openstack.hot import BaseHot, build_parameters
from vnfm.adapters.infra.openstack.images import choices
from vnfm.adapters.infra.openstack.tree import Tree
from vnfm.domain.errors import NotFound, OperationFailed, UnprocessableEntity
from vnfm.domain.vnfd import Flavour
from vnfm.service.ports import InfraContext


class HeatStackError(OperationFailed):
    """A stack operation ended FAILED (or timed out); the detail carries Heat's status reason."""

    def __init__(self, stack_name: str, status: str, reason: str) -> None:
        super().__init__(f"Heat stack {stack_name} is {status}: {reason}")
        self.stack_status = status
        self.reason = reason


@dataclass
class Timing:
    """How long to wait for Heat, and how often to look."""

    timeout: float = 1800.0
    poll_initial: float = 1.0
    poll_max: float = 5.0

    def timeout_mins(self) -> int:
        return max(1, int(self.timeout // 60))


def stack_name_of(instance_id: str) -> str:
    return f"vnf-{instance_id}"


def _action(stack: dict[str, Any]) -> str:
    return str(stack["stack_status"]).split("_")[0]


# ---------------------------------------------------------------------------------- waiting
async def wait(
    ctx: InfraContext, cloud: Cloud, stack: dict[str, Any], action: str, timing: Timing, *, since: str | None = None
) -> dict[str, Any]:
    """Poll the stack until `action` completes (backoff, deadline); raise HeatStackError on failure.

    `since`: the stack's `updated_time` before an update was asked; a status with that same time is
    the previous operation's, not this one's."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timing.timeout
    delay = timing.poll_initial
    last = ""
    while True:
        if action == "DELETE":
            # Done when the name no longer resolves: a DELETE_COMPLETE stack still holds its name
            # until Heat purges it, and a create with that name would get 409 until then.
            st = await asyncio.to_thread(cloud.find_stack, stack["stack_name"])
            if st is None or st.get("id") != stack["id"]:
                return {}
        else:
            st = await asyncio.to_thread(cloud.find_stack, stack["id"])
        if st is None:
            raise HeatStackError(stack["stack_name"], "missing", "the stack disappeared")
        status = str(st.get("stack_status") or "")
        stale = since is not None and (st.get("updated_time") or "") == since
        if status != last:
            last = status
            if not stale:
                ctx.progress(f"stack {stack['stack_name']}: {status}")
        if not stale and status == f"{action}_COMPLETE" and action != "DELETE":
            return dict(st)
        if not stale and status == f"{action}_FAILED":
            raise HeatStackError(stack["stack_name"], status, str(st.get("stack_status_reason") or "no reason"))
        if loop.time() >= deadline:
            raise HeatStackError(
                stack["stack_name"],
                status,
                f"not {action}_COMPLETE after {timing.timeout:.0f} s "
                f"(last reason: {st.get('stack_status_reason') or 'none'})",
            )
        await asyncio.sleep(min(delay, max(0.0, deadline - loop.time())))
        delay = min(delay * 1.5, timing.poll_max)


# ---------------------------------------------------------------------------------- finding it
async def existing(ctx: InfraContext, cloud: Cloud, timing: Timing) -> dict[str, Any]:
    """The instance's stack, once no operation runs on it (NotFound when there is none)."""
    name = stack_name_of(ctx.instance_id)
    stack = await asyncio.to_thread(cloud.find_stack, name)
    if stack is None or stack["stack_status"].startswith("DELETE"):
        raise NotFound(f"OpenStack VIM {ctx.vim.id} has no stack {name} for VNF instance {ctx.instance_id}")
    if stack["stack_status"].endswith("_IN_PROGRESS"):
        ctx.progress(f"stack {name} is {stack['stack_status']}: waiting for it")
        try:
            stack = await wait(ctx, cloud, stack, _action(stack), timing)
        except HeatStackError:
            stack = await asyncio.to_thread(cloud.find_stack, name) or stack
    return stack


async def settled_for_deploy(ctx: InfraContext, cloud: Cloud, timing: Timing) -> dict[str, Any] | None:
    """The stack a deploy updates, or None when it must create one: waits for an operation in
    progress, and for a deleted stack's name to be free (deleting a DELETE_FAILED one again)."""
    name = stack_name_of(ctx.instance_id)
    stack = await asyncio.to_thread(cloud.find_stack, name)
    if stack is not None and stack["stack_status"].endswith("_IN_PROGRESS"):
        ctx.progress(f"stack {name} is {stack['stack_status']}: waiting for it")
        stack = await wait(ctx, cloud, stack, _action(stack), timing)
    if stack is not None and stack["stack_status"].startswith("DELETE"):
        if stack["stack_status"] == "DELETE_FAILED":
            await delete(ctx, cloud, timing)
        else:  # the name is free only once Heat has purged the deleted stack
            await wait(ctx, cloud, stack, "DELETE", timing)
        stack = None
    return stack


# ---------------------------------------------------------------------------------- changing it
async def create(
    ctx: InfraContext, cloud: Cloud, template: dict[str, Any], files: dict[str, str], params: dict[str, Any],
    timing: Timing,
) -> dict[str, Any]:
    name = stack_name_of(ctx.instance_id)
    stack_id = await asyncio.to_thread(cloud.create_stack, name, template, files, params, timing.timeout_mins())
    ctx.progress(f"stack {name} ({stack_id}) create requested")
    stack = {"id": stack_id, "stack_name": name, "stack_status": "CREATE_IN_PROGRESS"}
    return await wait(ctx, cloud, stack, "CREATE", timing)


async def update(
    ctx: InfraContext,
    cloud: Cloud,
    stack: dict[str, Any],
    template: dict[str, Any],
    files: dict[str, str],
    params: dict[str, Any],
    timing: Timing,
) -> dict[str, Any]:
    since = stack.get("updated_time")
    await asyncio.to_thread(cloud.update_stack, stack, template, files, params, timing.timeout_mins())
    ctx.progress(f"stack {stack['stack_name']} update requested")
    return await wait(ctx, cloud, stack, "UPDATE", timing, since=since or "")


async def delete(ctx: InfraContext, cloud: Cloud, timing: Timing) -> None:
    """Delete the instance's stack and wait until its name is free (no error when there is none)."""
    name = stack_name_of(ctx.instance_id)
    stack = await asyncio.to_thread(cloud.find_stack, name)
    if stack is None:
        return
    if stack["stack_status"].endswith("_IN_PROGRESS") and not stack["stack_status"].startswith("DELETE"):
        ctx.progress(f"stack {name} is {stack['stack_status']}: waiting before deleting it")
        with contextlib.suppress(HeatStackError):  # deleting it anyway
            await wait(ctx, cloud, stack, _action(stack), timing)
    if stack["stack_status"] not in ("DELETE_IN_PROGRESS", "DELETE_COMPLETE"):
        await asyncio.to_thread(cloud.delete_stack, stack)
        ctx.progress(f"stack {name} ({stack['id']}) delete requested")
    await wait(ctx, cloud, stack, "DELETE", timing)
    ctx.progress(f"stack {name} ({stack['id']}) deleted")


# ---------------------------------------------------------------------------------- what is sent
async def compose(
    ctx: InfraContext, cloud: Cloud, hot: BaseHot, counts: dict[str, int]
) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """(template, files, parameters) for `counts` VNFCs per VDU."""
    chosen = await choices(ctx, cloud)
    template = hot.with_capacities(counts)
    params = build_parameters(hot, ctx.flavour, counts, chosen, ctx.ext_virtual_links, ctx.additional_params)
    return template, dict(hot.files), params


def full_counts(hot: BaseHot, flavour: Flavour, counts: dict[str, int], tree: Tree | None) -> dict[str, int]:
    """A count for every VDU: the ones asked, else what exists, else the template's default."""
    full: dict[str, int] = {}
    for vdu_id in flavour.vdus:
        if vdu_id in counts:
            full[vdu_id] = counts[vdu_id]
        elif tree is not None:
            full[vdu_id] = sum(1 for m in tree.members if m.vdu_id == vdu_id)
        else:
            g = hot.group_of_vdu(vdu_id)
            props = (hot.template["resources"][g.name].get("properties") or {}) if g else {}
            dc = props.get("desired_capacity", props.get("min_size", 1))
            full[vdu_id] = dc if isinstance(dc, int) else flavour.vdus[vdu_id].min_instances
    for vdu_id in hot.single_vdus:
        if full.get(vdu_id, 1) != 1:
            raise UnprocessableEntity(
                f"VDU {vdu_id} is a single server of the top template: its count must be 1, not {full[vdu_id]}"
            )
    return full


