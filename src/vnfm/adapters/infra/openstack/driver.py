"""`HeatInfraDriver`: the InfraDriver for OpenStack VIMs (vim_type "openstack"), on Heat.

One Heat stack per VNF instance (`vnf-<instanceId>`) made from the package's BaseHOT for the
flavour (see `hot`). Counts are absolute: every call sends the whole template with each
AutoScalingGroup's `desired_capacity` set from the VDU counts, so an update never undoes a scale
and a retried call converges.

* VNFC ids are stable: a VNFC of a group is its member's nested stack (its id is the VNFC id);
  a VDU server of the top template gets a name-based UUID from the stack id and the VDU id.
* Scale in: the members named in `remove` are marked unhealthy, then the stack is updated with the
  smaller capacity: Heat removes failed members first, so exactly those go (checked afterwards).
* Heal: the server resource inside the member stack is marked unhealthy (its volumes too when
  storage is not kept), then the stack is updated: Heat replaces the server and keeps the port,
  so the VNFC keeps its id, port and addresses. A kept volume is detached from the old server
  first (Heat creates the replacement before it deletes the old server, and an in-use volume
  cannot be attached twice), then the new server attaches it.
* Stacks are awaited by status polling with exponential backoff and a deadline; a failed stack
  raises `HeatStackError` carrying Heat's status reason.
* Images: a VDU's image is found in Glance by name; when missing and the package ships the image
  file (a `tosca.artifacts.nfv.SwImage` artifact), it is uploaded. Uploaded images are kept on
  terminate on purpose (shared by name with other instances of the package); delete them with the
  package's images in Glance when no longer needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from vnfm.adapters.infra.openstack.cloud import Cloud, SdkCloud
from vnfm.adapters.infra.openstack.hot import (
    FIP_TYPE,
    SERVER_TYPE,
    VOLUME_TYPE,
    BaseHot,
    VduChoice,
    build_parameters,
    ext_cp_map,
    load_base_hot,
    vnfd_node_extras,
)
from vnfm.domain.errors import NotFound, OperationFailed, UnprocessableEntity
from vnfm.domain.model import Vim
from vnfm.domain.resources import CpResource, StorageResource, VirtualLinkResource, Vnfc, VnfResources
from vnfm.domain.vnfd import Flavour, Vdu
from vnfm.service.ports import InfraContext, InfraDriver

NS = uuid.UUID("6f0d3a5e-2b1c-4e55-9c1e-7a0b5d1f2e83")  # name-based VNFC/CP ids
T = TypeVar("T")


class HeatStackError(OperationFailed):
    """A stack operation ended FAILED (or timed out); the detail carries Heat's status reason."""

    def __init__(self, stack_name: str, status: str, reason: str) -> None:
        super().__init__(f"Heat stack {stack_name} is {status}: {reason}")
        self.stack_status = status
        self.reason = reason


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


def stack_name_of(instance_id: str) -> str:
    return f"vnf-{instance_id}"


