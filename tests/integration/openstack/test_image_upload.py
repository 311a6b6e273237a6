"""A package that carries its VDU's image (a `tosca.artifacts.nfv.SwImage` artifact): when Glance has
no image of that name, the Heat driver uploads the file from the package, and the server Nova boots
runs that image. A second deploy finds the image and uploads nothing. Uploaded images are kept on
terminate (driver docstring); this test deletes its own."""

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

IMAGE_BYTES = b"vnfm-it-image\0" * 40_000  # ~560 KB of raw "disk": the fake virt driver boots nothing


async def test_image_uploaded_from_the_package(
    tmp_path: Path, os_vim: Vim, os_cloud: SdkCloud, network_id: str
) -> None:
    image_name = f"vnfm-it-{uuid.uuid4().hex[:8]}"
    assert os_cloud.find_image(image_name) is None
    csar = read_csar(build_csar(one_vdu_package(tmp_path / "src", image_name, image=IMAGE_BYTES)))
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
    progress: list[str] = []
    ctx.progress = progress.append
    driver = HeatInfraDriver(timeout=300, poll_initial=0.5, poll_max=2.0)
    try:
        res = await driver.deploy(ctx, {"VDU1": 1})
        image = os_cloud.find_image(image_name)
        assert image is not None, f"Glance has no image {image_name}; progress: {progress}"
        assert image["status"] == "active" and image["disk_format"] == "raw"
        assert image["size"] == len(IMAGE_BYTES)
        assert any("uploading" in line and image_name in line for line in progress), progress
        (vnfc,) = res.vnfcs
        server = os_cloud.get_server(vnfc.server_id)
        assert server is not None and server["status"] == "ACTIVE"
        assert (server.get("image") or {}).get("id") == image["id"], server.get("image")
        # deploy again: the image is found by name, nothing is uploaded a second time
        progress.clear()
        await driver.deploy(ctx, {"VDU1": 1})
        assert not any("uploading" in line for line in progress), progress
        assert len([i for i in os_cloud.conn.image.images(name=image_name)]) == 1
    finally:
        await driver.undeploy(ctx)
        found = os_cloud.find_image(image_name)
        assert os_cloud.find_stack(stack_name_of(ctx.instance_id)) is None
        if found is not None:  # kept by terminate, by design: this test removes its own
            os_cloud.conn.image.delete_image(found["id"], ignore_missing=True)
