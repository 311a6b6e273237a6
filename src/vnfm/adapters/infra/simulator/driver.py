"""`SimulatorInfraDriver`: the InfraDriver of the embedded simulated cloud (vim_type "simulator").

It plays what Heat does for a VNF on OpenStack: one deployment (stack) per VNF instance, with
networks for the internal VLs, a port per CP (fixed IP, MAC; a floating IP for every external CP),
a volume per virtual storage and a server per VNFC. Servers boot in parallel. Every call converges:
calling it again after a failure or a crash completes what is missing and duplicates nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence
from typing import Any

from vnfm.adapters.infra.simulator import hot_ports
from vnfm.adapters.infra.simulator.cloud import SimCloud
from vnfm.adapters.infra.simulator.model import (
    MGMT_NETWORK_ID,
    CpSpec,
    ServerBuildError,
    ServerSpec,
    SimCloudError,
    StorageSpec,
)
from vnfm.adapters.infra.simulator.resources import resources_of
from vnfm.domain.errors import NotFound, UnprocessableEntity
from vnfm.domain.ext_links import ext_cp_map
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.domain.scaling import check_counts
from vnfm.domain.vnfd import Cp, Flavour
from vnfm.service.ports import InfraContext, InfraDriver

DEFAULT_VOLUME_GB = 1.0
__all__ = ["SimulatorInfraDriver", "resources_of"]


class SimulatorInfraDriver(InfraDriver):
    vim_type = "simulator"

    def __init__(self, cloud: SimCloud | None = None) -> None:
        self.cloud = cloud or SimCloud()

    # ================================================================== InfraDriver
    async def deploy(self, ctx: InfraContext, counts: dict[str, int]) -> VnfResources:
        check_counts(ctx.flavour, counts)
        existed = self.cloud.deployment(ctx.instance_id) is not None
        if not existed:
            await self._api()
        dep = self.cloud.ensure_deployment(ctx.instance_id, ctx.flavour.id, ctx.vnfd.id)
        if not existed:
            ctx.progress(f"stack {dep['stack_name']} ({dep['stack_id']}) created")
        action = (
            "CREATE"
            if dep["status"].startswith("CREATE") and dep["status"] != "CREATE_COMPLETE"
            else "UPDATE"
        )
        # a stack just created is CREATE_IN_PROGRESS already (Heat's create is one call)
        await self._run(ctx, action, self._converge(ctx, counts, (), dep), started=not existed)
        return await self.current(ctx)

    async def update(self, ctx: InfraContext, counts: dict[str, int], remove: Sequence[str]) -> VnfResources:
        check_counts(ctx.flavour, counts)
        if self.cloud.deployment(ctx.instance_id) is None:
            raise NotFound(f"the simulated cloud has no deployment for VNF instance {ctx.instance_id}")
        await self._run(ctx, "UPDATE", self._converge(ctx, counts, remove))
        return await self.current(ctx)

    async def heal(
        self, ctx: InfraContext, vnfc_ids: Sequence[str], *, keep_storage: bool = True
    ) -> VnfResources:
        dep = self.cloud.deployment(ctx.instance_id)
        if dep is None:
            raise NotFound(f"the simulated cloud has no deployment for VNF instance {ctx.instance_id}")
        unknown = [i for i in vnfc_ids if i not in dep["vnfcs"]]
        if unknown:
            raise UnprocessableEntity(
                f"VNFC instance(s) {', '.join(unknown)} do not exist in VNF instance {ctx.instance_id}"
            )
        ids = list(dict.fromkeys(vnfc_ids))
        await self._run(
            ctx, "UPDATE", self._gather([self._heal_one(ctx, i, keep_storage) for i in ids], "heal")
        )
        return await self.current(ctx)

    async def undeploy(self, ctx: InfraContext) -> None:
        dep = self.cloud.deployment(ctx.instance_id)
        if dep is None:
            self.cloud.drop_deployment(ctx.instance_id)  # leftover extras, if any
            return

        async def delete_all() -> None:
            await self._gather([self._remove_vnfc(ctx, vid) for vid in dep["vnfcs"]], "undeploy")

        await self._run(ctx, "DELETE", delete_all(), complete=False)
        await self._api()
        self.cloud.drop_deployment(ctx.instance_id)
        ctx.progress(f"stack {dep['stack_name']} ({dep['stack_id']}) deleted")

    async def current(self, ctx: InfraContext) -> VnfResources:
        return resources_of(self.cloud.instance_state(ctx.instance_id), ctx.instance_id)

    async def reserve_address(self, ctx: InfraContext, cp_name: str, purpose: str) -> str:
        """An address of the network of CP `cp_name` (found as its ports' is) that the simulated
        cloud records as taken by the deployment: no port ever gets it."""
        cp = ctx.flavour.cps.get(cp_name)
        own = None if cp is not None and cp.vdu_id in ctx.flavour.vdus else \
            hot_ports.own_port_network(ctx.package, ctx.flavour, cp_name)
        if (cp is None or cp.vdu_id not in ctx.flavour.vdus) and own is None:
            known = ", ".join(sorted(c.id for c in ctx.flavour.cps.values() if c.vdu_id in ctx.flavour.vdus))
            raise UnprocessableEntity(
                f"cannot reserve an address for {purpose}: '{cp_name}' is neither a CP of a VDU of flavour "
                f"'{ctx.flavour.id}' (known: {known or 'none'}) nor a port of its own in its BaseHOT"
            )
        if self.cloud.deployment(ctx.instance_id) is None:
            raise NotFound(f"the simulated cloud has no deployment for VNF instance {ctx.instance_id}")
        if own is None:
            network_id = await self._cp_network(ctx, ctx.flavour.cps[cp_name], ext_cp_map(ctx.ext_virtual_links))
        else:
            network_id = await self._own_port_network(ctx, cp_name, *own)
        await self._api()
        address = self.cloud.reserve_address(ctx.instance_id, network_id, purpose, cp_name)
        ctx.progress(f"address {address} of network {network_id} reserved for {purpose}")
        return address

    async def _own_port_network(self, ctx: InfraContext, cp_name: str, with_cp: str | None, named: str | None) -> str:
        """The network of the BaseHOT's own port `cp_name` (see hot_ports)."""
        net = self.cloud.find_network(named) if named else None
        if net is not None:
            return str(net["id"])
        if with_cp is None:
            raise UnprocessableEntity(f"BaseHOT port {cp_name}: network '{named}' does not exist on the "
                                      "simulated cloud")
        network_id = await self._cp_network(ctx, ctx.flavour.cps[with_cp], ext_cp_map(ctx.ext_virtual_links))
        if named:
            ctx.progress(f"BaseHOT port {cp_name}: network '{named}' is not one of the simulated cloud's; its address "
                         f"goes on the network of {with_cp} (the CP whose servers the template gives it to)")
        return network_id

    async def release_address(self, ctx: InfraContext, purpose: str) -> None:
        await self._api()
        address = self.cloud.release_address(ctx.instance_id, purpose)
        if address is not None:
            ctx.progress(f"address {address} reserved for {purpose} released")

    # ================================================================== orchestration
    async def probe(self, ctx: InfraContext, vnfc: Vnfc) -> str | None:
        """Up and reachable: the server is ACTIVE and answers on SSH (fault injection can say no)."""
        await self._api()
        return _down(self.cloud.server(vnfc.server_id), vnfc)

    async def probe_all(self, ctx: InfraContext, vnfcs: Sequence[Vnfc]) -> list[str | None]:
        """`probe` of each, in one read of the simulated cloud (the health watcher's per round)."""
        await self._api()
        servers = self.cloud.servers([v.server_id for v in vnfcs])
        return [_down(servers.get(v.server_id), v) for v in vnfcs]

    async def _api(self) -> None:
        if self.cloud.config.api_latency > 0:
            await asyncio.sleep(self.cloud.config.api_latency)

    async def _run(
        self, ctx: InfraContext, action: str, work: Awaitable[None], *, complete: bool = True,
        started: bool = False,
    ) -> None:
        """`work` with the deployment's status around it (`started`: it is {action}_IN_PROGRESS)."""
        if not started:
            self.cloud.set_deployment_status(ctx.instance_id, f"{action}_IN_PROGRESS")
        try:
            await work
        except Exception as exc:
            self.cloud.set_deployment_status(ctx.instance_id, f"{action}_FAILED", str(exc))
            raise
        if complete:
            self.cloud.set_deployment_status(ctx.instance_id, f"{action}_COMPLETE")

    @staticmethod
    async def _gather(aws: list[Awaitable[None]], what: str) -> None:
        results = await asyncio.gather(*aws, return_exceptions=True)
        errors: list[Exception] = []
        for r in results:
            if isinstance(r, Exception):
                errors.append(r)
            elif isinstance(r, BaseException):
                raise r
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise SimCloudError(f"{what}: {len(errors)} failures: " + "; ".join(str(e) for e in errors))

    async def _converge(self, ctx: InfraContext, counts: dict[str, int], remove: Sequence[str],
                        dep: dict[str, Any] | None = None) -> None:
        """`dep`: the deployment as just read or written (only its status may have changed since)."""
        dep = dep or self.cloud.deployment(ctx.instance_id)
        assert dep is not None
        present: dict[str, dict[str, Any]] = dep["vnfcs"]
        removed_before: dict[str, str] = dep["removed"]
        unknown = [i for i in remove if i not in present and i not in removed_before]
        if unknown:
            raise UnprocessableEntity(
                f"VNFC instance(s) {', '.join(unknown)} to remove do not exist "
                f"in VNF instance {ctx.instance_id}"
            )
        to_remove = [i for i in dict.fromkeys(remove) if i in present]
        foreign = [i for i in to_remove if present[i]["vdu_id"] not in ctx.flavour.vdus]
        if foreign:
            raise UnprocessableEntity(
                f"VNFC instance(s) {', '.join(foreign)} belong to no VDU of the flavour"
            )
        to_add: dict[str, int] = {}
        for vdu_id in ctx.flavour.vdus:
            cur = [v for v in present.values() if v["vdu_id"] == vdu_id]
            rm = [i for i in to_remove if present[i]["vdu_id"] == vdu_id]
            target = counts.get(vdu_id, len(cur) - len(rm))
            if target < 0:
                raise UnprocessableEntity(f"VDU {vdu_id}: negative count {target}")
            shrink = len(cur) - target
            if shrink > 0 and not remove and not rm:
                raise UnprocessableEntity(
                    f"VDU {vdu_id} has {len(cur)} VNFCs, more than the {target} asked: name the VNFCs to "
                    f"remove (update with `remove`)"
                )
            if max(shrink, 0) != len(rm):
                raise UnprocessableEntity(
                    f"VDU {vdu_id}: going from {len(cur)} to {target} VNFCs removes {max(shrink, 0)}, "
                    f"but `remove` names {len(rm)} of its VNFCs ({', '.join(rm) or 'none'})"
                )
            if target > len(cur) - len(rm):
                to_add[vdu_id] = target - (len(cur) - len(rm))

        if to_remove:
            ctx.progress(f"removing VNFCs {', '.join(to_remove)}")
            await self._gather([self._remove_vnfc(ctx, vid) for vid in to_remove], "scale in")

        await self._ensure_internal_networks(ctx)
        specs = {vdu_id: await self._cp_specs(ctx, vdu_id) for vdu_id in to_add}  # networks made here
        with self.cloud.atomic():  # the new VNFCs of every VDU: one transaction (one stack update)
            added = {vdu_id: self.cloud.add_vnfcs(ctx.instance_id, vdu_id, n, specs[vdu_id],
                                                  _storage_specs(ctx.flavour, vdu_id),
                                                  _server_spec(ctx.flavour, vdu_id))
                     for vdu_id, n in to_add.items()}
        for vdu_id, new_ids in added.items():
            ctx.progress(f"VDU {vdu_id}: adding {len(new_ids)} VNFC(s) {', '.join(new_ids)}")

        # Bring up every VNFC whose server is missing, still building or in ERROR (a retry lands here).
        state = self.cloud.instance_state(ctx.instance_id)
        pending = [
            vid
            for vid, v in state["deployments"][ctx.instance_id]["vnfcs"].items()
            if _needs_bring_up(state, v)
        ]
        # each VNFC's bring-up starts from this read: only it changes that VNFC's records
        await self._gather([self._bring_up(ctx, vid, state) for vid in pending], "deploy")

    async def _ensure_internal_networks(self, ctx: InfraContext) -> None:
        vls = dict(ctx.flavour.virtual_links)
        for cp in ctx.flavour.cps.values():
            if cp.virtual_link and cp.virtual_link not in vls:
                vls[cp.virtual_link] = None  # type: ignore[assignment]
        if not vls:
            return
        dep = self.cloud.deployment(ctx.instance_id) or {}
        state_nets = self.cloud.instance_state(ctx.instance_id)["networks"]
        for vld_id, vl in vls.items():
            have = dep.get("virtual_links", {}).get(vld_id)
            if have and have["network_id"] in state_nets:
                continue
            await self._api()
            net, _ = self.cloud.ensure_internal_network(ctx.instance_id, vld_id, vl.cidr if vl else None)
            ctx.progress(f"network {net['name']} ({net['cidr']}) created for VL {vld_id}")

    async def _cp_specs(self, ctx: InfraContext, vdu_id: str) -> list[CpSpec]:
        ext = ext_cp_map(ctx.ext_virtual_links)
        specs: list[CpSpec] = []
        first_external = True
        for cp in ctx.flavour.cps_of(vdu_id):
            network_id = await self._cp_network(ctx, cp, ext)
            if cp.virtual_link:
                specs.append(CpSpec(cp.id, network_id, external=False, virtual_link_id=cp.virtual_link))
                continue
            names = [f"{cp.id}_FloatingIP"]
            if first_external:
                names.insert(0, f"{vdu_id}_FloatingIP")
                first_external = False
            evl_id, _, fixed = ext.get(cp.id, (None, "", []))
            specs.append(
                CpSpec(
                    cp.id,
                    network_id,
                    external=True,
                    ext_virtual_link_id=evl_id,
                    fixed_addresses=tuple(fixed),
                    resource_names=tuple(names),
                )
            )
        return specs

    async def _cp_network(self, ctx: InfraContext, cp: Cp, ext: dict[str, tuple[str, str, list[str]]]) -> str:
        """The network the ports of CP `cp` go on (created when missing): its internal VL's, the
        network its extVirtualLink names, else the management network."""
        if cp.virtual_link:
            dep = self.cloud.deployment(ctx.instance_id) or {}
            vl = dep.get("virtual_links", {}).get(cp.virtual_link)
            if vl is None:
                _, vl = self.cloud.ensure_internal_network(ctx.instance_id, cp.virtual_link)
            return str(vl["network_id"])
        if cp.id in ext:
            evl_id, network_id, fixed = ext[cp.id]
            await self._api()
            return str(self.cloud.ensure_external_network(network_id, evl_id, fixed[0] if fixed else None)["id"])
        self.cloud.ensure_mgmt_network()
        return MGMT_NETWORK_ID

    async def _bring_up(self, ctx: InfraContext, vnfc_id: str, state: dict[str, Any] | None = None) -> None:
        """Create what a VNFC lacks (ports, floating IPs, volumes, server) and boot its server.
        `state`: the instance's records as read since its VNFC's last change (else read now)."""
        state = state or self.cloud.instance_state(ctx.instance_id)
        vnfc = state["deployments"][ctx.instance_id]["vnfcs"][vnfc_id]
        for cpd_id, cp in vnfc["cps"].items():
            port = state["ports"].get(cp["port_id"] or "")
            if port is None or (cp["external"] and not port.get("floating_ip_id")):
                await self._api()
                self.cloud.ensure_port(ctx.instance_id, vnfc_id, cpd_id)
        for vsd_id, st in vnfc["storages"].items():
            if st["volume_id"] not in state["volumes"]:
                await self._api()
                vol, _ = self.cloud.ensure_volume(ctx.instance_id, vnfc_id, vsd_id, ctx.op_id)
                ctx.progress(f"volume {vol['name']} ({vol['id']}, {vol['size']} GB) created")
        server = state["servers"].get(vnfc["server_id"] or "")
        if server is not None and server["status"] == "ERROR":
            ctx.progress(f"server {server['name']} ({server['id']}) is in ERROR: replacing it")
            await self._delete_server(ctx, server["id"])
            server = None
        if server is None:
            await self._api()
            # a boot that takes no time ends in the create's transaction (nothing could see BUILD)
            server = self.cloud.create_server(ctx.instance_id, vnfc_id, ctx.op_id,
                                              boot=self.cloud.config.boot_time <= 0)
            if server["status"] == "BUILD":
                ctx.progress(f"server {server['name']} ({server['id']}) building")
        if server["status"] == "BUILD":
            wait = min(self.cloud.config.boot_time, server["boot_until"] - time.time())
            if wait > 0:
                await asyncio.sleep(wait)
            server = self.cloud.finish_boot(server["id"])
        if server["status"] == "ERROR":
            reason = (server.get("fault") or {}).get("message") or "unknown fault"
            raise ServerBuildError(server["id"], server["name"], reason)
        ctx.progress(f"server {server['name']} ({server['id']}) {server['status']}")

    async def _delete_server(self, ctx: InfraContext, server_id: str) -> None:
        await self._api()
        server = self.cloud.begin_delete_server(server_id)
        if server is None:
            return
        if self.cloud.config.delete_time > 0:
            await asyncio.sleep(self.cloud.config.delete_time)
        self.cloud.finish_delete_server(server_id)
        ctx.progress(f"server {server['name']} ({server_id}) deleted")

    async def _remove_vnfc(self, ctx: InfraContext, vnfc_id: str) -> None:
        dep = self.cloud.deployment(ctx.instance_id)
        vnfc = (dep or {}).get("vnfcs", {}).get(vnfc_id)
        if vnfc is None:
            return
        if vnfc["server_id"]:
            await self._delete_server(ctx, vnfc["server_id"])
        await self._api()
        self.cloud.remove_vnfc(ctx.instance_id, vnfc_id)
        ctx.progress(f"VNFC {vnfc['name']} ({vnfc_id}) removed")

    async def _heal_one(self, ctx: InfraContext, vnfc_id: str, keep_storage: bool) -> None:
        state = self.cloud.instance_state(ctx.instance_id)
        vnfc = state["deployments"][ctx.instance_id]["vnfcs"][vnfc_id]
        server = state["servers"].get(vnfc["server_id"] or "")
        op = ctx.op_id
        # A retry of the same operation after its server was already replaced only completes it.
        replaced = bool(op) and server is not None and server.get("op_id") == op
        if not replaced:
            if server is not None:
                await self._delete_server(ctx, server["id"])
            if not keep_storage:
                for vsd_id, st in vnfc["storages"].items():
                    vol = state["volumes"].get(st["volume_id"] or "")
                    if vol is not None and (not op or vol.get("op_id") != op):
                        await self._api()
                        self.cloud.delete_volume(ctx.instance_id, vnfc_id, vsd_id)
                        ctx.progress(f"volume {vol['name']} ({vol['id']}) deleted")
        await self._bring_up(ctx, vnfc_id)


# ====================================================================== helpers
def _needs_bring_up(state: dict[str, Any], vnfc: dict[str, Any]) -> bool:
    server = state["servers"].get(vnfc["server_id"] or "")
    if server is None or server["status"] in ("BUILD", "ERROR"):
        return True
    if any(cp["port_id"] not in state["ports"] for cp in vnfc["cps"].values()):
        return True
    return any(st["volume_id"] not in state["volumes"] for st in vnfc["storages"].values())


def _storage_specs(flavour: Flavour, vdu_id: str) -> list[StorageSpec]:
    specs = []
    for vsd_id in flavour.vdus[vdu_id].storages:
        vs = flavour.storages.get(vsd_id)
        specs.append(
            StorageSpec(
                id=vsd_id,
                size_gb=(vs.size_gb if vs and vs.size_gb else DEFAULT_VOLUME_GB),
                image=vs.image if vs else None,
                type_of_storage=vs.type_of_storage if vs else "BLOCK",
            )
        )
    return specs


def _server_spec(flavour: Flavour, vdu_id: str) -> ServerSpec:
    vdu = flavour.vdus[vdu_id]
    image = vdu.sw_image
    if image is None:  # boots from a volume made of an image
        image = next((flavour.storages[s].image for s in vdu.storages if s in flavour.storages), None)
    name = f"sim.{vdu.num_cpus or 1}vcpu.{vdu.memory_mb or 2048}mb" if vdu.num_cpus or vdu.memory_mb else "m1.medium"
    return ServerSpec(image=image, flavor=name, vcpus=vdu.num_cpus, ram_mb=vdu.memory_mb)


def _down(server: dict[str, Any] | None, vnfc: Vnfc) -> str | None:
    if server is None:
        return f"server {vnfc.server_id} does not exist"
    if server.get("status") != "ACTIVE":
        return f"server {server.get('name', vnfc.server_id)} is {server.get('status')}"
    if not server.get("ssh_reachable", True):
        return f"server {server.get('name', vnfc.server_id)} does not answer on SSH"
    return None
