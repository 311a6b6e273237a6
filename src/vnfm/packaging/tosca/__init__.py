"""SOL001 VNFD parsing: from the files of a CSAR to vnfm.domain.vnfd.Vnfd.

Two layouts are read:

(a) Tacker style: the entry file holds the VNF node template (descriptor_id, provider, ...) and
    imports a types file (the VNF node type, often with valid_values/default for each property)
    and one `*_df_<flavour>.yaml` per deployment flavour, each with
    `topology_template.substitution_mappings` and the flavour's node templates and policies;
(b) a single VNFD file with one flavour.

Node and policy types are matched through their `derived_from` chains. The standard ETSI type
files (etsi_nfv_sol001_*types.yaml) are never parsed: the standard types are known by name, so
those imports may be absent from the package.

YAML is read with the safe loader, bounded in size, nesting depth, aliases and expanded nodes.
Package Python (Scripts/, UserData/) is never imported or executed.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import (
    Artifact,
    Cp,
    Flavour,
    InstantiationLevel,
    ScalingAspect,
    Vdu,
    VirtualLink,
    VirtualStorage,
    Vnfd,
)
from vnfm.packaging.csar import Csar
from vnfm.packaging.tosca.types import URI as _URI
from vnfm.packaging.tosca.types import Tree as _Tree
from vnfm.packaging.tosca.types import load_tree as _load_tree
from vnfm.packaging.tosca.values import as_int as _int
from vnfm.packaging.tosca.values import mapping as _mapping
from vnfm.packaging.tosca.values import policy_entries as _policies
from vnfm.packaging.tosca.values import requirements as _requirements
from vnfm.packaging.tosca.values import resolve as _resolve
from vnfm.packaging.tosca.values import size_bytes as _size_bytes
from vnfm.packaging.tosca.yaml_safe import YamlLimits, load_yaml_safely

__all__ = ["YamlLimits", "load_yaml_safely", "package_summary", "parse_vnfd"]


# ============================================================================ VNF node
_VNF_PROPS = ("descriptor_id", "descriptor_version", "provider", "product_name", "software_version")


@dataclass
class _VnfNode:
    """A VNF node template and where it was written."""

    name: str
    body: dict[str, Any]
    file: str
    inputs: dict[str, Any]


def _vnf_property(key: str, nodes: list[_VnfNode], tree: _Tree, type_name: str | None) -> Any:
    for node in nodes:
        v = _resolve(
            _mapping(node.body.get("properties"), f"{node.file}: {node.name} properties").get(key),
            node.inputs,
        )
        if v is not None and not isinstance(v, dict):
            return v
    if type_name is None:
        return None
    for tdef in tree.type_defs(type_name):
        pdef = _mapping(tdef.body.get("properties"), f"{tdef.file}: node type {tdef.name} properties").get(
            key
        )
        if not isinstance(pdef, dict):
            continue
        if pdef.get("default") is not None:
            return pdef["default"]
        for c in pdef.get("constraints") or []:
            if isinstance(c, dict):
                if "equal" in c:
                    return c["equal"]
                vals = c.get("valid_values")
                if isinstance(vals, list) and len(vals) == 1:
                    return vals[0]
    return None


def _artifact_file(file: str, defined_in: str, csar: Csar, where: str) -> str:
    """An artifact's file: relative to the package root (Tacker) or to the defining file."""
    if file.startswith("/") or "\\" in file or _URI.match(file):
        raise UnprocessableEntity(f"{where}: artifact file {file!r} is not a path inside the package")
    for base in ("", posixpath.dirname(defined_in)):
        joined = posixpath.normpath(posixpath.join(base, file))
        if joined == ".." or joined.startswith("../"):
            continue
        if joined in csar.files:
            return joined
    raise UnprocessableEntity(f"{where}: artifact file {file!r} is not in the package")


def _collect_artifacts(sources: list[tuple[dict[str, Any], str]], csar: Csar) -> dict[str, Artifact]:
    out: dict[str, Artifact] = {}
    for body, file in sources:
        arts = _mapping(body.get("artifacts"), f"{file}: artifacts")
        for name, spec in arts.items():
            where = f"{file}: artifact {name!r}"
            if isinstance(spec, str):
                spec = {"file": spec}
            if not isinstance(spec, dict) or not isinstance(spec.get("file"), str):
                raise UnprocessableEntity(f"{where} has no file")
            path = _artifact_file(spec["file"], file, csar, where)
            out[str(name)] = Artifact(
                name=str(name),
                type=str(spec.get("type") or ""),
                file=path,
                description=str(spec.get("description") or ""),
            )
    return out


