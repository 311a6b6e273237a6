"""Addresses kept for a purpose (`reserve_address` / `release_address`) against the local OpenStack:

* on a VDU CP (the example package's simple flavour): Neutron shows vnfm's port with the address,
  asking again gives the same, the CP's ports may carry it (allowed_address_pairs, kept through a
  stack update and given to a VNFC added by scale out), release and undeploy delete the port;
* a package whose BaseHOT has a `vip_CP` port of its own: that port's address, gone with the stack.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.infra.openstack.addresses import OWNER, port_name
from vnfm.adapters.infra.openstack.cloud import SdkCloud
from vnfm.adapters.infra.openstack.driver import HeatInfraDriver, stack_name_of
from vnfm.domain.model import Vim
from vnfm.domain.resources import VnfResources
from vnfm.packaging.csar import ExtractedPackage, build_csar, extract_to, read_csar
from vnfm.packaging.tosca import parse_vnfd
from vnfm.service.ports import InfraContext

from .packages import one_vdu_package

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.openstack]

VIP = "control-plane-vip"


def _named(cloud: SdkCloud, name: str) -> list[Any]:
    return list(cloud.conn.network.ports(name=name))


def _pairs(cloud: SdkCloud, port_id: str) -> list[str]:
    port = cloud.get_port(port_id)
    assert port is not None, f"Neutron has no port {port_id}"
    return [str(p["ip_address"]) for p in port.get("allowed_address_pairs") or []]


def _cp_ports(res: VnfResources, cpd_id: str) -> list[str]:
    return [c.port_id for v in res.vnfcs for c in v.cps if c.cpd_id == cpd_id]


async def test_address_on_a_vdu_cp(
    os_vim: Vim, os_cloud: SdkCloud, k8s_package: tuple[Any, ExtractedPackage], network_id: str, vnfd_image: str
) -> None:
    vnfd, files = k8s_package
    ext_cps = [{"cpdId": cp, "cpConfig": [{"cpProtocolData": []}]} for cp in ("masterNode_CP1", "workerNode_CP2")]
    ctx = InfraContext(
        instance_id=str(uuid.uuid4()), op_id=str(uuid.uuid4()), vnfd=vnfd, flavour=vnfd.flavour("simple"),
        package=files, vim=os_vim, ext_virtual_links=[{"id": "ext-1", "resourceId": network_id, "extCps": ext_cps}],
    )
    driver = HeatInfraDriver(timeout=300, poll_initial=0.5, poll_max=2.0)
    try:
        ctx.resources = res = await driver.deploy(ctx, {"masterNode": 1, "workerNode": 2})
        vip = await driver.reserve_address(ctx, "masterNode_CP1", VIP)
        (port,) = _named(os_cloud, port_name(ctx.instance_id, VIP))
        assert [f["ip_address"] for f in port.fixed_ips] == [vip]
        assert port.network_id == network_id and port.device_id == ctx.instance_id and port.device_owner == OWNER
        (master_port,) = _cp_ports(res, "masterNode_CP1")
        assert vip not in [f["ip_address"] for f in os_cloud.get_port(master_port)["fixed_ips"]]  # type: ignore[index]
        assert _pairs(os_cloud, master_port) == [vip], "the master's port may carry the VIP"
        assert await driver.reserve_address(ctx, "masterNode_CP1", VIP) == vip, "asking again gives the same"
        assert len(_named(os_cloud, port_name(ctx.instance_id, VIP))) == 1

        # an address on the workers' CP; scale out: the stack update keeps the pairs, the new VNFC gets them
        wvip = await driver.reserve_address(ctx, "workerNode_CP2", "ingress-vip")
        ctx.resources = res = await driver.update(ctx, {"masterNode": 1, "workerNode": 3}, [])
        workers = _cp_ports(res, "workerNode_CP2")
        assert len(workers) == 3 and all(_pairs(os_cloud, p) == [wvip] for p in workers)
        assert _pairs(os_cloud, master_port) == [vip]
        await driver.release_address(ctx, "ingress-vip")
        assert _named(os_cloud, port_name(ctx.instance_id, "ingress-vip")) == []
        assert all(_pairs(os_cloud, p) == [] for p in workers), "no port may carry a released address"
    finally:
        await driver.undeploy(ctx)
    assert os_cloud.find_stack(stack_name_of(ctx.instance_id)) is None
    assert _named(os_cloud, port_name(ctx.instance_id, VIP)) == [], "undeploy deletes the kept port"
    assert list(os_cloud.conn.network.ports(device_id=ctx.instance_id)) == []


async def test_the_base_hots_vip_port(
    tmp_path: Path, os_vim: Vim, os_cloud: SdkCloud, network_id: str, os_env: dict[str, str]
) -> None:
    network = os_env.get("VNFM_OS_NETWORK", "vnfm-ci-net")
    resources = {  # as the reference's HA flavour: a port of its own, its address allowed on the CP's port
        "vip_CP": {"type": "OS::Neutron::Port", "properties": {"network": network}},
        "CP1": {
            "type": "OS::Neutron::Port",
            "properties": {
                "network": {"get_param": ["nfv", "CP", "CP1", "network"]},
                "allowed_address_pairs": [{"ip_address": {"get_attr": ["vip_CP", "fixed_ips", 0, "ip_address"]}}],
            },
        },
    }
    image = os_env.get("VNFM_OS_IMAGE", "vnfm-ci-image")
    csar = read_csar(build_csar(one_vdu_package(tmp_path / "src", image, resources=resources)))
    vnfd = parse_vnfd(csar)
    extract_to(csar, tmp_path / "pkg")
    ctx = InfraContext(
        instance_id=str(uuid.uuid4()), op_id=str(uuid.uuid4()), vnfd=vnfd, flavour=vnfd.flavour("df"),
        package=ExtractedPackage(tmp_path / "pkg"), vim=os_vim,
        ext_virtual_links=[{"id": "ext-1", "resourceId": network_id, "extCps": [{"cpdId": "CP1"}]}],
    )
    driver = HeatInfraDriver(timeout=300, poll_initial=0.5, poll_max=2.0)
    try:
        ctx.resources = res = await driver.deploy(ctx, {"VDU1": 1})
        stack = os_cloud.find_stack(stack_name_of(ctx.instance_id))
        assert stack is not None
        (vip_res,) = [r for r in os_cloud.list_resources(stack["id"]) if r["resource_name"] == "vip_CP"]
        vip_port = os_cloud.get_port(vip_res["physical_resource_id"])
        assert vip_port is not None and vip_port["network_id"] == network_id
        vip = await driver.reserve_address(ctx, "vip_CP", VIP)
        assert vip == vip_port["fixed_ips"][0]["ip_address"], "the package's port gives the address"
        assert await driver.reserve_address(ctx, "vip_CP", VIP) == vip
        assert list(os_cloud.conn.network.ports(device_id=ctx.instance_id)) == [], "no port of vnfm's"
        assert _pairs(os_cloud, _cp_ports(res, "CP1")[0]) == [vip], "the package's template allows it on CP1"
        await driver.release_address(ctx, VIP)  # the stack's port: nothing to give back
        assert os_cloud.get_port(vip_port["id"]) is not None
    finally:
        await driver.undeploy(ctx)
    assert os_cloud.get_port(vip_port["id"]) is None, "gone with the stack"
