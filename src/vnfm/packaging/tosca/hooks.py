"""The VNF node's artifacts and Vnflcm hooks (read from the VNF type, then the entry file's VNF
node template, then the flavour's; later ones override), and artifact files inside the package."""

from __future__ import annotations

import posixpath
from typing import Any

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import Artifact
from vnfm.packaging.csar import Csar
from vnfm.packaging.tosca.sources import VnfNode
from vnfm.packaging.tosca.types import URI, Tree
from vnfm.packaging.tosca.values import mapping


def artifact_file(file: str, defined_in: str, csar: Csar, where: str) -> str:
    """An artifact's file: relative to the package root (Tacker) or to the defining file."""
    if file.startswith("/") or "\\" in file or URI.match(file):
        raise UnprocessableEntity(f"{where}: artifact file {file!r} is not a path inside the package")
    for base in ("", posixpath.dirname(defined_in)):
        joined = posixpath.normpath(posixpath.join(base, file))
        if joined == ".." or joined.startswith("../"):
            continue
        if joined in csar.files:
            return joined
    raise UnprocessableEntity(f"{where}: artifact file {file!r} is not in the package")


def image_artifact(body: dict[str, Any], file: str, csar: Csar, where: str) -> str:
    """The package path of a node's software image artifact, or '' when the image is not inside."""
    for _name, spec in mapping(body.get("artifacts"), f"{where} artifacts").items():
        if (
            isinstance(spec, dict)
            and str(spec.get("type", "")).endswith("SwImage")
            and isinstance(spec.get("file"), str)
        ):
            return artifact_file(spec["file"], file, csar, where)
    return ""


def collect_artifacts(sources: list[tuple[dict[str, Any], str]], csar: Csar) -> dict[str, Artifact]:
    out: dict[str, Artifact] = {}
    for body, file in sources:
        arts = mapping(body.get("artifacts"), f"{file}: artifacts")
        for name, spec in arts.items():
            where = f"{file}: artifact {name!r}"
            if isinstance(spec, str):
                spec = {"file": spec}
            if not isinstance(spec, dict) or not isinstance(spec.get("file"), str):
                raise UnprocessableEntity(f"{where} has no file")
            path = artifact_file(spec["file"], file, csar, where)
            out[str(name)] = Artifact(
                name=str(name),
                type=str(spec.get("type") or ""),
                file=path,
                description=str(spec.get("description") or ""),
            )
    return out


def collect_hooks(sources: list[tuple[dict[str, Any], str]]) -> dict[str, tuple[str, str]]:
    """Vnflcm hook -> (implementation, file it was written in); later sources override."""
    hooks: dict[str, tuple[str, str]] = {}
    for body, file in sources:
        ifaces = mapping(body.get("interfaces"), f"{file}: interfaces")
        lcm = mapping(ifaces.get("Vnflcm"), f"{file}: interfaces.Vnflcm")
        ops: dict[str, Any] = lcm["operations"] if isinstance(lcm.get("operations"), dict) else lcm
        for hook, spec in ops.items():
            if hook in ("type", "inputs", "operations", "notifications"):
                continue
            impl: Any = spec
            if isinstance(spec, dict):
                impl = spec.get("implementation")
                if isinstance(impl, dict):
                    impl = impl.get("primary")
            if impl is None or impl == "" or impl == []:
                hooks.pop(str(hook), None)
                continue
            if not isinstance(impl, str):
                raise UnprocessableEntity(f"{file}: Vnflcm hook {hook!r} has an unreadable implementation")
            hooks[str(hook)] = (impl, file)
    return hooks


def vnf_hooks_and_artifacts(
    tree: Tree, fl: str, vnf: VnfNode | None, top_vnf: VnfNode | None, csar: Csar
) -> tuple[dict[str, str], dict[str, Artifact]]:
    """A flavour's hooks (hook -> artifact name or package path) and artifacts, from the VNF type,
    then the top template, then the flavour's template."""
    sources: list[tuple[dict[str, Any], str]] = []
    vnf_nodes: list[VnfNode] = []
    for node in (top_vnf, vnf):
        if node is not None and all((n.file, n.name) != (node.file, node.name) for n in vnf_nodes):
            vnf_nodes.append(node)
    if vnf_nodes:
        sources.extend((t.body, t.file) for t in reversed(tree.type_defs(vnf_nodes[-1].body["type"])))
    sources.extend((n.body, n.file) for n in vnf_nodes)
    artifacts = collect_artifacts(sources, csar)
    hooks: dict[str, str] = {}
    for hook, (impl, written_in) in collect_hooks(sources).items():
        if impl in artifacts:
            hooks[hook] = impl
            continue
        try:  # TOSCA also allows the implementation to be a file path
            hooks[hook] = artifact_file(impl, written_in, csar, f"{written_in}: Vnflcm hook {hook!r}")
        except UnprocessableEntity:
            known = ", ".join(sorted(artifacts)) or "none"
            raise UnprocessableEntity(
                f"flavour {fl!r}: Vnflcm hook {hook!r} names artifact {impl!r}, which the VNF node does "
                f"not define (artifacts: {known})"
            ) from None
    return hooks, artifacts