def _collect_hooks(sources: list[tuple[dict[str, Any], str]]) -> dict[str, tuple[str, str]]:
    """Vnflcm hook -> (implementation, file it was written in); later sources override."""
    hooks: dict[str, tuple[str, str]] = {}
    for body, file in sources:
        ifaces = _mapping(body.get("interfaces"), f"{file}: interfaces")
        lcm = _mapping(ifaces.get("Vnflcm"), f"{file}: interfaces.Vnflcm")
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


# ============================================================================ flavours
@dataclass
class _FlavourSource:
    id: str
    file: str
    tt: dict[str, Any]
    vnf: _VnfNode | None


@dataclass
class _Parsed:
    vnfd: Vnfd
    # flavour id -> node id -> raw sw_image_data (+ resolved image artifact path)
    images: dict[str, dict[str, tuple[dict[str, Any], str]]]


def _vnf_nodes(tree: _Tree, file: str, tt: dict[str, Any]) -> list[_VnfNode]:
    out = []
    inputs = _mapping(tt.get("inputs"), f"{file}: inputs")
    for name, body in _mapping(tt.get("node_templates"), f"{file}: node_templates").items():
        if not isinstance(body, dict) or not isinstance(body.get("type"), str):
            raise UnprocessableEntity(f"{file}: node template {name!r} has no type")
        if tree.node_kind(body["type"], f"{file}: node template {name!r}") == "vnf":
            out.append(_VnfNode(str(name), body, file, inputs))
    if len(out) > 1:
        raise UnprocessableEntity(
            f"{file}: more than one VNF node template ({', '.join(n.name for n in out)})"
        )
    return out


def _flavour_sources(tree: _Tree, entry: str) -> tuple[list[_FlavourSource], _VnfNode | None]:
    entry_tt = _mapping(tree.docs[entry].get("topology_template"), f"{entry}: topology_template")
    top_vnf = next(iter(_vnf_nodes(tree, entry, entry_tt)), None)
    sources: list[_FlavourSource] = []
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
    for path, doc in with_sm:
        tt = doc["topology_template"]
        sm = _mapping(tt.get("substitution_mappings"), f"{path}: substitution_mappings")
        node_type = sm.get("node_type")
        if (
            isinstance(node_type, str)
            and tree.node_kind(node_type, f"{path}: substitution_mappings") != "vnf"
        ):
            raise UnprocessableEntity(
                f"{path}: substitution_mappings node_type {node_type!r} is not a VNF type"
            )
        vnf = next(iter(_vnf_nodes(tree, path, tt)), None)
        fid = _resolve(
            _mapping(sm.get("properties"), f"{path}: substitution_mappings.properties").get("flavour_id"), {}
        )
        if fid is None and vnf is not None:
            fid = _resolve(
                _mapping(vnf.body.get("properties"), f"{path}: VNF properties").get("flavour_id"), vnf.inputs
            )
        if fid is None and len(with_sm) == 1:
            nodes = [n for n in (vnf, top_vnf) if n is not None]
            vnf_type = node_type if isinstance(node_type, str) else (nodes[0].body["type"] if nodes else None)
            fid = _vnf_property("flavour_id", nodes, tree, vnf_type)
        if fid is None or isinstance(fid, dict | list):
            raise UnprocessableEntity(
                f"{path}: cannot tell the flavour id (substitution_mappings.properties.flavour_id)"
            )
        sources.append(_FlavourSource(str(fid), path, tt, vnf))
    seen: dict[str, str] = {}
    for s in sources:
        if s.id in seen:
            raise UnprocessableEntity(f"flavour {s.id!r} is defined twice ({seen[s.id]} and {s.file})")
        seen[s.id] = s.file
    return sources, top_vnf


