"""The Heat driver against the local OpenStack, with the example Kubernetes-cluster package (simple
flavour: a master AutoScalingGroup of 1 and a worker AutoScalingGroup of 2..6, nested server + port,
scaling policies). The tests of this module run in order on one VNF instance; every step is checked
against what Nova and Neutron report."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from vnfm.adapters.infra.openstack.cloud import OpenStackApiError, SdkCloud
from vnfm.adapters.infra.openstack.driver import HeatInfraDriver, HeatStackError, stack_name_of
from vnfm.domain.errors import OperationFailed
from vnfm.domain.model import Vim
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.service.ports import InfraContext

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.openstack]


@dataclass
class Scenario:
    ctx: InfraContext | None = None
    res: VnfResources = field(default_factory=VnfResources)
    timings: dict[str, float] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return Scenario()


def _ctx(
    vim: Vim, package: tuple[Any, Any], network_id: str, *, additional: dict[str, Any] | None = None
) -> tuple[InfraContext, list[str]]:
    vnfd, files = package
    log: list[str] = []
    ctx = InfraContext(
        instance_id=str(uuid.uuid4()),
        op_id=str(uuid.uuid4()),
        vnfd=vnfd,
        flavour=vnfd.flavour("simple"),
        package=files,
        vim=vim,
        ext_virtual_links=[
            {
                "id": "ext-net-1",
                "resourceId": network_id,
                "extCps": [
                    {"cpdId": "masterNode_CP1", "cpConfig": [{"cpProtocolData": []}]},
                    {"cpdId": "workerNode_CP2", "cpConfig": [{"cpProtocolData": []}]},
                ],
            }
        ],
        additional_params=additional or {},
    )
    ctx.progress = log.append
    return ctx, log


def _check_against_cloud(cloud: SdkCloud, res: VnfResources, network_id: str) -> None:
    """Every VNFC's server is ACTIVE in Nova, its port is on it in Neutron with the reported address."""
    for v in res.vnfcs:
        server = cloud.get_server(v.server_id)
        assert server is not None, f"Nova has no server {v.server_id} of VNFC {v.id}"
        assert server["status"] == "ACTIVE", f"server {v.server_id}: {server['status']}"
        assert len(v.cps) == 1, v
        cp = v.cps[0]
        port = cloud.get_port(cp.port_id)
        assert port is not None, f"Neutron has no port {cp.port_id}"
        assert port["device_id"] == v.server_id, f"port {cp.port_id} is on {port['device_id']}, not {v.server_id}"
        assert port["network_id"] == network_id == cp.network_id
        assert [f["ip_address"] for f in port["fixed_ips"]] == cp.ip_addresses and cp.ip_addresses
        assert cp.ext_virtual_link_id == "ext-net-1"


def _gone(cloud: SdkCloud, v: Vnfc) -> None:
    server = cloud.get_server(v.server_id)
    assert server is None or server.get("status") == "DELETED", f"server {v.server_id} still exists"
    for cp in v.cps:
        assert cloud.get_port(cp.port_id) is None, f"port {cp.port_id} still exists"


@pytest.mark.lifecycle
async def test_instantiate(
    heat_driver: HeatInfraDriver,
    os_vim: Vim,
    os_cloud: SdkCloud,
    k8s_package: tuple[Any, Any],
    network_id: str,
    vnfd_image: str,
    scenario: Scenario,
) -> None:
    ctx, scenario.log = _ctx(os_vim, k8s_package, network_id)
    scenario.ctx = ctx
    t0 = time.monotonic()
    res = await heat_driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    scenario.timings["instantiate"] = time.monotonic() - t0
    ctx.resources = scenario.res = res
    assert res.counts() == {"masterNode": 1, "workerNode": 2}
    assert res.stack_id
    _check_against_cloud(os_cloud, res, network_id)
    for v in res.vnfcs:
        assert v.metadata["image"] == vnfd_image
        assert v.metadata["flavor"] == "m1.medium"  # requested_additional_capability_name in the VNFD
    assert len(res.ids()) == 3
    # idempotent: deploying again with the same counts changes nothing
    again = await heat_driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    assert {(v.id, v.server_id) for v in again.vnfcs} == {(v.id, v.server_id) for v in res.vnfcs}


@pytest.mark.lifecycle
async def test_scale_out(heat_driver: HeatInfraDriver, os_cloud: SdkCloud, network_id: str, scenario: Scenario) -> None:
    ctx = scenario.ctx
    assert ctx is not None, "test_instantiate runs first"
    before = {v.id: v.server_id for v in scenario.res.vnfcs}
    t0 = time.monotonic()
    res = await heat_driver.update(ctx, {"masterNode": 1, "workerNode": 4}, [])
    scenario.timings["scale_out"] = time.monotonic() - t0
    ctx.resources = scenario.res = res
    assert res.counts() == {"masterNode": 1, "workerNode": 4}
    for vid, sid in before.items():
        v = res.by_id(vid)
        assert v is not None and v.server_id == sid, "scale out keeps the existing VNFCs untouched"
    new = [v for v in res.vnfcs if v.id not in before]
    assert len(new) == 2 and all(v.seq > max(x.seq for x in res.vnfcs if x.id in before) for v in new)
    _check_against_cloud(os_cloud, res, network_id)


