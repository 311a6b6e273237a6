"""Where each VNFC lives in a VNF's Heat stack tree, and how VNFC ids are derived from it.

A VNFC of an AutoScalingGroup is its member's nested stack (the member stack's id is the VNFC id,
or a name-based UUID of it and the VDU id when one member holds several VDUs); a VDU server of the
top template gets a name-based UUID from the stack id and the VDU id.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

from vnfm.adapters.infra.openstack.cloud import Cloud
from vnfm.adapters.infra.openstack.hot import SERVER_TYPE, BaseHot

NS = uuid.UUID("6f0d3a5e-2b1c-4e55-9c1e-7a0b5d1f2e83")  # name-based VNFC/CP ids


@dataclass
class Member:
    """Where one VNFC lives in the stack tree."""

    vdu_id: str
    vnfc_id: str
    group: str  # AutoScalingGroup resource name ("" for a server of the top template)
    holder_stack_id: str  # stack holding the member resource (the group's nested stack)
    member_name: str  # member resource name in the holder stack (the VDU id for top servers)
    stack_id: str  # stack holding the server/ports/volumes (member nested stack, or the top stack)
    created: str
    resources: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Tree:
    stack: dict[str, Any]
    top: list[dict[str, Any]]
    members: list[Member]

    def by_id(self) -> dict[str, Member]:
        return {m.vnfc_id: m for m in self.members}

    def top_resource(self, name: str) -> dict[str, Any] | None:
        return next((r for r in self.top if r.get("resource_name") == name), None)


def server_of(m: Member) -> str:
    """The physical id of the member's server ("" when Heat has none yet)."""
    r = next(
        (r for r in m.resources if r["resource_name"] == m.vdu_id and r.get("resource_type") == SERVER_TYPE), None
    )
    return str((r or {}).get("physical_resource_id") or "")


async def walk(cloud: Cloud, hot: BaseHot, stack: dict[str, Any]) -> Tree:
    """Read the stack's resources down to the group members, oldest member first."""
    top = await asyncio.to_thread(cloud.list_resources, stack["id"])
    by_name = {r["resource_name"]: r for r in top}
    members: list[Member] = []
    for vdu_id in hot.single_vdus:
        r = by_name.get(vdu_id)
        if r is None:
            continue
        members.append(
            Member(
                vdu_id=vdu_id,
                vnfc_id=str(uuid.uuid5(NS, f"{stack['id']}/{vdu_id}")),
                group="",
                holder_stack_id=stack["id"],
                member_name=vdu_id,
                stack_id=stack["id"],
                created=str(r.get("creation_time") or ""),
                resources=top,
            )
        )
    for gname, g in hot.groups.items():
        nested_id = (by_name.get(gname) or {}).get("physical_resource_id")
        if not nested_id:
            continue
        for mr in await asyncio.to_thread(cloud.list_resources, nested_id):
            mid = mr.get("physical_resource_id")
            if not mid:
                continue
            inner = await asyncio.to_thread(cloud.list_resources, mid)
            for vdu_id in g.vdus:
                members.append(
                    Member(
                        vdu_id=vdu_id,
                        vnfc_id=mid if len(g.vdus) == 1 else str(uuid.uuid5(NS, f"{mid}/{vdu_id}")),
                        group=gname,
                        holder_stack_id=nested_id,
                        member_name=mr["resource_name"],
                        stack_id=mid,
                        created=str(mr.get("creation_time") or ""),
                        resources=inner,
                    )
                )
    members.sort(key=lambda m: (m.created, m.member_name, m.vdu_id))
    return Tree(stack=stack, top=top, members=members)