def _targets(body: dict[str, Any], groups: dict[str, Any], vdus: dict[str, Vdu], where: str) -> list[str]:
    raw = body.get("targets") or []
    if not isinstance(raw, list):
        raise UnprocessableEntity(f"{where}: targets must be a list")
    out: list[str] = []
    for t in raw:
        members = groups.get(t, {}).get("members") if isinstance(groups.get(t), dict) else None
        for name in members if isinstance(members, list) else [t]:
            if name not in vdus:
                raise UnprocessableEntity(f"{where} targets unknown VDU {name!r}")
            out.append(str(name))
    return out


def _parse_flavour(
    tree: _Tree, src: _FlavourSource, top_vnf: _VnfNode | None, csar: Csar
) -> tuple[Flavour, dict[str, tuple[dict[str, Any], str]]]:
    f = src.file
    fl = src.id
    templates = _mapping(src.tt.get("node_templates"), f"{f}: node_templates")
    vdus: dict[str, Vdu] = {}
    cps_raw: dict[str, dict[str, Any]] = {}
    vls: dict[str, VirtualLink] = {}
    storages: dict[str, VirtualStorage] = {}
    vdu_storage_reqs: dict[str, list[str]] = {}
    images: dict[str, tuple[dict[str, Any], str]] = {}

    for name, body in templates.items():
        name = str(name)
        where = f"{f}: node template {name!r}"
        if not isinstance(body, dict) or not isinstance(body.get("type"), str):
            raise UnprocessableEntity(f"{where} has no type")
        kind = tree.node_kind(body["type"], where)
        props = _mapping(body.get("properties"), f"{where} properties")
        if kind == "vdu":
            profile = _mapping(props.get("vdu_profile"), f"{where} vdu_profile")
            lo = _int(profile.get("min_number_of_instances", 1), f"{where} min_number_of_instances")
            hi = _int(profile.get("max_number_of_instances", max(lo, 1)), f"{where} max_number_of_instances")
            if lo > hi:
                raise UnprocessableEntity(
                    f"{where}: min_number_of_instances {lo} > max_number_of_instances {hi}"
                )
            img = _mapping(props.get("sw_image_data"), f"{where} sw_image_data")
            vc = _mapping(
                _mapping(body.get("capabilities"), f"{where} capabilities").get("virtual_compute"),
                f"{where} virtual_compute",
            )
            vcp = _mapping(vc.get("properties"), f"{where} virtual_compute.properties")
            cpu = _mapping(vcp.get("virtual_cpu"), f"{where} virtual_cpu").get("num_virtual_cpu")
            mem = _mapping(vcp.get("virtual_memory"), f"{where} virtual_memory").get("virtual_mem_size")
            vdu_storage_reqs[name] = [t for r, t in _requirements(body, where) if r == "virtual_storage"]
            vdus[name] = Vdu(
                id=name,
                name=str(props.get("name") or name),
                description=str(props.get("description") or ""),
                min_instances=lo,
                max_instances=hi,
                storages=tuple(vdu_storage_reqs[name]),
                sw_image=str(img["name"]) if img.get("name") is not None else None,
                num_cpus=_int(cpu, f"{where} num_virtual_cpu", 1) if cpu is not None else None,
                memory_mb=round(_size_bytes(mem, f"{where} virtual_mem_size") / 1024**2)
                if mem is not None
                else None,
            )
            if img:
                images[name] = (img, _image_artifact(body, f, csar, where))
        elif kind == "cp":
            cps_raw[name] = body
        elif kind == "vl":
            protos: tuple[str, ...] = ("ipv4",)
            ct = _mapping(props.get("connectivity_type"), f"{where} connectivity_type")
            if isinstance(ct.get("layer_protocols"), list):
                protos = tuple(str(p) for p in ct["layer_protocols"])
            cidr = None
            profile = _mapping(props.get("vl_profile"), f"{where} vl_profile")
            for pd in profile.get("virtual_link_protocol_data") or []:
                l3 = pd.get("l3_protocol_data") if isinstance(pd, dict) else None
                if isinstance(l3, dict) and l3.get("cidr"):
                    cidr = str(l3["cidr"])
                    break
            vls[name] = VirtualLink(
                id=name, description=str(props.get("description") or ""), layer_protocols=protos, cidr=cidr
            )
        elif kind == "storage":
            data = _mapping(props.get("virtual_block_storage_data"), f"{where} virtual_block_storage_data")
            size = data.get("size_of_storage")
            img = _mapping(props.get("sw_image_data"), f"{where} sw_image_data")
            storages[name] = VirtualStorage(
                id=name,
                type_of_storage="BLOCK",
                size_gb=_size_bytes(size, f"{where} size_of_storage") / 1024**3 if size is not None else None,
                image=str(img["name"]) if img.get("name") is not None else None,
            )
            if img:
                images[name] = (img, _image_artifact(body, f, csar, where))

    for vdu_id, reqs in vdu_storage_reqs.items():
        for st in reqs:
            if st not in storages:
                raise UnprocessableEntity(f"{f}: VDU {vdu_id!r} requires unknown virtual_storage {st!r}")

    cps: dict[str, Cp] = {}
    for name, body in cps_raw.items():
        where = f"{f}: CP {name!r}"
        links = dict(_requirements(body, where))
        bound = links.get("virtual_binding")
        if bound is None:
            raise UnprocessableEntity(f"{where} has no virtual_binding requirement")
        if bound not in vdus:
            raise UnprocessableEntity(f"{where} is bound to unknown VDU {bound!r}")
        vl = links.get("virtual_link")
        if vl is not None and vl not in vls:
            raise UnprocessableEntity(f"{where} links to unknown virtual link {vl!r}")
        props = _mapping(body.get("properties"), f"{where} properties")
        cp_protos = props.get("layer_protocols")
        cps[name] = Cp(
            id=name,
            vdu_id=bound,
            virtual_link=vl,
            layer_protocols=tuple(str(p) for p in cp_protos) if isinstance(cp_protos, list) else ("ipv4",),
            order=_int(props.get("order", 0), f"{where} order"),
        )

    # ---- policies
    groups = _mapping(src.tt.get("groups"), f"{f}: groups")
    aspects: dict[str, ScalingAspect] = {}
    deltas: dict[str, dict[str, dict[str, int]]] = {}
    initial: dict[str, int] = {}
    levels: dict[str, InstantiationLevel] = {}
    default_level: str | None = None
    vdu_levels: list[tuple[str, dict[str, Any], list[str]]] = []
    pending_deltas: list[tuple[str, str, dict[str, Any], list[str]]] = []
    for pname, body in _policies(src.tt, f):
        where = f"{f}: policy {pname!r}"
        kind = tree.policy_kind(body["type"])
        props = _mapping(body.get("properties"), f"{where} properties")
        if kind == "aspects":
            for aid, a in _mapping(props.get("aspects"), f"{where} aspects").items():
                a = _mapping(a, f"{where} aspect {aid!r}")
                steps = a.get("step_deltas") or []
                if not isinstance(steps, list):
                    raise UnprocessableEntity(f"{where} aspect {aid!r}: step_deltas must be a list")
                aspects[str(aid)] = ScalingAspect(
                    id=str(aid),
                    name=str(a.get("name") or aid),
                    description=str(a.get("description") or ""),
                    max_scale_level=_int(
                        a.get("max_scale_level", 0), f"{where} aspect {aid!r} max_scale_level"
                    ),
                    step_deltas=tuple(str(s) for s in steps),
                )
        elif kind == "deltas":
            aspect = props.get("aspect")
            if not isinstance(aspect, str):
                raise UnprocessableEntity(f"{where} has no aspect")
            pending_deltas.append(
                (
                    where,
                    aspect,
                    _mapping(props.get("deltas"), f"{where} deltas"),
                    _targets(body, groups, vdus, where),
                )
            )
        elif kind == "initial":
            n = _int(
                _mapping(props.get("initial_delta"), f"{where} initial_delta").get("number_of_instances"),
                f"{where} initial_delta.number_of_instances",
            )
            for t in _targets(body, groups, vdus, where):
                initial[t] = n
        elif kind == "levels":
            for lid, lv in _mapping(props.get("levels"), f"{where} levels").items():
                lv = _mapping(lv, f"{where} level {lid!r}")
                scale: dict[str, int] = {}
                for aid, info in _mapping(lv.get("scale_info"), f"{where} level {lid!r} scale_info").items():
                    scale[str(aid)] = _int(
                        _mapping(info, f"{where} scale_info {aid!r}").get("scale_level"),
                        f"{where} level {lid!r} scale_level of {aid!r}",
                    )
                levels[str(lid)] = InstantiationLevel(
                    id=str(lid), description=str(lv.get("description") or ""), scale_levels=scale
                )
            if props.get("default_level") is not None:
                default_level = str(props["default_level"])
        elif kind == "vdu_levels":
            vdu_levels.append(
                (where, _mapping(props.get("levels"), f"{where} levels"), _targets(body, groups, vdus, where))
            )

    for where, aspect, dmap, targets in pending_deltas:
        if aspect not in aspects:
            raise UnprocessableEntity(f"{where} names unknown aspect {aspect!r}")
        for did, d in dmap.items():
            n = _int(
                _mapping(d, f"{where} delta {did!r}").get("number_of_instances"),
                f"{where} delta {did!r} number_of_instances",
            )
            slot = deltas.setdefault(aspect, {}).setdefault(str(did), {})
            for t in targets:
                slot[t] = n
    for aid, a in aspects.items():
        defined = deltas.get(aid)
        if defined:
            for step in a.step_deltas:
                if step not in defined:
                    raise UnprocessableEntity(
                        f"{f}: aspect {aid!r} step delta {step!r} is not defined for any VDU"
                    )
    for lid, lv in levels.items():
        for aid, sl in lv.scale_levels.items():
            if aid not in aspects:
                raise UnprocessableEntity(f"{f}: instantiation level {lid!r} names unknown aspect {aid!r}")
            if sl > aspects[aid].max_scale_level:
                raise UnprocessableEntity(
                    f"{f}: instantiation level {lid!r} puts aspect {aid!r} at scale level {sl}, over its "
                    f"max_scale_level {aspects[aid].max_scale_level}"
                )
    for where, lmap, targets in vdu_levels:
        for lid, spec in lmap.items():
            if lid not in levels:
                raise UnprocessableEntity(f"{where} names unknown instantiation level {lid!r}")
            n = _int(
                _mapping(spec, f"{where} level {lid!r}").get("number_of_instances"),
                f"{where} level {lid!r} number_of_instances",
            )
            for t in targets:
                levels[lid].vdu_counts[t] = n
    if default_level is not None and default_level not in levels:
        raise UnprocessableEntity(f"{f}: default_level {default_level!r} is not an instantiation level")

    # ---- VNF node: hooks and artifacts (type, then top template, then the flavour's template)
    sources: list[tuple[dict[str, Any], str]] = []
    vnf_nodes: list[_VnfNode] = []
    for node in (top_vnf, src.vnf):
        if node is not None and all((n.file, n.name) != (node.file, node.name) for n in vnf_nodes):
            vnf_nodes.append(node)
    if vnf_nodes:
        sources.extend((t.body, t.file) for t in reversed(tree.type_defs(vnf_nodes[-1].body["type"])))
    sources.extend((n.body, n.file) for n in vnf_nodes)
    artifacts = _collect_artifacts(sources, csar)
    hooks: dict[str, str] = {}
    for hook, (impl, written_in) in _collect_hooks(sources).items():
        if impl in artifacts:
            hooks[hook] = impl
            continue
        try:  # TOSCA also allows the implementation to be a file path
            hooks[hook] = _artifact_file(impl, written_in, csar, f"{written_in}: Vnflcm hook {hook!r}")
        except UnprocessableEntity:
            known = ", ".join(sorted(artifacts)) or "none"
            raise UnprocessableEntity(
                f"flavour {fl!r}: Vnflcm hook {hook!r} names artifact {impl!r}, which the VNF node does "
                f"not define (artifacts: {known})"
            ) from None

    description = ""
    if src.vnf is not None:
        description = str(
            _mapping(src.vnf.body.get("properties"), f"{f}: VNF properties").get("flavour_description") or ""
        )
    description = description or str(src.tt.get("description") or tree.docs[f].get("description") or "")
    flavour = Flavour(
        id=fl,
        description=description,
        vdus=vdus,
        cps=cps,
        virtual_links=vls,
        storages=storages,
        aspects=aspects,
        aspect_deltas=deltas,
        initial_deltas=initial,
        instantiation_levels=levels,
        default_level=default_level,
        hooks=hooks,
        artifacts=artifacts,
    )
    return flavour, images


