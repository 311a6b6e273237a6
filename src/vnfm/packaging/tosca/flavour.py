"""One deployment flavour: its node templates, policies, hooks and artifacts, and description."""

from __future__ import annotations

from vnfm.domain.vnfd import Flavour
from vnfm.packaging.csar import Csar
from vnfm.packaging.tosca.hooks import vnf_hooks_and_artifacts
from vnfm.packaging.tosca.nodes import Images, parse_nodes
from vnfm.packaging.tosca.policies import parse_policies
from vnfm.packaging.tosca.sources import FlavourSource, VnfNode
from vnfm.packaging.tosca.types import Tree
from vnfm.packaging.tosca.values import mapping


def _description(tree: Tree, src: FlavourSource) -> str:
    """The flavour's VNF node flavour_description, else its topology's, else its file's."""
    description = ""
    if src.vnf is not None:
        description = str(
            mapping(src.vnf.body.get("properties"), f"{src.file}: VNF properties").get("flavour_description")
            or ""
        )
    return description or str(src.tt.get("description") or tree.docs[src.file].get("description") or "")


def parse_flavour(
    tree: Tree, src: FlavourSource, top_vnf: VnfNode | None, csar: Csar
) -> tuple[Flavour, Images]:
    """The flavour and the software image data of its nodes."""
    nodes = parse_nodes(tree, src.file, src.tt, csar)
    policies = parse_policies(tree, src.file, src.tt, nodes.vdus)
    hooks, artifacts = vnf_hooks_and_artifacts(tree, src.id, src.vnf, top_vnf, csar)
    flavour = Flavour(
        id=src.id,
        description=_description(tree, src),
        vdus=nodes.vdus,
        cps=nodes.cps,
        virtual_links=nodes.virtual_links,
        storages=nodes.storages,
        aspects=policies.aspects,
        aspect_deltas=policies.deltas,
        initial_deltas=policies.initial,
        instantiation_levels=policies.levels,
        default_level=policies.default_level,
        hooks=hooks,
        artifacts=artifacts,
    )
    return flavour, nodes.images
