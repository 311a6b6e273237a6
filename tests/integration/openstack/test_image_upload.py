"""A package that carries its VDU's image (a `tosca.artifacts.nfv.SwImage` artifact): when Glance has
no image of that name, the Heat driver uploads the file from the package, and the server Nova boots
runs that image. A second deploy finds the image and uploads nothing. Uploaded images are kept on
terminate (driver docstring); this test deletes its own."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml

from vnfm.adapters.infra.openstack.cloud import SdkCloud
from vnfm.adapters.infra.openstack.driver import HeatInfraDriver, stack_name_of
from vnfm.domain.model import Vim
from vnfm.packaging.csar import ExtractedPackage, build_csar, extract_to, read_csar
from vnfm.packaging.tosca import parse_vnfd
from vnfm.service.ports import InfraContext

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.openstack]

IMAGE_BYTES = b"vnfm-it-image\0" * 40_000  # ~560 KB of raw "disk": the fake virt driver boots nothing


def _package_dir(root: Path, image_name: str) -> Path:
    """A one-VDU package: VNFD with sw_image_data + artifact, the image file, a BaseHOT with a server
    and its port."""
    (root / "TOSCA-Metadata").mkdir(parents=True)
    (root / "TOSCA-Metadata" / "TOSCA.meta").write_text(
        "TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-by: vnfm tests\n"
        "Entry-Definitions: Definitions/vnfd.yaml\n"
    )
    (root / "Files" / "images").mkdir(parents=True)
    (root / "Files" / "images" / "it.img").write_bytes(IMAGE_BYTES)
    vnfd = {
        "tosca_definitions_version": "tosca_simple_yaml_1_2",
        "topology_template": {
            "substitution_mappings": {"node_type": "tosca.nodes.nfv.VNF", "properties": {"flavour_id": "df"}},
            "node_templates": {
                "VNF": {
                    "type": "tosca.nodes.nfv.VNF",
                    "properties": {
                        "descriptor_id": "b1bb0ce7-ebca-4fa7-95ed-4840d70a1177",
                        "descriptor_version": "1.0",
                        "provider": "vnfm",
                        "product_name": "image-it",
                        "software_version": "1.0",
                        "vnfm_info": ["Tacker"],
                        "flavour_id": "df",
                        "flavour_description": "one server",
                    },
                },
                "VDU1": {
                    "type": "tosca.nodes.nfv.Vdu.Compute",
                    "properties": {
                        "name": "VDU1",
                        "description": "carries its image",
                        "vdu_profile": {"min_number_of_instances": 1, "max_number_of_instances": 1},
                        "sw_image_data": {
                            "name": image_name,
                            "version": "1.0",
                            "checksum": {"algorithm": "sha-256", "hash": "0" * 64},
                            "container_format": "bare",
                            "disk_format": "raw",
                            "min_disk": "1 GB",
                            "size": "1 GB",
                        },
                    },
                    "capabilities": {
                        "virtual_compute": {
                            "properties": {
                                "virtual_memory": {"virtual_mem_size": "512 MB"},
                                "virtual_cpu": {"num_virtual_cpu": 1},
                                "virtual_local_storage": [{"size_of_storage": "1 GB"}],
                            }
                        }
                    },
                    "artifacts": {
                        "sw_image": {"type": "tosca.artifacts.nfv.SwImage", "file": "../Files/images/it.img"}
                    },
                },
                "CP1": {
                    "type": "tosca.nodes.nfv.VduCp",
                    "properties": {"layer_protocols": ["ipv4"], "order": 0},
                    "requirements": [{"virtual_binding": "VDU1"}],
                },
            },
        },
    }
    (root / "Definitions").mkdir()
    (root / "Definitions" / "vnfd.yaml").write_text(yaml.safe_dump(vnfd, sort_keys=False))
    top = {
        "heat_template_version": "2018-08-31",
        "parameters": {"nfv": {"type": "json"}},
        "resources": {
            "VDU1": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": {"get_param": ["nfv", "VDU", "VDU1", "image"]},
                    "flavor": {"get_param": ["nfv", "VDU", "VDU1", "flavor"]},
                    "networks": [{"port": {"get_resource": "CP1"}}],
                },
            },
            "CP1": {
                "type": "OS::Neutron::Port",
                "properties": {"network": {"get_param": ["nfv", "CP", "CP1", "network"]}},
            },
        },
    }
    (root / "BaseHOT" / "df").mkdir(parents=True)
    (root / "BaseHOT" / "df" / "top.yaml").write_text(yaml.safe_dump(top, sort_keys=False))
    return root


async def test_image_uploaded_from_the_package(
    tmp_path: Path, os_vim: Vim, os_cloud: SdkCloud, network_id: str
) -> None:
    image_name = f"vnfm-it-{uuid.uuid4().hex[:8]}"
    assert os_cloud.find_image(image_name) is None
    csar = read_csar(build_csar(_package_dir(tmp_path / "src", image_name)))
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
