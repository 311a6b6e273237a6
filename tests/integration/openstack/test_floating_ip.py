"""A VNFC whose port has a floating IP (OS::Neutron::FloatingIP in the BaseHOT): the floating
address Neutron associated with the port is the one `vnfcCpInfo` reports, next to the port's fixed
address. The local cloud has an external network `vnfm-ci-ext` routed to the test network
(ci/openstack/cloud_setup.py; API only, nothing is forwarded)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from vnfm.adapters.infra.openstack.cloud import SdkCloud
from vnfm.adapters.infra.openstack.driver import HeatInfraDriver, stack_name_of
from vnfm.domain.model import Vim
from vnfm.packaging.csar import ExtractedPackage, build_csar, extract_to, read_csar
from vnfm.packaging.tosca import parse_vnfd
from vnfm.service.ports import InfraContext

from .packages import one_vdu_package

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.openstack]

FIP = {
    "FIP1": {
        "type": "OS::Neutron::FloatingIP",
        "properties": {"floating_network": "vnfm-ci-ext", "port_id": {"get_resource": "CP1"}},
    }
}


async def test_floating_ip_is_reported(
    tmp_path: Path, os_vim: Vim, os_cloud: SdkCloud, network_id: str, os_env: dict[str, str]
) -> None:
    if os_cloud.conn.network.find_network("vnfm-ci-ext") is None:
        pytest.fail("the local OpenStack has no external network vnfm-ci-ext (ci/openstack/cloud_setup.py)")
    image = os_env.get("VNFM_OS_IMAGE", "vnfm-ci-image")
    csar = read_csar(build_csar(one_vdu_package(tmp_path / "src", image, resources=FIP)))
    vnfd = parse_vnfd(csar)
    extract_to(csar, tmp_path / "pkg")
    ctx = InfraContext(
        instance_id=str(uuid.uuid4()),
        op_id=str(uuid.uuid4()),
        vnfd=vnfd,
        flavour=vnfd.flavour("df"),
        package=ExtractedPackage(tmp_path / "pkg"),
        vim=os_vim,
        ext_virtual_links=[{"id": "ext-1", "resourceId": network_id, "extCps": [{"cpdId": "CP1"}]}],
    )
    driver = HeatInfraDriver(timeout=300, poll_initial=0.5, poll_max=2.0)
    try:
        res = await driver.deploy(ctx, {"VDU1": 1})
        (vnfc,) = res.vnfcs
        (cp,) = vnfc.cps
        fips = [f for f in os_cloud.conn.network.ips(port_id=cp.port_id)]
        assert len(fips) == 1, f"Neutron has {len(fips)} floating IPs on port {cp.port_id}"
        assert cp.floating_ip == fips[0].floating_ip_address, (cp.floating_ip, fips[0].floating_ip_address)
        assert str(cp.floating_ip).startswith("172.24.91.")
        port = os_cloud.get_port(cp.port_id)
        assert port is not None and [f["ip_address"] for f in port["fixed_ips"]] == cp.ip_addresses
        assert fips[0].fixed_ip_address in cp.ip_addresses
        assert cp.ext_virtual_link_id == "ext-1"
    finally:
        await driver.undeploy(ctx)
    assert os_cloud.find_stack(stack_name_of(ctx.instance_id)) is None
    assert not [f for f in os_cloud.conn.network.ips(port_id=cp.port_id)], "the floating IP went with the stack"
