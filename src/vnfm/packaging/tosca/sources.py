"""Where a VNFD's parts are written: the VNF node templates (the entry file's and each flavour's),
their properties (read through `get_input` defaults and the VNF type's defaults/constraints), and
the flavour files, each a `topology_template` with `substitution_mappings`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vnfm.domain.errors import UnprocessableEntity
from vnfm.packaging.tosca.types import Tree
from vnfm.packaging.tosca.values import mapping, resolve

VNF_PROPS = ("descriptor_id", "descriptor_version", "provider", "product_name", "software_version")


@dataclass
class VnfNode:
    """A VNF node template and where it was written."""

    name: str
    body: dict[str, Any]
    file: str
    inputs: dict[str, Any]


@dataclass
class FlavourSource:
    id: str
    file: str
    tt: dict[str, Any]
    vnf: VnfNode | None


def vnf_property(key: str, nodes: list[VnfNode], tree: Tree, type_name: str | None) -> Any:
    for node in nodes:
        v = resolve(
            mapping(node.body.get("properties"), f"{node.file}: {node.name} properties").get(key),
            node.inputs,
        )
        if v is not None and not isinstance(v, dict):
            return v
    if type_name is None:
        return None
    for tdef in tree.type_defs(type_name):
        pdef = mapping(tdef.body.get("properties"), f"{tdef.file}: node type {tdef.name} properties").get(key)
        if not isinstance(pdef, dict):
            continue
        if pdef.get("default") is not None:
            return pdef["default"]
        constraints = pdef.get("constraints") or []
        if not isinstance(constraints, list):
            raise UnprocessableEntity(
                f"{tdef.file}: node type {tdef.name} property {key!r} constraints must be a list"
            )
        for c in constraints:
            if isinstance(c, dict):
                if "equal" in c:
                    return c["equal"]
                vals = c.get("valid_values")
                if isinstance(vals, list) and len(vals) == 1:
                    return vals[0]
    return None


def vnf_nodes(tree: Tree, file: str, tt: dict[str, Any]) -> list[VnfNode]:
    out = []
    inputs = mapping(tt.get("inputs"), f"{file}: inputs")
    for name, body in mapping(tt.get("node_templates"), f"{file}: node_templates").items():
        if not isinstance(body, dict) or not isinstance(body.get("type"), str):
            raise UnprocessableEntity(f"{file}: node template {name!r} has no type")
        if tree.node_kind(body["type"], f"{file}: node template {name!r}") == "vnf":
            out.append(VnfNode(str(name), body, file, inputs))
    if len(out) > 1:
        raise UnprocessableEntity(
            f"{file}: more than one VNF node template ({', '.join(n.name for n in out)})"
        )
    return out


def _flavour_files(tree: Tree, entry: str, entry_tt: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The files with substitution_mappings, else the entry file alone (single-file layout)."""
    with_sm = [
        (p, d)
        for p, d in tree.docs.items()
        if isinstance(d.get("topology_template"), dict) and "substitution_mappings" in d["topology_template"]
    ]
    if not with_sm:
        if not entry_tt.get("node_templates"):
            raise UnprocessableEntity(
                f"{entry}: no topology_template with node_templates and no flavour files"
            )
        with_sm = [(entry, tree.docs[entry])]
    return with_sm


def _flavour_source(
    tree: Tree, path: str, doc: dict[str, Any], top_vnf: VnfNode | None, only: bool
) -> FlavourSource:
    tt = doc["topology_template"]
    sm = mapping(tt.get("substitution_mappings"), f"{path}: substitution_mappings")
    node_type = sm.get("node_type")
    if (
        isinstance(node_type, str)
        and tree.node_kind(node_type, f"{path}: substitution_mappings") != "vnf"
    ):
        raise UnprocessableEntity(
            f"{path}: substitution_mappings node_type {node_type!r} is not a VNF type"
        )
    vnf = next(iter(vnf_nodes(tree, path, tt)), None)
    fid = resolve(
        mapping(sm.get("properties"), f"{path}: substitution_mappings.properties").get("flavour_id"), {}
    )
    if fid is None and vnf is not None:
        fid = resolve(
            mapping(vnf.body.get("properties"), f"{path}: VNF properties").get("flavour_id"), vnf.inputs
        )
    if fid is None and only:
        nodes = [n for n in (vnf, top_vnf) if n is not None]
        vnf_type = node_type if isinstance(node_type, str) else (nodes[0].body["type"] if nodes else None)
        fid = vnf_property("flavour_id", nodes, tree, vnf_type)
    if fid is None or isinstance(fid, dict | list):
        raise UnprocessableEntity(
            f"{path}: cannot tell the flavour id (substitution_mappings.properties.flavour_id)"
        )
    return FlavourSource(str(fid), path, tt, vnf)


def flavour_sources(tree: Tree, entry: str) -> tuple[list[FlavourSource], VnfNode | None]:
    entry_tt = mapping(tree.docs[entry].get("topology_template"), f"{entry}: topology_template")
    top_vnf = next(iter(vnf_nodes(tree, entry, entry_tt)), None)
    with_sm = _flavour_files(tree, entry, entry_tt)
    sources = [_flavour_source(tree, path, doc, top_vnf, len(with_sm) == 1) for path, doc in with_sm]
    seen: dict[str, str] = {}
    for s in sources:
        if s.id in seen:
            raise UnprocessableEntity(f"flavour {s.id!r} is defined twice ({seen[s.id]} and {s.file})")
        seen[s.id] = s.file
    return sources, top_vnf
