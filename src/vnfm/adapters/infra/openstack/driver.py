"""`HeatInfraDriver`: the InfraDriver for OpenStack VIMs (vim_type "openstack"), on Heat.

One Heat stack per VNF instance (`vnf-<instanceId>`) made from the package's BaseHOT for the
flavour. This module holds the verbs; each concern has a module of its own:

* `hot`: the BaseHOT (top and nested templates, groups) and the parameters computed for it;
* `stacks`: the stack's name, create / update / delete, waiting for Heat (absolute counts, so a
  retried call converges);
* `tree`: where each VNFC lives in the stack tree (stable VNFC ids); `readback`: the stack as the
  VNF's resources;
* `scale`: scale in by name; `heal`: servers replaced in place (ids, ports, kept volumes);
* `images`: flavors and images (uploaded from the package when Glance lacks them);
* `addresses`: addresses kept for a purpose (a VIP): the BaseHOT's own port, or a Neutron port
  of vnfm's on a VDU CP's network allowed on that CP's ports;
* `cloud`: the few OpenStack calls, behind one interface (openstacksdk; a fake in unit tests).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from vnfm.adapters.infra.openstack import addresses, scale, stacks
from vnfm.adapters.infra.openstack import heal as healing
from vnfm.adapters.infra.openstack.cloud import Cloud, SdkCloud
from vnfm.adapters.infra.openstack.hot import load_base_hot
from vnfm.adapters.infra.openstack.images import pick_flavor
from vnfm.adapters.infra.openstack.params import DECLARED
from vnfm.adapters.infra.openstack.readback import read_resources
from vnfm.adapters.infra.openstack.stacks import HeatStackError, Timing, stack_name_of
from vnfm.adapters.infra.openstack.tree import walk
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.model import Vim
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.domain.scaling import check_counts
from vnfm.service.ports import InfraContext, InfraDriver

__all__ = ["HeatInfraDriver", "HeatStackError", "pick_flavor", "stack_name_of"]


class HeatInfraDriver(InfraDriver):
    vim_type = "openstack"
    declared = DECLARED

    def __init__(
        self,
        cloud_factory: Callable[[Vim], Cloud] = SdkCloud,
        *,
        timeout: float = 1800.0,
        poll_initial: float = 1.0,
        poll_max: float = 5.0,
    ) -> None:
        self.cloud_factory = cloud_factory
        self.timing = Timing(timeout=timeout, poll_initial=poll_initial, poll_max=poll_max)
        self._clouds: dict[str, Cloud] = {}

    # ================================================================== InfraDriver
    async def deploy(self, ctx: InfraContext, counts: dict[str, int]) -> VnfResources:
        check_counts(ctx.flavour, counts)
        cloud = await self._cloud(ctx.vim)
        hot = load_base_hot(ctx.package, ctx.flavour)
        stack = await stacks.settled_for_deploy(ctx, cloud, self.timing)
        full = stacks.full_counts(hot, ctx.flavour, counts, None)
        template, files, params = await stacks.compose(ctx, cloud, hot, full)
        if stack is None:
            await stacks.create(ctx, cloud, template, files, params, self.timing)
        else:
            ctx.progress(f"stack {stack['stack_name']} ({stack['id']}) exists ({stack['stack_status']}): updating it")
            await stacks.update(ctx, cloud, stack, template, files, params, self.timing)
        return await self._synced(ctx, cloud)

    async def update(self, ctx: InfraContext, counts: dict[str, int], remove: Sequence[str]) -> VnfResources:
        check_counts(ctx.flavour, counts)
        cloud = await self._cloud(ctx.vim)
        hot = load_base_hot(ctx.package, ctx.flavour)
        stack = await stacks.existing(ctx, cloud, self.timing)
        tree = await walk(cloud, hot, stack)
        full = stacks.full_counts(hot, ctx.flavour, counts, tree)
        to_remove = scale.removals(ctx, hot, tree, full, remove)
        await scale.mark_removals(ctx, cloud, tree, to_remove)
        template, files, params = await stacks.compose(ctx, cloud, hot, full)
        await stacks.update(ctx, cloud, stack, template, files, params, self.timing)
        after = await self._synced(ctx, cloud)
        scale.check_removed(after, to_remove)
        return after

    async def heal(
        self, ctx: InfraContext, vnfc_ids: Sequence[str], *, keep_storage: bool = True
    ) -> VnfResources:
        cloud = await self._cloud(ctx.vim)
        hot = load_base_hot(ctx.package, ctx.flavour)
        stack = await stacks.existing(ctx, cloud, self.timing)
        tree = await walk(cloud, hot, stack)
        ids = list(dict.fromkeys(vnfc_ids))
        before = await healing.mark_for_heal(
            ctx, cloud, tree, ids, keep_storage=keep_storage, timeout=self.timing.timeout
        )
        full = stacks.full_counts(hot, ctx.flavour, {}, tree)
        template, files, params = await stacks.compose(ctx, cloud, hot, full)
        await stacks.update(ctx, cloud, stack, template, files, params, self.timing)
        after = await self._synced(ctx, cloud)
        healing.check_healed(after, before)
        return after

    async def undeploy(self, ctx: InfraContext) -> None:
        cloud = await self._cloud(ctx.vim)
        await stacks.delete(ctx, cloud, self.timing)
        await addresses.release_all(ctx, cloud)

    async def current(self, ctx: InfraContext) -> VnfResources:
        cloud = await self._cloud(ctx.vim)
        stack = await asyncio.to_thread(cloud.find_stack, stack_name_of(ctx.instance_id))
        if stack is None or stack["stack_status"] == "DELETE_COMPLETE":
            return VnfResources()
        hot = load_base_hot(ctx.package, ctx.flavour)
        tree = await walk(cloud, hot, stack)
        return await read_resources(ctx, cloud, tree)

    async def probe(self, ctx: InfraContext, vnfc: Vnfc) -> str | None:
        cloud = await self._cloud(ctx.vim)
        server = await asyncio.to_thread(cloud.get_server, vnfc.server_id) if vnfc.server_id else None
        if server is None:
            return f"server {vnfc.server_id or '(none)'} does not exist"
        if server.get("status") != "ACTIVE":
            return f"server {server.get('name', vnfc.server_id)} is {server.get('status')}"
        return None

    async def reserve_address(self, ctx: InfraContext, cp_name: str, purpose: str) -> str:
        """The BaseHOT's own port `cp_name` (e.g. `vip_CP`) gives its address; for a VDU CP a port of
        vnfm's keeps one on that CP's network (see `addresses`)."""
        addresses.check_purpose(purpose)
        cloud = await self._cloud(ctx.vim)
        hot = load_base_hot(ctx.package, ctx.flavour)
        if cp_name in hot.standalone_ports(ctx.flavour):
            return await addresses.package_port_address(ctx, cloud, hot, cp_name, self.timing)
        if cp_name not in ctx.flavour.cps:
            known = sorted({*ctx.flavour.cps, *hot.standalone_ports(ctx.flavour)})
            raise UnprocessableEntity(
                f"CP {cp_name} is neither a CP of a VDU of flavour '{ctx.flavour.id}' nor a port of its own in "
                f"{hot.top_path}: cannot keep an address on its network (known: {', '.join(known) or 'none'})"
            )
        return await addresses.reserve(ctx, cloud, cp_name, purpose, await self.current(ctx))

    async def release_address(self, ctx: InfraContext, purpose: str) -> None:
        addresses.check_purpose(purpose)
        cloud = await self._cloud(ctx.vim)
        kept = await addresses.kept_for(cloud, ctx.instance_id, purpose)
        if kept:  # else nothing was kept (or it is the BaseHOT's own port, which goes with the stack)
            await addresses.release(ctx, cloud, purpose, kept, await self.current(ctx))

    async def _synced(self, ctx: InfraContext, cloud: Cloud) -> VnfResources:
        """The resources now, with the kept addresses allowed on the ports of VNFCs added since."""
        res = await self.current(ctx)
        await addresses.sync(ctx, cloud, res)
        return res

    # ================================================================== connections
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
