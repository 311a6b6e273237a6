"""Small packages for the tests of this folder, written to a directory (then zipped by build_csar)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def one_vdu_package(
    root: Path, image_name: str, *, image: bytes | None = None, resources: dict[str, Any] | None = None
) -> Path:
    """A one-VDU package in `root`: a VNFD whose VDU1 names `image_name` (with `image`, the package
    carries the file as a SwImage artifact), and a BaseHOT with the server, its port CP1 and any
    further `resources`."""
    (root / "TOSCA-Metadata").mkdir(parents=True)
    (root / "TOSCA-Metadata" / "TOSCA.meta").write_text(
        "TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-by: vnfm tests\n"
        "Entry-Definitions: Definitions/vnfd.yaml\n"
    )
    if image is not None:
        (root / "Files" / "images").mkdir(parents=True)
        (root / "Files" / "images" / "it.img").write_bytes(image)
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
                },
                "CP1": {
                    "type": "tosca.nodes.nfv.VduCp",
                    "properties": {"layer_protocols": ["ipv4"], "order": 0},
                    "requirements": [{"virtual_binding": "VDU1"}],
                },
            },
        },
    }
    if image is not None:
        vdu1 = vnfd["topology_template"]["node_templates"]["VDU1"]  # type: ignore[index]
        vdu1["artifacts"] = {"sw_image": {"type": "tosca.artifacts.nfv.SwImage", "file": "../Files/images/it.img"}}
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
    top["resources"].update(resources or {})  # type: ignore[attr-defined]
    (root / "BaseHOT" / "df").mkdir(parents=True)
    (root / "BaseHOT" / "df" / "top.yaml").write_text(yaml.safe_dump(top, sort_keys=False))
    return root
