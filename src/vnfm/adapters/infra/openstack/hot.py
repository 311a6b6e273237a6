"""The package's BaseHOT for a flavour, and the parameters the driver computes for it.

A package ships `BaseHOT/<flavourId>/` with one top template (`*top*.yaml`, or the only YAML file
at that level) and nested templates (usually under `nested/`) that the top template names as
resource types. Conventions (those of the reference system's packages):

* a VDU is an `OS::Nova::Server` whose resource name is the VDU id, either in the top template
  (one VNFC) or in a nested template that an `OS::Heat::AutoScalingGroup` repeats (one VNFC per
  group member);
* a CP is an `OS::Neutron::Port` whose resource name is the CP id, next to its VDU's server;
* a virtual storage is an `OS::Cinder::Volume` named like the VirtualBlockStorage node;
* the top template takes one json parameter `nfv` and reads
  `nfv.VDU.<vduId>.{flavor,image,desired_capacity}` and `nfv.CP.<cpId>.{network,fixed_ips}`.

The driver never executes package Python (`lcm-operation-user-data`): `build_parameters` below is
the built-in generator that covers what the reference's default user data computes.
"""

from __future__ import annotations

import copy
import posixpath
from dataclasses import dataclass, field
from typing import Any

import yaml

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.ext_links import ext_cp_map
from vnfm.domain.vnfd import Flavour
from vnfm.service.ports import PackageFiles

GROUP_TYPES = ("OS::Heat::AutoScalingGroup",)
SERVER_TYPE = "OS::Nova::Server"
PORT_TYPE = "OS::Neutron::Port"
VOLUME_TYPE = "OS::Cinder::Volume"
FIP_TYPE = "OS::Neutron::FloatingIP"


@dataclass
class GroupSpec:
    """One AutoScalingGroup of the top template and the VDU(s) its members hold."""

    name: str
    nested_type: str  # the `resource.type` as written (the key in `files`)
    vdus: list[str]
    min_size: int | None = None
    max_size: int | None = None


@dataclass
class BaseHot:
    flavour_id: str
    top_path: str
    template: dict[str, Any]
    files: dict[str, str]  # resource type as written in a template -> that template's text
    groups: dict[str, GroupSpec] = field(default_factory=dict)  # group resource name -> spec
    single_vdus: list[str] = field(default_factory=list)  # VDUs that are servers of the top template

    def group_of_vdu(self, vdu_id: str) -> GroupSpec | None:
        return next((g for g in self.groups.values() if vdu_id in g.vdus), None)

    def nested_templates(self) -> dict[str, dict[str, Any]]:
        return {k: _load(v, k) for k, v in self.files.items()}

    def referenced_cps(self) -> set[str]:
        """CP ids that some template reads from `nfv.CP` (they need a network)."""
        found: set[str] = set()
        for tpl in [self.template, *self.nested_templates().values()]:
            _walk_get_param(tpl, found)
        return found

    def standalone_ports(self, flavour: Flavour) -> list[str]:
        """Ports of the top template that belong to no VDU: not a CP of the flavour, not a NIC of a
        server of the top template (e.g. the `vip_CP` port of a keepalived VIP)."""
        resources = self.template.get("resources") or {}
        nics: set[str] = set()
        for res in resources.values():
            if isinstance(res, dict) and res.get("type") == SERVER_TYPE:
                for net in (res.get("properties") or {}).get("networks") or []:
                    port = net.get("port") if isinstance(net, dict) else None
                    if isinstance(port, dict) and isinstance(port.get("get_resource"), str):
                        nics.add(port["get_resource"])
        return [
            name
            for name, res in resources.items()
            if isinstance(res, dict) and res.get("type") == PORT_TYPE and name not in flavour.cps and name not in nics
        ]

    def with_capacities(self, counts: dict[str, int]) -> dict[str, Any]:
        """The top template with each group's desired_capacity set from the VDU counts."""
        tpl = copy.deepcopy(self.template)
        resources = tpl.get("resources") or {}
        for name, g in self.groups.items():
            n = _group_count(g, counts)
            if n is None:
                continue
            if g.max_size is not None and n > g.max_size:
                raise UnprocessableEntity(
                    f"{g.name}: {n} VNFCs of VDU {', '.join(g.vdus)} exceed the group's max_size {g.max_size} "
                    f"in BaseHOT/{self.flavour_id}"
                )
            if g.min_size is not None and n < g.min_size:
                raise UnprocessableEntity(
                    f"{g.name}: {n} VNFCs of VDU {', '.join(g.vdus)} are fewer than the group's min_size "
                    f"{g.min_size} in BaseHOT/{self.flavour_id}"
                )
            resources[name].setdefault("properties", {})["desired_capacity"] = n
        return tpl


