"""One flavour's node templates: VDUs, connection points, virtual links and virtual storages
(and the software image data of VDUs and storages, for the SOL005 package summary)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import Cp, Vdu, VirtualLink, VirtualStorage
from vnfm.packaging.csar import Csar
from vnfm.packaging.tosca.hooks import image_artifact
from vnfm.packaging.tosca.types import Tree
from vnfm.packaging.tosca.values import as_int, mapping, requirements, size_bytes

# node id -> raw sw_image_data (+ resolved image artifact path)
Images = dict[str, tuple[dict[str, Any], str]]


@dataclass
class Nodes:
    vdus: dict[str, Vdu] = field(default_factory=dict)
    cps: dict[str, Cp] = field(default_factory=dict)
    virtual_links: dict[str, VirtualLink] = field(default_factory=dict)
    storages: dict[str, VirtualStorage] = field(default_factory=dict)
    images: Images = field(default_factory=dict)


def _vdu(name: str, body: dict[str, Any], props: dict[str, Any], where: str) -> tuple[Vdu, dict[str, Any]]:
    """The VDU and its sw_image_data."""
    profile = mapping(props.get("vdu_profile"), f"{where} vdu_profile")
    lo = as_int(profile.get("min_number_of_instances", 1), f"{where} min_number_of_instances")
    hi = as_int(profile.get("max_number_of_instances", max(lo, 1)), f"{where} max_number_of_instances")
    if lo > hi:
        raise UnprocessableEntity(
            f"{where}: min_number_of_instances {lo} > max_number_of_instances {hi}"
        )
    img = mapping(props.get("sw_image_data"), f"{where} sw_image_data")
    vc = mapping(
        mapping(body.get("capabilities"), f"{where} capabilities").get("virtual_compute"),
        f"{where} virtual_compute",
    )
    vcp = mapping(vc.get("properties"), f"{where} virtual_compute.properties")
    cpu = mapping(vcp.get("virtual_cpu"), f"{where} virtual_cpu").get("num_virtual_cpu")
    mem = mapping(vcp.get("virtual_memory"), f"{where} virtual_memory").get("virtual_mem_size")
    storages = tuple(t for r, t in requirements(body, where) if r == "virtual_storage")
    vdu = Vdu(
        id=name,
        name=str(props.get("name") or name),
        description=str(props.get("description") or ""),
        min_instances=lo,
        max_instances=hi,
        storages=storages,
        sw_image=str(img["name"]) if img.get("name") is not None else None,
        num_cpus=as_int(cpu, f"{where} num_virtual_cpu", 1) if cpu is not None else None,
        memory_mb=round(size_bytes(mem, f"{where} virtual_mem_size") / 1024**2) if mem is not None else None,
    )
    return vdu, img


def _virtual_link(name: str, props: dict[str, Any], where: str) -> VirtualLink:
    protos: tuple[str, ...] = ("ipv4",)
    ct = mapping(props.get("connectivity_type"), f"{where} connectivity_type")
    if isinstance(ct.get("layer_protocols"), list):
        protos = tuple(str(p) for p in ct["layer_protocols"])
    cidr = None
    profile = mapping(props.get("vl_profile"), f"{where} vl_profile")
    protocol_data = profile.get("virtual_link_protocol_data") or []
    if not isinstance(protocol_data, list):
        raise UnprocessableEntity(f"{where} virtual_link_protocol_data must be a list")
    for pd in protocol_data:
        l3 = pd.get("l3_protocol_data") if isinstance(pd, dict) else None
        if isinstance(l3, dict) and l3.get("cidr"):
            cidr = str(l3["cidr"])
            break
    return VirtualLink(
        id=name, description=str(props.get("description") or ""), layer_protocols=protos, cidr=cidr
    )


def _storage(name: str, props: dict[str, Any], where: str) -> tuple[VirtualStorage, dict[str, Any]]:
    """The virtual block storage and its sw_image_data."""
    data = mapping(props.get("virtual_block_storage_data"), f"{where} virtual_block_storage_data")
    size = data.get("size_of_storage")
    img = mapping(props.get("sw_image_data"), f"{where} sw_image_data")
    storage = VirtualStorage(
        id=name,
        type_of_storage="BLOCK",
        size_gb=size_bytes(size, f"{where} size_of_storage") / 1024**3 if size is not None else None,
        image=str(img["name"]) if img.get("name") is not None else None,
    )
    return storage, img


def _cp(name: str, body: dict[str, Any], nodes: Nodes, f: str) -> Cp:
    where = f"{f}: CP {name!r}"
    links = dict(requirements(body, where))
    bound = links.get("virtual_binding")
    if bound is None:
        raise UnprocessableEntity(f"{where} has no virtual_binding requirement")
    if bound not in nodes.vdus:
        raise UnprocessableEntity(f"{where} is bound to unknown VDU {bound!r}")
    vl = links.get("virtual_link")
    if vl is not None and vl not in nodes.virtual_links:
        raise UnprocessableEntity(f"{where} links to unknown virtual link {vl!r}")
    props = mapping(body.get("properties"), f"{where} properties")
    cp_protos = props.get("layer_protocols")
    return Cp(
        id=name,
        vdu_id=bound,
        virtual_link=vl,
        layer_protocols=tuple(str(p) for p in cp_protos) if isinstance(cp_protos, list) else ("ipv4",),
        order=as_int(props.get("order", 0), f"{where} order"),
    )


def parse_nodes(tree: Tree, f: str, tt: dict[str, Any], csar: Csar) -> Nodes:
    """The node templates of the flavour written in file `f` (topology template `tt`)."""
    templates = mapping(tt.get("node_templates"), f"{f}: node_templates")
    nodes = Nodes()
    cps_raw: dict[str, dict[str, Any]] = {}
    for name, body in templates.items():
        name = str(name)
        where = f"{f}: node template {name!r}"
        if not isinstance(body, dict) or not isinstance(body.get("type"), str):
            raise UnprocessableEntity(f"{where} has no type")
        kind = tree.node_kind(body["type"], where)
        props = mapping(body.get("properties"), f"{where} properties")
        if kind == "vdu":
            nodes.vdus[name], img = _vdu(name, body, props, where)
            if img:
                nodes.images[name] = (img, image_artifact(body, f, csar, where))
        elif kind == "cp":
            cps_raw[name] = body
        elif kind == "vl":
            nodes.virtual_links[name] = _virtual_link(name, props, where)
        elif kind == "storage":
            nodes.storages[name], img = _storage(name, props, where)
            if img:
                nodes.images[name] = (img, image_artifact(body, f, csar, where))

    for vdu_id, vdu in nodes.vdus.items():
        for st in vdu.storages:
            if st not in nodes.storages:
                raise UnprocessableEntity(f"{f}: VDU {vdu_id!r} requires unknown virtual_storage {st!r}")
    for name, body in cps_raw.items():
        nodes.cps[name] = _cp(name, body, nodes, f)
    return nodes
