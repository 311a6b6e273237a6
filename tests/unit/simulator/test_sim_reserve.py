"""SimulatorInfraDriver.reserve_address / release_address: addresses no port ever gets (VIPs)."""

from __future__ import annotations

import ipaddress

import pytest

from vnfm.adapters.infra.simulator import MGMT_NETWORK_ID
from vnfm.domain.errors import NotFound, UnprocessableEntity

SMALL = {"masterNode": 1, "workerNode": 1, "storage_server": 0}


def _reservations(cloud, instance_id: str) -> list[dict]:
    return cloud.snapshot(instance_id)["deployments"][0]["reservations"]


async def test_reserve_is_idempotent_and_shown_in_the_snapshot(driver, cloud, make_ctx, net0):
    msgs: list[str] = []
    ctx = make_ctx(messages=msgs)
    res = await driver.deploy(ctx, SMALL)
    vip = await driver.reserve_address(ctx, "masterNode_CP1", "control-plane-vip")
    assert await driver.reserve_address(make_ctx(ctx.instance_id), "masterNode_CP1", "control-plane-vip") == vip
    # on the network of the CP's ports (here the request's external network), at the top of its subnet
    net = next(n for n in cloud.snapshot(ctx.instance_id)["networks"] if n["id"] == net0)
    assert ipaddress.ip_address(vip) in ipaddress.ip_network(net["cidr"])
    assert vip == str(list(ipaddress.ip_network(net["cidr"]).hosts())[-1])
    assert vip not in {a for v in res.vnfcs for c in v.cps for a in c.ip_addresses}
    [r] = _reservations(cloud, ctx.instance_id)
    assert (r["purpose"], r["address"], r["network_id"], r["cp_name"]) == (
        "control-plane-vip", vip, net0, "masterNode_CP1")
    assert any(vip in m and "control-plane-vip" in m for m in msgs)
    # a second purpose gets a second address; nothing resolves a reserved address to a server
    other = await driver.reserve_address(ctx, "workerNode_CP2", "ingress-vip")
    assert other != vip and cloud.server_by_address(vip) is None
    assert len(_reservations(cloud, ctx.instance_id)) == 2


async def test_distinct_across_instances_on_one_network(driver, cloud, make_ctx):
    links: list[dict] = []  # no extVirtualLinks: every external CP is on the management network
    a, b = make_ctx(links=links), make_ctx(links=links)
    await driver.deploy(a, SMALL)
    await driver.deploy(b, SMALL)
    va = await driver.reserve_address(a, "masterNode_CP1", "control-plane-vip")
    vb = await driver.reserve_address(b, "masterNode_CP1", "control-plane-vip")
    assert va != vb
    mgmt = ipaddress.ip_network(cloud.config.mgmt_cidr)
    assert ipaddress.ip_address(va) in mgmt and ipaddress.ip_address(vb) in mgmt
    assert {r["network_id"] for r in _reservations(cloud, a.instance_id)} == {MGMT_NETWORK_ID}


async def test_an_internal_vl_cp_reserves_on_its_network(driver, cloud, make_ctx):
    ctx = make_ctx()
    res = await driver.deploy(ctx, SMALL)
    addr = await driver.reserve_address(ctx, "workerNode_CP3", "internal-vip")
    internal = {vl.vld_id: vl for vl in res.virtual_links}["internalVL1"]
    assert ipaddress.ip_address(addr) in ipaddress.ip_network(internal.cidr)
    assert _reservations(cloud, ctx.instance_id)[0]["network_id"] == internal.network_id


async def test_never_given_to_a_later_port(driver, cloud, make_ctx, ext_links, net0):
    # a /28: hosts .1-.14, the gateway takes .1, ports start at .2; the reservation takes .14
    cloud.create_network("net0", "10.50.0.0/28", network_id=net0)
    ctx = make_ctx(links=ext_links(fixed_master="10.50.0.14"))
    await driver.deploy(make_ctx(ctx.instance_id, links=ext_links()), {"masterNode": 0, "workerNode": 0,
                                                                       "storage_server": 0})
    vip = await driver.reserve_address(ctx, "masterNode_CP1", "control-plane-vip")
    assert vip == "10.50.0.14"
    # asking for it as a fixed address does not get it; filling the subnet does not either
    res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 11, "storage_server": 0})
    taken = [c.ip_addresses[0] for v in res.vnfcs for c in v.cps if c.network_id == net0]
    assert len(taken) == 12 and vip not in taken
    with pytest.raises(Exception, match=r"no free address left in network net0 \(10.50.0.0/28\)"):
        await driver.deploy(ctx, {"masterNode": 1, "workerNode": 12, "storage_server": 0})


async def test_released_by_release_address_and_by_undeploy(driver, cloud, make_ctx):
    links: list[dict] = []
    a = make_ctx(links=links)
    await driver.deploy(a, SMALL)
    first = await driver.reserve_address(a, "masterNode_CP1", "control-plane-vip")
    await driver.release_address(a, "control-plane-vip")
    assert _reservations(cloud, a.instance_id) == []
    await driver.release_address(a, "control-plane-vip")  # none: no error
    assert await driver.reserve_address(a, "masterNode_CP1", "control-plane-vip") == first  # free again
    await driver.undeploy(a)
    b = make_ctx(links=links)
    await driver.deploy(b, SMALL)
    assert await driver.reserve_address(b, "masterNode_CP1", "control-plane-vip") == first


async def test_unknown_cp_or_deployment_is_an_error_naming_it(driver, make_ctx):
    ctx = make_ctx()
    with pytest.raises(NotFound, match=ctx.instance_id):
        await driver.reserve_address(ctx, "masterNode_CP1", "control-plane-vip")
    await driver.deploy(ctx, SMALL)
    with pytest.raises(UnprocessableEntity, match="'nosuch_CP' is neither a CP of a VDU of flavour 'simple'") as e:
        await driver.reserve_address(ctx, "nosuch_CP", "control-plane-vip")
    assert "masterNode_CP1" in str(e.value) and "nor a port of its own in its BaseHOT" in str(e.value)