def _group_count(g: GroupSpec, counts: dict[str, int]) -> int | None:
    values = {counts[v] for v in g.vdus if v in counts}
    if not values:
        return None
    if len(values) > 1:
        raise UnprocessableEntity(
            f"group {g.name} holds VDUs {', '.join(g.vdus)} whose counts differ ({sorted(values)})"
        )
    return values.pop()


class _HeatLoader(yaml.SafeLoader):
    """Like Heat's own loader: dates stay strings (heat_template_version: 2013-05-23)."""


_HeatLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _load(text: str, where: str) -> dict[str, Any]:
    try:
        data = yaml.load(text, Loader=_HeatLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise UnprocessableEntity(f"{where}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise UnprocessableEntity(f"{where}: a Heat template must be a mapping")
    return data


def _walk_get_param(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        gp = node.get("get_param")
        if isinstance(gp, list) and len(gp) >= 3 and gp[0] == "nfv" and gp[1] == "CP":
            found.add(str(gp[2]))
        for v in node.values():
            _walk_get_param(v, found)
    elif isinstance(node, list):
        for v in node:
            _walk_get_param(v, found)


def _is_template_type(t: Any) -> bool:
    return isinstance(t, str) and not t.startswith("OS::") and t.endswith((".yaml", ".yml", ".template"))


def load_base_hot(package: PackageFiles | None, flavour: Flavour) -> BaseHot:
    """Read BaseHOT/<flavour>/ from the package: top template, nested templates, groups."""
    if package is None:
        raise UnprocessableEntity("the OpenStack driver needs the VNF package's BaseHOT, and no package is given")
    base = f"BaseHOT/{flavour.id}"
    listing = [p for p in package.listing() if p.startswith(base + "/") and p.endswith((".yaml", ".yml"))]
    if not listing:
        raise UnprocessableEntity(
            f"the package has no Heat template for flavour '{flavour.id}' (expected {base}/<top>.yaml)"
        )
    level = [p for p in listing if "/" not in p[len(base) + 1 :]]
    tops = [p for p in level if "top" in posixpath.basename(p)] or level
    if len(tops) != 1:
        raise UnprocessableEntity(
            f"{base}: cannot tell the top template ({', '.join(sorted(level)) or 'no YAML file at that level'}); "
            "name it *top*.yaml"
        )
    top_path = tops[0]
    template = _load(package.read(top_path).decode(), top_path)
    files: dict[str, str] = {}
    _collect_files(package, listing, top_path, template, files)

    vdu_ids = set(flavour.vdus)
    groups: dict[str, GroupSpec] = {}
    singles: list[str] = []
    for name, res in (template.get("resources") or {}).items():
        if not isinstance(res, dict):
            continue
        rtype = res.get("type")
        props = res.get("properties") or {}
        if rtype in GROUP_TYPES:
            inner = (props.get("resource") or {}).get("type")
            if not isinstance(inner, str) or not _is_template_type(inner):
                continue
            nested = _load(files[inner], inner)
            vdus = [
                rn
                for rn, r in (nested.get("resources") or {}).items()
                if isinstance(r, dict) and r.get("type") == SERVER_TYPE and rn in vdu_ids
            ]
            if vdus:
                groups[name] = GroupSpec(
                    name=name,
                    nested_type=inner,
                    vdus=vdus,
                    min_size=_int_or_none(props.get("min_size")),
                    max_size=_int_or_none(props.get("max_size")),
                )
        elif rtype == SERVER_TYPE and name in vdu_ids:
            singles.append(name)
    missing = sorted(vdu_ids - set(singles) - {v for g in groups.values() for v in g.vdus})
    if missing:
        raise UnprocessableEntity(
            f"{top_path}: no OS::Nova::Server named after VDU(s) {', '.join(missing)} "
            "(in the top template or in a nested template of an OS::Heat::AutoScalingGroup)"
        )
    return BaseHot(flavour.id, top_path, template, files, groups, singles)


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) else None


def _collect_files(
    package: PackageFiles, listing: list[str], path: str, template: dict[str, Any], files: dict[str, str]
) -> None:
    """Every nested template a template names, keyed by the type as written (Heat's `files`)."""
    types: list[str] = []
    _walk_types(template, types)
    for t in types:
        if t in files:
            continue
        found = _resolve(listing, path, t)
        if found is None:
            raise UnprocessableEntity(f"{path}: nested template '{t}' is not in the package")
        text = package.read(found).decode()
        files[t] = text
        _collect_files(package, listing, found, _load(text, found), files)


def _walk_types(node: Any, out: list[str]) -> None:
    if isinstance(node, dict):
        t = node.get("type")
        if _is_template_type(t):
            out.append(str(t))
        for v in node.values():
            _walk_types(v, out)
    elif isinstance(node, list):
        for v in node:
            _walk_types(v, out)


def _resolve(listing: list[str], from_path: str, t: str) -> str | None:
    here = posixpath.dirname(from_path)
    for cand in (posixpath.normpath(posixpath.join(here, t)), posixpath.normpath(posixpath.join(here, "nested", t))):
        if cand in listing:
            return cand
    same_name = [p for p in listing if posixpath.basename(p) == posixpath.basename(t)]
    return same_name[0] if len(same_name) == 1 else None


# ====================================================================== parameters
@dataclass
class VduChoice:
    flavor: str
    image: str


def build_parameters(
    hot: BaseHot,
    flavour: Flavour,
    counts: dict[str, int],
    choices: dict[str, VduChoice],
    ext_virtual_links: list[dict[str, Any]],
    additional_params: dict[str, Any],
) -> dict[str, Any]:
    """The stack parameters: `nfv` (VDU flavors/images/capacities, CP networks) when declared."""
    declared = hot.template.get("parameters") or {}
    params: dict[str, Any] = {}
    if "nfv" in declared:
        vdu: dict[str, Any] = {}
        for vdu_id in flavour.vdus:
            entry: dict[str, Any] = {"flavor": choices[vdu_id].flavor, "image": choices[vdu_id].image}
            if vdu_id in counts:
                entry["desired_capacity"] = counts[vdu_id]
            vdu[vdu_id] = entry
        ext = ext_cp_map(ext_virtual_links)
        override_cps = ((additional_params.get("nfv") or {}).get("CP") or {}) if additional_params else {}
        cp: dict[str, Any] = {}
        needed = hot.referenced_cps()
        for cp_id in sorted(set(flavour.cps) | needed):
            c: dict[str, Any] = {}
            if cp_id in ext:
                _, network_id, fixed = ext[cp_id]
                c["network"] = network_id
                if fixed:
                    c["fixed_ips"] = [{"ip_address": a} for a in fixed]
            if isinstance(override_cps.get(cp_id), dict):
                c.update(override_cps[cp_id])
            if c:
                cp[cp_id] = c
            elif cp_id in needed and not (flavour.cps.get(cp_id) and flavour.cps[cp_id].virtual_link):
                raise UnprocessableEntity(
                    f"CP {cp_id} has no network: give it in extVirtualLinks[].extCps (cpdId {cp_id}) "
                    f"with the network's id as resourceId"
                )
        params["nfv"] = {"VDU": vdu, "CP": cp}
    extra = additional_params.get("heat_parameters") if additional_params else None
    if isinstance(extra, dict):
        params.update({k: v for k, v in extra.items() if k in declared and k != "nfv"})
    return params


def vnfd_node_extras(package: PackageFiles | None) -> dict[str, dict[str, Any]]:
    """What the parsed VNFD model leaves out and the driver needs, read from Definitions/*.yaml:
    node id -> {"flavor": requested_additional_capability_name, "image_file", "disk_format",
    "container_format", "image_name"}."""
    out: dict[str, dict[str, Any]] = {}
    if package is None:
        return out
    for path in package.listing():
        if not path.startswith("Definitions/") or not path.endswith((".yaml", ".yml")):
            continue
        try:
            doc = yaml.safe_load(package.read(path))
        except yaml.YAMLError:
            continue
        nodes = ((doc or {}).get("topology_template") or {}).get("node_templates") or {}
        if not isinstance(nodes, dict):
            continue
        for node_id, node in nodes.items():
            if not isinstance(node, dict):
                continue
            info = out.setdefault(str(node_id), {})
            props = node.get("properties") or {}
            img = props.get("sw_image_data") or {}
            if isinstance(img, dict) and img:
                info["image_name"] = img.get("name")
                info["disk_format"] = img.get("disk_format", "qcow2")
                info["container_format"] = img.get("container_format", "bare")
            caps = ((node.get("capabilities") or {}).get("virtual_compute") or {}).get("properties") or {}
            rac = caps.get("requested_additional_capabilities") or {}
            if isinstance(rac, dict):
                for v in [rac, *rac.values()]:
                    name = v.get("requested_additional_capability_name") if isinstance(v, dict) else None
                    if not name and isinstance(v, dict):
                        name = (v.get("properties") or {}).get("requested_additional_capability_name")
                    if name:
                        info["flavor"] = str(name)
                        break
            for art in (node.get("artifacts") or {}).values():
                if isinstance(art, dict) and "SwImage" in str(art.get("type", "")) and art.get("file"):
                    f = str(art["file"])
                    info["image_file"] = posixpath.normpath(posixpath.join(posixpath.dirname(path), f))
                    info["image_file_raw"] = f
    return out