@pytest.mark.lifecycle
async def test_scale_in(heat_driver: HeatInfraDriver, os_cloud: SdkCloud, network_id: str, scenario: Scenario) -> None:
    ctx = scenario.ctx
    assert ctx is not None, "test_instantiate runs first"
    workers = scenario.res.of_vdu("workerNode")
    assert len(workers) == 4
    # remove the first and the third worker (not the newest ones Heat would pick by itself)
    victims = [workers[0], workers[2]]
    t0 = time.monotonic()
    res = await heat_driver.update(ctx, {"masterNode": 1, "workerNode": 2}, [v.id for v in victims])
    scenario.timings["scale_in"] = time.monotonic() - t0
    ctx.resources = scenario.res = res
    assert res.counts() == {"masterNode": 1, "workerNode": 2}
    assert {v.id for v in res.of_vdu("workerNode")} == {workers[1].id, workers[3].id}
    for v in victims:
        _gone(os_cloud, v)
    _check_against_cloud(os_cloud, res, network_id)


@pytest.mark.lifecycle
async def test_heal_one_vnfc(
    heat_driver: HeatInfraDriver, os_cloud: SdkCloud, network_id: str, scenario: Scenario
) -> None:
    ctx = scenario.ctx
    assert ctx is not None, "test_instantiate runs first"
    target = scenario.res.of_vdu("workerNode")[0]
    others = {v.id: v.server_id for v in scenario.res.vnfcs if v.id != target.id}
    t0 = time.monotonic()
    res = await heat_driver.heal(ctx, [target.id])
    scenario.timings["heal_one"] = time.monotonic() - t0
    ctx.resources = scenario.res = res
    healed = res.by_id(target.id)
    assert healed is not None, "the VNFC keeps its id"
    assert healed.server_id != target.server_id, "a new server"
    assert healed.cps[0].port_id == target.cps[0].port_id, "the same port"
    assert healed.cps[0].ip_addresses == target.cps[0].ip_addresses, "the same address"
    assert os_cloud.get_server(target.server_id) is None, "the old server is deleted"
    assert {v.id: v.server_id for v in res.vnfcs if v.id != target.id} == others, "the others are untouched"
    assert res.counts() == {"masterNode": 1, "workerNode": 2}, "heal keeps the scaled capacity"
    _check_against_cloud(os_cloud, res, network_id)


@pytest.mark.lifecycle
async def test_heal_entire(
    heat_driver: HeatInfraDriver, os_cloud: SdkCloud, network_id: str, scenario: Scenario
) -> None:
    """Heal of the whole VNF as the engine does it: undeploy, then deploy with the current counts."""
    ctx = scenario.ctx
    assert ctx is not None, "test_instantiate runs first"
    old = scenario.res
    counts = old.counts()
    t0 = time.monotonic()
    await heat_driver.undeploy(ctx)
    ctx.resources = VnfResources()
    res = await heat_driver.deploy(ctx, counts)
    scenario.timings["heal_entire"] = time.monotonic() - t0
    ctx.resources = scenario.res = res
    assert res.counts() == counts
    assert res.stack_id != old.stack_id
    assert not (res.ids() & old.ids())
    for v in old.vnfcs:
        _gone(os_cloud, v)
    _check_against_cloud(os_cloud, res, network_id)


@pytest.mark.lifecycle
async def test_terminate(heat_driver: HeatInfraDriver, os_cloud: SdkCloud, scenario: Scenario) -> None:
    ctx = scenario.ctx
    assert ctx is not None, "test_instantiate runs first"
    t0 = time.monotonic()
    await heat_driver.undeploy(ctx)
    scenario.timings["terminate"] = time.monotonic() - t0
    assert os_cloud.find_stack(stack_name_of(ctx.instance_id)) is None
    for v in scenario.res.vnfcs:
        _gone(os_cloud, v)
    assert (await heat_driver.current(ctx)).vnfcs == []
    await heat_driver.undeploy(ctx)  # idempotent
    print("timings (s):", {k: round(v, 1) for k, v in scenario.timings.items()})


async def test_image_that_does_not_exist(
    heat_driver: HeatInfraDriver,
    os_vim: Vim,
    os_cloud: SdkCloud,
    k8s_package: tuple[Any, Any],
    network_id: str,
    vnfd_image: str,
) -> None:
    ctx, _ = _ctx(
        os_vim, k8s_package, network_id, additional={"nfv": {"VDU": {"workerNode": {"image": "no-such-image-x1"}}}}
    )
    try:
        with pytest.raises(OperationFailed) as err:
            await heat_driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
        assert isinstance(err.value, HeatStackError | OpenStackApiError)
        assert "no-such-image-x1" in str(err.value), str(err.value)
        print("failure reported:", err.value)
    finally:
        await heat_driver.undeploy(ctx)
    assert os_cloud.find_stack(stack_name_of(ctx.instance_id)) is None
