"""The top-level walk: the type tree, the VNF node's properties, then each flavour."""

from __future__ import annotations

from dataclasses import dataclass

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import Flavour, Vnfd
from vnfm.packaging.csar import Csar
from vnfm.packaging.tosca.flavour import parse_flavour
from vnfm.packaging.tosca.nodes import Images
from vnfm.packaging.tosca.sources import VNF_PROPS, flavour_sources, vnf_property
from vnfm.packaging.tosca.types import load_tree


@dataclass
class Parsed:
    vnfd: Vnfd
    # flavour id -> node id -> raw sw_image_data (+ resolved image artifact path)
    images: dict[str, Images]


def parse(csar: Csar) -> Parsed:
    """The VNFD of a package and the software image data of each flavour's nodes."""
    tree = load_tree(csar)
    entry = csar.entry_definitions
    sources, top_vnf = flavour_sources(tree, entry)
    nodes = [n for n in (top_vnf, *(s.vnf for s in sources)) if n is not None]
    if not nodes:
        raise UnprocessableEntity(f"{entry}: no node template of a type derived from tosca.nodes.nfv.VNF")
    vnf_type = nodes[0].body["type"]
    values: dict[str, str] = {}
    for key in (*VNF_PROPS, "product_info_name"):
        v = vnf_property(key, nodes, tree, vnf_type)
        if v is None and key != "product_info_name":
            raise UnprocessableEntity(f"{entry}: the VNF node has no {key}")
        values[key] = "" if v is None else str(v)
    flavours: dict[str, Flavour] = {}
    images: dict[str, Images] = {}
    for src in sources:
        flavours[src.id], images[src.id] = parse_flavour(tree, src, top_vnf, csar)
    vnfd = Vnfd(
        id=values["descriptor_id"],
        version=values["descriptor_version"],
        provider=values["provider"],
        product_name=values["product_name"],
        software_version=values["software_version"],
        product_info_name=values["product_info_name"],
        flavours=flavours,
    )
    return Parsed(vnfd, images)


def parse_vnfd(csar: Csar) -> Vnfd:
    """The VNFD of a package (raises UnprocessableEntity / PayloadTooLarge naming the problem)."""
    return parse(csar).vnfd