class HeatInfraDriver(InfraDriver):
    vim_type = "openstack"

    def __init__(
        self,
        cloud_factory: Callable[[Vim], Cloud] = SdkCloud,
        *,
        timeout: float = 1800.0,
        poll_initial: float = 1.0,
        poll_max: float = 5.0,
    ) -> None:
        self.cloud_factory = cloud_factory
        self.timeout = timeout
        self.poll_initial = poll_initial
        self.poll_max = poll_max
        self._clouds: dict[str, Cloud] = {}

    # ================================================================== InfraDriver
    async def deploy(self, ctx: InfraContext, counts: dict[str, int]) -> VnfResources:
        _check_vdus(ctx.flavour, counts)
        cloud = await self._cloud(ctx.vim)
        hot = load_base_hot(ctx.package, ctx.flavour)
        name = stack_name_of(ctx.instance_id)
        stack = await self._call(cloud.find_stack, name)
        if stack is not None and stack["stack_status"].endswith("_IN_PROGRESS"):
            ctx.progress(f"stack {name} is {stack['stack_status']}: waiting for it")
            stack = await self._await(ctx, cloud, stack, stack["stack_status"].split("_")[0])
        if stack is not None and stack["stack_status"].startswith("DELETE"):
            if stack["stack_status"] == "DELETE_FAILED":
                await self.undeploy(ctx)
            else:  # the name is free only once Heat has purged the deleted stack
                await self._await(ctx, cloud, stack, "DELETE")
            stack = None
        full = self._full_counts(hot, ctx.flavour, counts, None)
        template, files, params = await self._compose(ctx, cloud, hot, full)
        if stack is None:
            stack_id = await self._call(cloud.create_stack, name, template, files, params, self._timeout_mins())
            ctx.progress(f"stack {name} ({stack_id}) create requested")
            stack = {"id": stack_id, "stack_name": name, "stack_status": "CREATE_IN_PROGRESS"}
            await self._await(ctx, cloud, stack, "CREATE")
        else:
            ctx.progress(f"stack {name} ({stack['id']}) exists ({stack['stack_status']}): updating it")
            await self._update(ctx, cloud, stack, template, files, params)
        return await self.current(ctx)

    async def update(self, ctx: InfraContext, counts: dict[str, int], remove: Sequence[str]) -> VnfResources:
        _check_vdus(ctx.flavour, counts)
        cloud = await self._cloud(ctx.vim)
        hot = load_base_hot(ctx.package, ctx.flavour)
        stack = await self._existing(ctx, cloud)
        tree = await self._walk(cloud, hot, ctx.flavour, stack)
        present = tree.by_id()
        to_remove = [i for i in dict.fromkeys(remove) if i in present]
        gone = [i for i in dict.fromkeys(remove) if i not in present]
        if gone:
            ctx.progress(f"VNFC(s) {', '.join(gone)} already removed")
        full = self._full_counts(hot, ctx.flavour, counts, tree)
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
        for vid in to_remove:
            m = present[vid]
            ctx.progress(f"marking VNFC {vid} ({m.group}/{m.member_name}) unhealthy so that Heat removes it")
            await self._call(
                cloud.mark_unhealthy, m.holder_stack_id, m.member_name, f"vnfm: scale in removes VNFC {vid}"
            )
        template, files, params = await self._compose(ctx, cloud, hot, full)
        await self._update(ctx, cloud, stack, template, files, params)
        after = await self.current(ctx)
        left = [i for i in to_remove if after.by_id(i) is not None]
        if left:
            raise OperationFailed(f"Heat kept VNFC(s) {', '.join(left)} that scale in was to remove")
        return after

    async def heal(
        self, ctx: InfraContext, vnfc_ids: Sequence[str], *, keep_storage: bool = True
    ) -> VnfResources:
        cloud = await self._cloud(ctx.vim)
        hot = load_base_hot(ctx.package, ctx.flavour)
        stack = await self._existing(ctx, cloud)
        tree = await self._walk(cloud, hot, ctx.flavour, stack)
        present = tree.by_id()
        ids = list(dict.fromkeys(vnfc_ids))
        unknown = [i for i in ids if i not in present]
        if unknown:
            raise UnprocessableEntity(
                f"VNFC instance(s) {', '.join(unknown)} do not exist in VNF instance {ctx.instance_id}"
            )
        before = {i: _server_of(present[i]) for i in ids}
        for vid in ids:
            m = present[vid]
            volumes = [
                str(r["physical_resource_id"])
                for r in m.resources
                if r.get("resource_type") == VOLUME_TYPE
                and r["resource_name"] in ctx.flavour.vdus[m.vdu_id].storages
                and r.get("physical_resource_id")
            ]
            server_id = before[vid]
            if keep_storage and volumes and server_id:
                # Heat creates the replacement server before it deletes the old one: a volume the
                # old server still holds (in-use) cannot be attached to the new one. Detach first.
                for vol_id in volumes:
                    ctx.progress(f"detaching volume {vol_id} from server {server_id} (kept for the new server)")
                    await self._call(cloud.detach_volume, server_id, vol_id, self.timeout)
            ctx.progress(f"marking the server of VNFC {vid} unhealthy")
            await self._call(cloud.mark_unhealthy, m.stack_id, m.vdu_id, f"vnfm: heal VNFC {vid}")
            if not keep_storage:
                for r in m.resources:
                    rname = r["resource_name"]
                    if r.get("resource_type") == VOLUME_TYPE and rname in ctx.flavour.vdus[m.vdu_id].storages:
                        await self._call(cloud.mark_unhealthy, m.stack_id, rname, f"vnfm: heal VNFC {vid}")
        full = self._full_counts(hot, ctx.flavour, {}, tree)
        template, files, params = await self._compose(ctx, cloud, hot, full)
        await self._update(ctx, cloud, stack, template, files, params)
        after = await self.current(ctx)
        for vid in ids:
            v = after.by_id(vid)
            if v is None:
                raise OperationFailed(f"VNFC {vid} disappeared while it was healed")
            if v.server_id and v.server_id == before[vid]:
                raise OperationFailed(f"Heat did not replace the server {before[vid]} of VNFC {vid}")
        return after

    async def undeploy(self, ctx: InfraContext) -> None:
        cloud = await self._cloud(ctx.vim)
        name = stack_name_of(ctx.instance_id)
        stack = await self._call(cloud.find_stack, name)
        if stack is None:
            return
        if stack["stack_status"].endswith("_IN_PROGRESS") and not stack["stack_status"].startswith("DELETE"):
            ctx.progress(f"stack {name} is {stack['stack_status']}: waiting before deleting it")
            with contextlib.suppress(HeatStackError):  # deleting it anyway
                await self._await(ctx, cloud, stack, stack["stack_status"].split("_")[0])
        if stack["stack_status"] not in ("DELETE_IN_PROGRESS", "DELETE_COMPLETE"):
            await self._call(cloud.delete_stack, stack)
            ctx.progress(f"stack {name} ({stack['id']}) delete requested")
        await self._await(ctx, cloud, stack, "DELETE")
        ctx.progress(f"stack {name} ({stack['id']}) deleted")

    async def current(self, ctx: InfraContext) -> VnfResources:
        cloud = await self._cloud(ctx.vim)
        stack = await self._call(cloud.find_stack, stack_name_of(ctx.instance_id))
        if stack is None or stack["stack_status"] == "DELETE_COMPLETE":
            return VnfResources()
        hot = load_base_hot(ctx.package, ctx.flavour)
        tree = await self._walk(cloud, hot, ctx.flavour, stack)
        return await self._resources(ctx, cloud, tree)

    async def probe(self, ctx: InfraContext, vnfc: Vnfc) -> str | None:
        cloud = await self._cloud(ctx.vim)
        server = await self._call(cloud.get_server, vnfc.server_id) if vnfc.server_id else None
        if server is None:
            return f"server {vnfc.server_id or '(none)'} does not exist"
        if server.get("status") != "ACTIVE":
            return f"server {server.get('name', vnfc.server_id)} is {server.get('status')}"
        return None

    # ================================================================== internals
    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.to_thread(fn, *args)

    async def _cloud(self, vim: Vim) -> Cloud:
        cloud = self._clouds.get(vim.id)
        if cloud is None:
            cloud = await asyncio.to_thread(self.cloud_factory, vim)
            self._clouds[vim.id] = cloud
        return cloud

    def forget_vim(self, vim_id: str) -> None:
        """Drop the cached connection (call when a VIM's access info changes)."""
        cloud = self._clouds.pop(vim_id, None)
        if cloud is not None:
            cloud.close()

    def _timeout_mins(self) -> int:
        return max(1, int(self.timeout // 60))

    async def _existing(self, ctx: InfraContext, cloud: Cloud) -> dict[str, Any]:
        name = stack_name_of(ctx.instance_id)
        stack = await self._call(cloud.find_stack, name)
        if stack is None or stack["stack_status"].startswith("DELETE"):
            raise NotFound(f"OpenStack VIM {ctx.vim.id} has no stack {name} for VNF instance {ctx.instance_id}")
        if stack["stack_status"].endswith("_IN_PROGRESS"):
            ctx.progress(f"stack {name} is {stack['stack_status']}: waiting for it")
            try:
                stack = await self._await(ctx, cloud, stack, stack["stack_status"].split("_")[0])
            except HeatStackError:
                stack = await self._call(cloud.find_stack, name) or stack
        return stack

    @staticmethod
    def _full_counts(hot: BaseHot, flavour: Flavour, counts: dict[str, int], tree: Tree | None) -> dict[str, int]:
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

    async def _compose(
        self, ctx: InfraContext, cloud: Cloud, hot: BaseHot, counts: dict[str, int]
    ) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
        choices = await self._choices(ctx, cloud)
        template = hot.with_capacities(counts)
        params = build_parameters(hot, ctx.flavour, counts, choices, ctx.ext_virtual_links, ctx.additional_params)
        return template, dict(hot.files), params

    async def _update(
        self,
        ctx: InfraContext,
        cloud: Cloud,
        stack: dict[str, Any],
        template: dict[str, Any],
        files: dict[str, str],
        params: dict[str, Any],
    ) -> dict[str, Any]:
        since = stack.get("updated_time")
        await self._call(cloud.update_stack, stack, template, files, params, self._timeout_mins())
        ctx.progress(f"stack {stack['stack_name']} update requested")
        return await self._await(ctx, cloud, stack, "UPDATE", since=since or "")

    async def _await(
        self, ctx: InfraContext, cloud: Cloud, stack: dict[str, Any], action: str, *, since: str | None = None
    ) -> dict[str, Any]:
        """Poll the stack until `action` completes (backoff, deadline); raise HeatStackError on failure."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        delay = self.poll_initial
        last = ""
        while True:
            if action == "DELETE":
                # Done when the name no longer resolves: a DELETE_COMPLETE stack still holds its name
                # until Heat purges it, and a create with that name would get 409 until then.
                st = await self._call(cloud.find_stack, stack["stack_name"])
                if st is None or st.get("id") != stack["id"]:
                    return {}
            else:
                st = await self._call(cloud.find_stack, stack["id"])
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
                    f"not {action}_COMPLETE after {self.timeout:.0f} s "
                    f"(last reason: {st.get('stack_status_reason') or 'none'})",
                )
            await asyncio.sleep(min(delay, max(0.0, deadline - loop.time())))
            delay = min(delay * 1.5, self.poll_max)

    # ------------------------------------------------------------------ flavors and images
    async def _choices(self, ctx: InfraContext, cloud: Cloud) -> dict[str, VduChoice]:
        extras = vnfd_node_extras(ctx.package)
        overrides = ((ctx.additional_params or {}).get("nfv") or {}).get("VDU") or {}
        flavors: list[dict[str, Any]] | None = None
        out: dict[str, VduChoice] = {}
        images: dict[str, str] = {}
        for vdu_id, vdu in ctx.flavour.vdus.items():
            ov_raw = overrides.get(vdu_id)
            ov: dict[str, Any] = ov_raw if isinstance(ov_raw, dict) else {}
            ex = extras.get(vdu_id, {})
            flavor = ov.get("flavor") or ex.get("flavor")
            if not flavor:
                if flavors is None:
                    flavors = await self._call(cloud.list_flavors)
                flavor = pick_flavor(vdu, flavors)
            image = ov.get("image")
            if not image:
                name = vdu.sw_image or ex.get("image_name")
                if not name:
                    raise UnprocessableEntity(
                        f"VDU {vdu_id} has no sw_image_data and the request gives no "
                        f"additionalParams.nfv.VDU.{vdu_id}.image"
                    )
                if name not in images:
                    images[name] = await self._image(ctx, cloud, str(name), ex)
                image = images[name]
            out[vdu_id] = VduChoice(flavor=str(flavor), image=str(image))
        return out

    async def _image(self, ctx: InfraContext, cloud: Cloud, name: str, extra: dict[str, Any]) -> str:
        found = await self._call(cloud.find_image, name)
        if found is not None:
            return str(found["id"])
        pkg = ctx.package
        path = extra.get("image_file")
        if pkg is not None and path:
            for cand in (path, posixpath.normpath(str(extra.get("image_file_raw", "")))):
                if cand and pkg.exists(cand):
                    ctx.progress(f"image {name} is not in Glance: uploading {cand} from the package")
                    data = pkg.read(cand)
                    img = await self._call(
                        cloud.upload_image,
                        name,
                        data,
                        str(extra.get("disk_format") or "qcow2"),
                        str(extra.get("container_format") or "bare"),
                    )
                    return str(img["id"])
        # Neither in Glance nor in the package: Heat reports it (the operation fails with its reason).
        return name

    # ------------------------------------------------------------------ reading the stack
    async def _walk(self, cloud: Cloud, hot: BaseHot, flavour: Flavour, stack: dict[str, Any]) -> Tree:
        top = await self._call(cloud.list_resources, stack["id"])
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
            gr = by_name.get(gname)
            nested_id = (gr or {}).get("physical_resource_id")
            if not nested_id:
                continue
            for mr in await self._call(cloud.list_resources, nested_id):
                mid = mr.get("physical_resource_id")
                if not mid:
                    continue
                inner = await self._call(cloud.list_resources, mid)
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

    async def _resources(self, ctx: InfraContext, cloud: Cloud, tree: Tree) -> VnfResources:
        ext = ext_cp_map(ctx.ext_virtual_links)
        flavour = ctx.flavour
        old_seq = {v.id: v.seq for v in ctx.resources.vnfcs}
        next_seq = max(old_seq.values(), default=0)
        vls: list[VirtualLinkResource] = []
        vl_by_net: dict[str, str] = {}
        for r in tree.top:
            if r.get("resource_type") == "OS::Neutron::Net" and r["resource_name"] in flavour.virtual_links:
                net_id = str(r.get("physical_resource_id") or "")
                vl_by_net[net_id] = r["resource_name"]
                vls.append(
                    VirtualLinkResource(
                        id=str(uuid.uuid5(NS, f"{tree.stack['id']}/{r['resource_name']}")),
                        vld_id=r["resource_name"],
                        network_id=net_id,
                    )
                )
        vnfcs: list[Vnfc] = []
        for m in tree.members:
            by_name = {r["resource_name"]: r for r in m.resources}
            server_id = _server_of(m)
            server = await self._call(cloud.get_server, server_id) if server_id else None
            has_fip = any(r.get("resource_type") == FIP_TYPE for r in [*m.resources, *tree.top])
            cps: list[CpResource] = []
            unnamed_ports: list[dict[str, Any]] | None = None
            for i, cp in enumerate(flavour.cps_of(m.vdu_id)):
                pr = by_name.get(cp.id)
                port: dict[str, Any] | None = None
                if pr is not None and pr.get("physical_resource_id"):
                    port = await self._call(cloud.get_port, str(pr["physical_resource_id"]))
                elif server_id:
                    if unnamed_ports is None:
                        unnamed_ports = await self._call(cloud.server_ports, server_id)
                    port = unnamed_ports[i] if i < len(unnamed_ports) else None
                if not port:
                    continue
                fips = await self._call(cloud.port_floating_ips, str(port["id"])) if has_fip else []
                net_id = str(port.get("network_id") or "")
                cps.append(
                    CpResource(
                        id=str(uuid.uuid5(NS, f"{m.vnfc_id}/{cp.id}")),
                        cpd_id=cp.id,
                        port_id=str(port["id"]),
                        ip_addresses=[str(f["ip_address"]) for f in port.get("fixed_ips") or []],
                        mac_address=port.get("mac_address"),
                        floating_ip=fips[0] if fips else None,
                        network_id=net_id or None,
                        ext_virtual_link_id=ext[cp.id][0] if cp.id in ext else None,
                        virtual_link_id=cp.virtual_link or vl_by_net.get(net_id),
                    )
                )
            storages: list[StorageResource] = []
            for vsd_id in flavour.vdus[m.vdu_id].storages:
                vr = by_name.get(vsd_id)
                if vr is None or vr.get("resource_type") != VOLUME_TYPE or not vr.get("physical_resource_id"):
                    continue
                vol = await self._call(cloud.get_volume, str(vr["physical_resource_id"]))
                storages.append(
                    StorageResource(
                        id=str(uuid.uuid5(NS, f"{m.vnfc_id}/{vsd_id}")),
                        virtual_storage_desc_id=vsd_id,
                        volume_id=str(vr["physical_resource_id"]),
                        size_gb=float(vol["size"]) if vol and vol.get("size") is not None else None,
                    )
                )
            if m.vnfc_id in old_seq:
                seq = old_seq[m.vnfc_id]
            else:
                next_seq += 1
                seq = next_seq
            flavor = (server or {}).get("flavor") or {}
            image = (server or {}).get("image") or {}
            vnfcs.append(
                Vnfc(
                    id=m.vnfc_id,
                    vdu_id=m.vdu_id,
                    server_id=server_id,
                    name=str((server or {}).get("name") or m.vdu_id),
                    cps=cps,
                    storages=storages,
                    resource_type=SERVER_TYPE,
                    seq=seq,
                    created_at=m.created,
                    metadata={
                        "server_status": (server or {}).get("status"),
                        "flavor": flavor.get("original_name") or flavor.get("name") or flavor.get("id"),
                        "image": image.get("id") if isinstance(image, dict) else image,
                        "heat": {
                            "stack_id": m.stack_id,
                            "group": m.group,
                            "member": m.member_name,
                            "resource": m.vdu_id,
                        },
                    },
                )
            )
        vnfcs.sort(key=lambda v: v.seq)
        return VnfResources(vnfcs=vnfcs, virtual_links=vls, stack_id=str(tree.stack["id"]))


def _server_of(m: Member) -> str:
    r = next(
        (r for r in m.resources if r["resource_name"] == m.vdu_id and r.get("resource_type") == SERVER_TYPE), None
    )
    return str((r or {}).get("physical_resource_id") or "")


def _check_vdus(flavour: Flavour, counts: dict[str, int]) -> None:
    unknown = sorted(set(counts) - set(flavour.vdus))
    if unknown:
        raise UnprocessableEntity(
            f"VDU(s) {', '.join(unknown)} are not defined in flavour '{flavour.id}' "
            f"(known: {', '.join(sorted(flavour.vdus)) or 'none'})"
        )
    negative = sorted(v for v, n in counts.items() if n < 0)
    if negative:
        raise UnprocessableEntity(f"negative VNFC count for VDU(s) {', '.join(negative)}")


def pick_flavor(vdu: Vdu, flavors: list[dict[str, Any]]) -> str:
    """The smallest flavor with at least the VDU's vCPUs and memory."""
    cpus = vdu.num_cpus or 1
    mem = vdu.memory_mb or 0
    fits = [f for f in flavors if int(f.get("vcpus") or 0) >= cpus and int(f.get("ram") or 0) >= mem]
    if not fits:
        raise UnprocessableEntity(
            f"VDU {vdu.id}: no flavor in the VIM has {cpus} vCPU(s) and {mem} MB; name one in the VNFD "
            f"(requested_additional_capability_name) or in additionalParams.nfv.VDU.{vdu.id}.flavor"
        )
    best = min(fits, key=lambda f: (int(f.get("vcpus") or 0), int(f.get("ram") or 0), int(f.get("disk") or 0)))
    return str(best.get("name") or best["id"])
