"""Addresses kept for a purpose on OpenStack (`reserve_address` / `release_address`), on the fake cloud:
a port of vnfm's on a VDU CP's network (idempotent, allowed on the CP's ports, gone on release and
undeploy), and the BaseHOT's own `vip_CP` port of an HA flavour."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import yaml

from tests.unit.openstack.fake_cloud import FakeCloud
from vnfm.adapters.infra.openstack.addresses import OWNER, port_name
from vnfm.adapters.infra.openstack.driver import HeatInfraDriver
from vnfm.adapters.infra.openstack.hot import load_base_hot
from vnfm.domain.errors import NotFound, OperationFailed, UnprocessableEntity
from vnfm.domain.model import Vim
from vnfm.domain.resources import VnfResources
from vnfm.domain.vnfd import Cp, Flavour, Vdu, Vnfd
from vnfm.packaging.csar import ExtractedPackage
from vnfm.service.ports import InfraContext

from .conftest import DictPackage, make_ctx

VIP = "control-plane-vip"
K8s = tuple[Vnfd, ExtractedPackage]


def kept(cloud: FakeCloud, instance_id: str) -> list[dict[str, Any]]:
    return cloud.list_ports(device_id=instance_id, device_owner=OWNER)


def pairs(cloud: FakeCloud, port_id: str) -> list[str]:
    return [p["ip_address"] for p in cloud.ports[port_id]["allowed_address_pairs"]]


def cp_ports(res: VnfResources, cpd_id: str) -> list[str]:
    return [c.port_id for v in res.vnfcs for c in v.cps if c.cpd_id == cpd_id]


# ====================================================================== a port of vnfm's on a VDU CP
async def test_reserve_on_a_vdu_cp_is_idempotent_allowed_on_its_ports_and_gone_with_undeploy(
    driver: HeatInfraDriver, cloud: FakeCloud, k8s: K8s
) -> None:
    ctx = make_ctx(k8s)
    ctx.resources = res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    (master_port,) = cp_ports(res, "masterNode_CP1")
    vip = await driver.reserve_address(ctx, "masterNode_CP1", VIP)
    (port,) = kept(cloud, ctx.instance_id)
    assert port["name"] == port_name(ctx.instance_id, VIP) and port["device_id"] == ctx.instance_id
    assert [f["ip_address"] for f in port["fixed_ips"]] == [vip]
    master = cloud.ports[master_port]
    assert port["network_id"] == master["network_id"] == "net-1"
    assert port["fixed_ips"][0]["subnet_id"] == master["fixed_ips"][0]["subnet_id"], "the masters' subnet"
    assert vip not in {f["ip_address"] for p in cloud.ports.values() if p["id"] != port["id"] for f in p["fixed_ips"]}
    assert pairs(cloud, master_port) == [vip], "keepalived may move the VIP onto the master's port"
    assert all(pairs(cloud, p) == [] for p in cp_ports(res, "workerNode_CP2")), "workers are not its holders"

    assert await driver.reserve_address(ctx, "masterNode_CP1", VIP) == vip, "asking again gives the same"
    assert [c[0] for c in cloud.calls].count("create_port") == 1 and len(kept(cloud, ctx.instance_id)) == 1
    assert pairs(cloud, master_port) == [vip], "no duplicate pair"
    with pytest.raises(UnprocessableEntity, match="kept on CP masterNode_CP1.*not on CP workerNode_CP2"):
        await driver.reserve_address(ctx, "workerNode_CP2", VIP)

    await driver.undeploy(ctx)
    assert kept(cloud, ctx.instance_id) == [] and port["id"] not in cloud.ports
    assert not [p for p in cloud.ports.values() if p["device_id"] == ctx.instance_id], "nothing orphaned"
    await driver.undeploy(ctx)  # again: nothing left, no error


async def test_scale_out_allows_the_address_on_new_ports_and_release_takes_it_back(
    driver: HeatInfraDriver, cloud: FakeCloud, k8s: K8s
) -> None:
    ctx = make_ctx(k8s)
    ctx.resources = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    vip = await driver.reserve_address(ctx, "workerNode_CP2", "ingress-vip")
    ctx.resources = res = await driver.update(ctx, {"masterNode": 1, "workerNode": 4}, [])
    workers = cp_ports(res, "workerNode_CP2")
    assert len(workers) == 4 and all(pairs(cloud, p) == [vip] for p in workers), "new VNFCs get the pair too"
    (master_port,) = cp_ports(res, "masterNode_CP1")
    assert pairs(cloud, master_port) == []

    await driver.release_address(ctx, "ingress-vip")
    assert kept(cloud, ctx.instance_id) == []
    assert all(pairs(cloud, p) == [] for p in workers), "no port may carry a released address"
    assert vip not in {f["ip_address"] for p in cloud.ports.values() for f in p["fixed_ips"]}
    n = len(cloud.calls)
    await driver.release_address(ctx, "ingress-vip")
    assert [c[0] for c in cloud.calls[n:]] == [], "releasing again changes nothing"
    await driver.undeploy(ctx)


async def test_a_retry_after_a_crash_finds_the_port_and_finishes(
    driver: HeatInfraDriver, cloud: FakeCloud, k8s: K8s, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = make_ctx(k8s)
    ctx.resources = res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})

    def crash(port_id: str, pairs: list[dict[str, Any]]) -> None:
        raise RuntimeError("vnfm died here")

    monkeypatch.setattr(cloud, "set_allowed_address_pairs", crash)
    with pytest.raises(RuntimeError):
        await driver.reserve_address(ctx, "masterNode_CP1", VIP)
    (port,) = kept(cloud, ctx.instance_id)
    monkeypatch.undo()
    vip = await driver.reserve_address(ctx, "masterNode_CP1", VIP)
    assert [f["ip_address"] for f in port["fixed_ips"]] == [vip] and len(kept(cloud, ctx.instance_id)) == 1
    assert pairs(cloud, cp_ports(res, "masterNode_CP1")[0]) == [vip]


async def test_two_callers_at_once_end_with_one_port(driver: HeatInfraDriver, cloud: FakeCloud, k8s: K8s) -> None:
    ctx = make_ctx(k8s)
    ctx.resources = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    a, b = await asyncio.gather(*(driver.reserve_address(ctx, "masterNode_CP1", VIP) for _ in range(2)))
    (port,) = kept(cloud, ctx.instance_id)
    assert a == b == port["fixed_ips"][0]["ip_address"]


async def test_reserved_before_deploy_on_the_requests_network_then_allowed_by_deploy(
    driver: HeatInfraDriver, cloud: FakeCloud, k8s: K8s
) -> None:
    ctx = make_ctx(k8s)
    vip = await driver.reserve_address(ctx, "masterNode_CP1", VIP)
    (port,) = kept(cloud, ctx.instance_id)
    assert port["network_id"] == "net-1", "extVirtualLinks[].resourceId of the CP"
    res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    assert pairs(cloud, cp_ports(res, "masterNode_CP1")[0]) == [vip]
    ctx.resources = res
    healed = await driver.heal(ctx, [res.of_vdu("masterNode")[0].id])
    assert pairs(cloud, cp_ports(healed, "masterNode_CP1")[0]) == [vip], "heal keeps the port and its pairs"
    await driver.undeploy(ctx)
    assert kept(cloud, ctx.instance_id) == []


async def test_errors_name_the_cp_and_the_network(driver: HeatInfraDriver, cloud: FakeCloud, k8s: K8s) -> None:
    ctx = make_ctx(k8s)
    ctx.resources = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    with pytest.raises(UnprocessableEntity, match="CP nope is neither a CP of a VDU of flavour 'simple'"):
        await driver.reserve_address(ctx, "nope", VIP)
    with pytest.raises(UnprocessableEntity, match="address purpose 'a b'"):
        await driver.reserve_address(ctx, "masterNode_CP1", "a b")
    cloud.network("net-1")["full"] = True
    with pytest.raises(OperationFailed, match=r"network net-1 \(CP masterNode_CP1\): .*No more IP addresses"):
        await driver.reserve_address(ctx, "masterNode_CP1", VIP)
    assert kept(cloud, ctx.instance_id) == []
    bare = make_ctx(k8s, ext_virtual_links=[])
    with pytest.raises(UnprocessableEntity, match="CP masterNode_CP1 of VNF instance .* no network in the request"):
        await driver.reserve_address(bare, "masterNode_CP1", VIP)


async def test_ports_without_port_security_need_no_pair(driver: HeatInfraDriver, cloud: FakeCloud, k8s: K8s) -> None:
    cloud.network("net-1")["port_security_enabled"] = False
    ctx = make_ctx(k8s)
    ctx.resources = res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    vip = await driver.reserve_address(ctx, "masterNode_CP1", VIP)
    assert vip and pairs(cloud, cp_ports(res, "masterNode_CP1")[0]) == []
    assert "set_allowed_address_pairs" not in [c[0] for c in cloud.calls]


async def test_undeploy_of_an_instance_that_never_reserved(driver: HeatInfraDriver, cloud: FakeCloud, k8s: K8s) -> None:
    ctx = make_ctx(k8s)
    await driver.undeploy(ctx)  # never deployed either
    await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
    await driver.undeploy(ctx)
    await driver.release_address(ctx, VIP)
    assert cloud.ports == {}


# ====================================================================== the BaseHOT's own port
def ha_package(vip_network: str = "net0") -> tuple[Flavour, DictPackage]:
    """A flavour whose masters are an AutoScalingGroup and whose top template has a `vip_CP` port of
    its own, its address allowed on the masters' ports (the shape of the reference's HA flavour)."""
    top = {
        "heat_template_version": "2013-05-23",
        "parameters": {"nfv": {"type": "json"}},
        "resources": {
            "master_instance": {"type": "OS::Heat::AutoScalingGroup", "properties": {
                "min_size": 3, "max_size": 3, "desired_capacity": 3,
                "resource": {"type": "nested_master.yaml", "properties": {
                    "flavor": {"get_param": ["nfv", "VDU", "masterNode", "flavor"]},
                    "image": {"get_param": ["nfv", "VDU", "masterNode", "image"]},
                    "net1": {"get_param": ["nfv", "CP", "masterNode_CP1", "network"]},
                    "vip_port_ip": {"get_attr": ["vip_CP", "fixed_ips", 0, "ip_address"]}}}}},
            "vip_CP": {"type": "OS::Neutron::Port", "properties": {"network": vip_network}},
        },
    }
    nested = {
        "heat_template_version": "2013-05-23",
        "parameters": {k: {"type": "string"} for k in ("flavor", "image", "net1", "vip_port_ip")},
        "resources": {
            "masterNode": {"type": "OS::Nova::Server", "properties": {
                "flavor": {"get_param": "flavor"}, "image": {"get_param": "image"},
                "networks": [{"port": {"get_resource": "masterNode_CP1"}}]}},
            "masterNode_CP1": {"type": "OS::Neutron::Port", "properties": {
                "network": {"get_param": "net1"},
                "allowed_address_pairs": [{"ip_address": {"get_param": "vip_port_ip"}}]}},
        },
    }
    pkg = DictPackage({
        "BaseHOT/complex/complex_hot_top.yaml": yaml.safe_dump(top).encode(),
        "BaseHOT/complex/nested/nested_master.yaml": yaml.safe_dump(nested).encode(),
    })
    flavour = Flavour(
        id="complex",
        vdus={"masterNode": Vdu("masterNode", "masterNode", min_instances=3, max_instances=3, sw_image="img",
                                num_cpus=1, memory_mb=512)},
        cps={"masterNode_CP1": Cp("masterNode_CP1", "masterNode")},
    )
    return flavour, pkg


def ha_ctx(flavour: Flavour, pkg: DictPackage) -> InfraContext:
    vnfd = Vnfd(id="d", version="1", provider="p", product_name="n", software_version="1",
                flavours={flavour.id: flavour})
    return InfraContext(instance_id="inst-ha", op_id="o", vnfd=vnfd, flavour=flavour, package=pkg,
                        vim=Vim(vim_type="openstack", name="os"),
                        ext_virtual_links=[{"id": "e", "resourceId": "net-9", "extCps": [{"cpdId": "masterNode_CP1"}]}])


def test_standalone_ports_of_a_base_hot(k8s: K8s) -> None:
    flavour, pkg = ha_package()
    assert load_base_hot(pkg, flavour).standalone_ports(flavour) == ["vip_CP"]
    vnfd, k8s_pkg = k8s
    assert load_base_hot(k8s_pkg, vnfd.flavour("simple")).standalone_ports(vnfd.flavour("simple")) == []
    # a top-template port that is a server's NIC is not standalone, even when the VNFD does not name it
    single = Flavour(id="df", vdus={"VDU1": Vdu("VDU1", "VDU1", sw_image="img")}, cps={})
    top = {"heat_template_version": "2018-08-31", "resources": {
        "VDU1": {"type": "OS::Nova::Server", "properties": {"networks": [{"port": {"get_resource": "nic"}}]}},
        "nic": {"type": "OS::Neutron::Port", "properties": {"network": "n"}},
        "spare": {"type": "OS::Neutron::Port", "properties": {"network": "n"}}}}
    hot = load_base_hot(DictPackage({"BaseHOT/df/top.yaml": yaml.safe_dump(top).encode()}), single)
    assert hot.standalone_ports(single) == ["spare"]


async def test_the_base_hots_vip_port_gives_the_address(driver: HeatInfraDriver, cloud: FakeCloud) -> None:
    flavour, pkg = ha_package()
    cloud.add_image("img")
    ctx = ha_ctx(flavour, pkg)
    with pytest.raises(NotFound, match="no stack"):
        await driver.reserve_address(ctx, "vip_CP", VIP)
    ctx.resources = await driver.deploy(ctx, {"masterNode": 3})
    stack = cloud.find_stack(f"vnf-{ctx.instance_id}")
    assert stack is not None
    (vip_res,) = [r for r in cloud.list_resources(stack["id"]) if r["resource_name"] == "vip_CP"]
    vip_port = cloud.ports[vip_res["physical_resource_id"]]
    assert vip_port["network_id"] == "net0", "the network the template names"
    vip = await driver.reserve_address(ctx, "vip_CP", VIP)
    assert vip == vip_port["fixed_ips"][0]["ip_address"]
    assert await driver.reserve_address(ctx, "vip_CP", VIP) == vip
    assert "create_port" not in [c[0] for c in cloud.calls] and kept(cloud, ctx.instance_id) == []
    await driver.release_address(ctx, VIP)  # the stack's port: nothing to give back
    assert vip_res["physical_resource_id"] in cloud.ports
    await driver.undeploy(ctx)
    assert vip_res["physical_resource_id"] not in cloud.ports, "gone with the stack"