def _image_artifact(body: dict[str, Any], file: str, csar: Csar, where: str) -> str:
    """The package path of a node's software image artifact, or '' when the image is not inside."""
    for _name, spec in _mapping(body.get("artifacts"), f"{where} artifacts").items():
        if (
            isinstance(spec, dict)
            and str(spec.get("type", "")).endswith("SwImage")
            and isinstance(spec.get("file"), str)
        ):
            return _artifact_file(spec["file"], file, csar, where)
    return ""


def _parse(csar: Csar) -> _Parsed:
    tree = _load_tree(csar)
    entry = csar.entry_definitions
    sources, top_vnf = _flavour_sources(tree, entry)
    nodes = [n for n in (top_vnf, *(s.vnf for s in sources)) if n is not None]
    if not nodes:
        raise UnprocessableEntity(f"{entry}: no node template of a type derived from tosca.nodes.nfv.VNF")
    vnf_type = nodes[0].body["type"]
    values: dict[str, str] = {}
    for key in (*_VNF_PROPS, "product_info_name"):
        v = _vnf_property(key, nodes, tree, vnf_type)
        if v is None and key != "product_info_name":
            raise UnprocessableEntity(f"{entry}: the VNF node has no {key}")
        values[key] = "" if v is None else str(v)
    flavours: dict[str, Flavour] = {}
    images: dict[str, dict[str, tuple[dict[str, Any], str]]] = {}
    for src in sources:
        flavours[src.id], images[src.id] = _parse_flavour(tree, src, top_vnf, csar)
    vnfd = Vnfd(
        id=values["descriptor_id"],
        version=values["descriptor_version"],
        provider=values["provider"],
        product_name=values["product_name"],
        software_version=values["software_version"],
        product_info_name=values["product_info_name"],
        flavours=flavours,
    )
    return _Parsed(vnfd, images)


