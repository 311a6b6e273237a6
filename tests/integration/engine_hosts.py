"""The real engine over real hosts: every server of the simulated cloud is backed by a test host.

`HostBackedInfra` is the simulated cloud's infrastructure driver with one addition: after each
call that creates, replaces or deletes servers it brings the test hosts in line with the VNF's
resources. A VNFC gets a host whose address IS the simulated port's address (the simulated
management network is a /24 on the test bridge, SIM_NET), so etcd, HAProxy and /etc/hosts see the
addresses the driver computed; a floating IP is destination NAT to the fixed address in the
VNFM's namespace (on no interface, as on a cloud: only the VNFM reaches hosts by it). A healed
VNFC's new server is the same host rebuilt: every process dies, its disk (overlay and state
directories) starts empty and sshd gets a NEW host key (`TestHost.replace`); a removed VNFC's host
is destroyed. Each new or rebuilt host is provisioned
like the VM image would be (`Provision`: the kubeadm/kubelet/kubectl stand-ins and the cluster's
PKI, see kubernetes/standins.py: no Kubernetes can run here).

Management drivers reach the hosts through the production `SshAccess` (real SSH, pinned host
keys): nothing in the engine, the drivers or the node access knows it runs on test hosts.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from tests.integration.harness import Testbed, TestHost
from vnfm.adapters.infra.simulator import SimulatorInfraDriver
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.service.ports import InfraContext, InfraDriver

SIM_NET = os.environ.get("VNFM_ITEST_SIM_NET", "10.233.0")
SIM_CIDR = f"{SIM_NET}.0/24"  # the simulated management network (fixed addresses, the VIP)
SIM_PUBLIC_NET = os.environ.get("VNFM_ITEST_SIM_PUBLIC_NET", "10.233.1")
SIM_PUBLIC_CIDR = f"{SIM_PUBLIC_NET}.0/24"  # its floating IPs: NAT to the fixed address

# (the pool, the host, the VNFC it backs now) -> None: makes a fresh host what the VM image holds
Provision = Callable[["HostPool", TestHost, Vnfc], Awaitable[None]]


@dataclass
class Backing:
    host: TestHost
    vnfc_id: str
    vdu_id: str
    server_id: str
    floating: tuple[str, ...] = ()
    rebuilt: int = 0  # how often the cloud replaced this VNFC's server


@dataclass
class HostPool:
    """VNFC id -> the test host backing its current server."""

    bed: Testbed
    provision: Provision
    by_vnfc: dict[str, Backing] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)  # "start|rebuild|remove <vnfc> <address>"

    def hosts(self, vdu_id: str | None = None) -> list[TestHost]:
        return [b.host for b in self.by_vnfc.values() if vdu_id is None or b.vdu_id == vdu_id]

    def host_of(self, vnfc_id: str) -> TestHost:
        return self.by_vnfc[vnfc_id].host

    async def sync(self, resources: VnfResources) -> None:
        """Start, rebuild or destroy hosts so that each built VNFC's server is one running host."""
        live = {v.id: v for v in resources.vnfcs if not v.never_built}
        gone = [b for k, b in self.by_vnfc.items() if k not in live]
        if gone:
            self.bed.destroy_hosts([b.host for b in gone])
            for b in gone:
                self.events.append(f"remove {b.vnfc_id} {b.host.address}")
                for f in b.floating:
                    self.bed.remove_floating_ip(f)
                del self.by_vnfc[b.vnfc_id]
        fresh: list[tuple[TestHost, Vnfc]] = []
        new = [v for k, v in live.items() if k not in self.by_vnfc]
        if new:
            hosts = self.bed.start_hosts(len(new), [addresses_of(v)[:1] for v in new])
            for h, v in zip(hosts, new, strict=True):
                floating = tuple(addresses_of(v)[1:])
                for f in floating:
                    self.bed.add_floating_ip(f, h.address)
                self.by_vnfc[v.id] = Backing(h, v.id, v.vdu_id, v.server_id, floating)
                self.events.append(f"start {v.id} {h.address}")
                fresh.append((h, v))
        for k, v in live.items():
            b = self.by_vnfc[k]
            if b.server_id != v.server_id:
                b.host.replace()
                b.server_id, b.rebuilt = v.server_id, b.rebuilt + 1
                self.events.append(f"rebuild {k} {b.host.address}")
                fresh.append((b.host, v))
        await asyncio.gather(*(self.provision(self, h, v) for h, v in fresh))


def addresses_of(vnfc: Vnfc) -> list[str]:
    """The VNFC's fixed address on the simulated management network (the host's own), then its
    floating IPs."""
    net, public = ipaddress.ip_network(SIM_CIDR), ipaddress.ip_network(SIM_PUBLIC_CIDR)
    fixed = [a for cp in vnfc.cps for a in cp.ip_addresses if ipaddress.ip_address(a) in net]
    floating = [cp.floating_ip for cp in vnfc.cps if cp.floating_ip]
    if not fixed or any(ipaddress.ip_address(f) not in public for f in floating):
        raise AssertionError(f"VNFC {vnfc.id}: addresses outside {SIM_CIDR} / {SIM_PUBLIC_CIDR}: {vnfc.cps}")
    return [fixed[0], *floating]


class HostBackedInfra(InfraDriver):
    """The simulated cloud's driver; the pool follows every change of servers it makes."""

    vim_type = "simulator"

    def __init__(self, inner: SimulatorInfraDriver, pool: HostPool) -> None:
        self.inner = inner
        self.pool = pool

    async def deploy(self, ctx: InfraContext, counts: dict[str, int]) -> VnfResources:
        res = await self.inner.deploy(ctx, counts)
        await self.pool.sync(res)
        return res

    async def update(self, ctx: InfraContext, counts: dict[str, int], remove: Sequence[str]) -> VnfResources:
        res = await self.inner.update(ctx, counts, remove)
        await self.pool.sync(res)
        return res

    async def heal(self, ctx: InfraContext, vnfc_ids: Sequence[str], *, keep_storage: bool = True) -> VnfResources:
        res = await self.inner.heal(ctx, vnfc_ids, keep_storage=keep_storage)
        await self.pool.sync(res)
        return res

    async def undeploy(self, ctx: InfraContext) -> None:
        await self.inner.undeploy(ctx)
        await self.pool.sync(VnfResources())

    async def current(self, ctx: InfraContext) -> VnfResources:
        return await self.inner.current(ctx)

    async def probe(self, ctx: InfraContext, vnfc: Vnfc) -> str | None:
        return await self.inner.probe(ctx, vnfc)

    async def reserve_address(self, ctx: InfraContext, cp_name: str, purpose: str) -> str:
        return await self.inner.reserve_address(ctx, cp_name, purpose)

    async def release_address(self, ctx: InfraContext, purpose: str) -> None:
        await self.inner.release_address(ctx, purpose)