def parse_vnfd(csar: Csar) -> Vnfd:
    """The VNFD of a package (raises UnprocessableEntity / PayloadTooLarge naming the problem)."""
    return _parse(csar).vnfd


# ============================================================================ SOL005 summary
def _checksum(v: Any, where: str) -> dict[str, str]:
    if isinstance(v, dict):
        return {"algorithm": str(v.get("algorithm") or ""), "hash": str(v.get("hash") or "")}
    if isinstance(v, str):
        return {"algorithm": "", "hash": v}
    raise UnprocessableEntity(f"{where}: sw_image_data has no checksum")


def package_summary(csar: Csar, vnfd: Vnfd) -> dict[str, Any]:
    """What SOL005 VnfPkgInfo needs: checksum, softwareImages, additionalArtifacts."""
    parsed = _parse(csar)
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    images: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    image_paths: set[str] = set()
    for fid in vnfd.flavours:
        for node, (img, path) in parsed.images.get(fid, {}).items():
            where = f"flavour {fid!r} node {node!r}"
            info: dict[str, Any] = {
                "id": node,
                "name": str(img.get("name") or ""),
                "provider": str(img.get("provider") or ""),
                "version": str(img.get("version") or ""),
                "checksum": _checksum(img.get("checksum"), where),
                "containerFormat": str(img.get("container_format") or "").upper(),
                "diskFormat": str(img.get("disk_format") or "").upper(),
                "createdAt": created,
                "minDisk": int(_size_bytes(img["min_disk"], f"{where} min_disk") // 1024**3)
                if img.get("min_disk") is not None
                else 0,
                "minRam": int(_size_bytes(img["min_ram"], f"{where} min_ram") // 1024**2)
                if img.get("min_ram") is not None
                else 0,
                "size": int(_size_bytes(img["size"], f"{where} size", si=True))
                if img.get("size") is not None
                else 0,
                "userMetadata": {},
                "imagePath": path,
            }
            if path:
                image_paths.add(path)
            previous = by_id.get(node)
            if previous is not None:
                if {k: v for k, v in previous.items() if k != "id"} == {
                    k: v for k, v in info.items() if k != "id"
                }:
                    continue
                info["id"] = f"{node}-{fid}"
            by_id[info["id"]] = info
            images.append(info)
    artifacts = [
        {"artifactPath": a.path, "checksum": {"algorithm": a.algorithm, "hash": a.hash}, "metadata": {}}
        for a in csar.artifacts
        if a.path not in image_paths
    ]
    return {"checksum": dict(csar.checksum), "softwareImages": images, "additionalArtifacts": artifacts}
