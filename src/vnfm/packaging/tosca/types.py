"""The type tree: every VNFD file reachable from the entry definitions through `imports`, and the
node and policy types they define, matched through their `derived_from` chains.

The standard ETSI type files (etsi_nfv_sol001_*types.yaml) are never parsed: the standard types
are known by name, so those imports may be absent from the package.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from vnfm.domain.errors import UnprocessableEntity
from vnfm.packaging.csar import Csar, normalize_package_path
from vnfm.packaging.tosca.yaml_safe import load_yaml_safely

_STANDARD_NODE_TYPES: dict[str, str | None] = {
    "tosca.nodes.Root": None,
    "tosca.nodes.nfv.VNF": "tosca.nodes.Root",
    "tosca.nodes.nfv.Vdu.Compute": "tosca.nodes.Root",
    "tosca.nodes.nfv.Cp": "tosca.nodes.Root",
    "tosca.nodes.nfv.VduCp": "tosca.nodes.nfv.Cp",
    "tosca.nodes.nfv.VnfExtCp": "tosca.nodes.nfv.Cp",
    "tosca.nodes.nfv.VnfVirtualLink": "tosca.nodes.Root",
    "tosca.nodes.nfv.Vdu.VirtualBlockStorage": "tosca.nodes.Root",
    "tosca.nodes.nfv.Vdu.VirtualObjectStorage": "tosca.nodes.Root",
    "tosca.nodes.nfv.Vdu.VirtualFileStorage": "tosca.nodes.Root",
}
_NODE_KINDS = {
    "tosca.nodes.nfv.VNF": "vnf",
    "tosca.nodes.nfv.Vdu.Compute": "vdu",
    "tosca.nodes.nfv.VduCp": "cp",
    "tosca.nodes.nfv.VnfVirtualLink": "vl",
    "tosca.nodes.nfv.Vdu.VirtualBlockStorage": "storage",
}
_POLICY_KINDS = {
    "tosca.policies.nfv.ScalingAspects": "aspects",
    "tosca.policies.nfv.VduScalingAspectDeltas": "deltas",
    "tosca.policies.nfv.VduInitialDelta": "initial",
    "tosca.policies.nfv.InstantiationLevels": "levels",
    "tosca.policies.nfv.VduInstantiationLevels": "vdu_levels",
}
_STANDARD_FILE = re.compile(r"^etsi_nfv_sol001_[a-z0-9_]*types\.ya?ml$", re.IGNORECASE)
URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_MAX_FILES = 200


@dataclass
class TypeDef:
    name: str
    body: dict[str, Any]
    file: str


@dataclass
class Tree:
    """Every VNFD file reachable from the entry definitions, in load order, and their types."""

    docs: dict[str, dict[str, Any]]
    node_types: dict[str, TypeDef]
    policy_types: dict[str, TypeDef]

    def _chain(self, type_name: str, defs: dict[str, TypeDef], std: dict[str, str | None]) -> list[str]:
        chain: list[str] = []
        t: str | None = type_name
        while t is not None:
            if t in chain:
                raise UnprocessableEntity(f"type {type_name!r} has a derived_from cycle through {t!r}")
            chain.append(t)
            if t in defs:
                parent = defs[t].body.get("derived_from")
                t = parent if isinstance(parent, str) else None
            else:
                t = std.get(t)
        return chain

    def node_kind(self, type_name: str, where: str) -> str | None:
        if type_name not in self.node_types and type_name not in _STANDARD_NODE_TYPES:
            if type_name.startswith("tosca."):
                return None  # a standard type we do not use (e.g. tosca.nodes.Compute)
            raise UnprocessableEntity(f"{where} has type {type_name!r}, which no imported file defines")
        for t in self._chain(type_name, self.node_types, _STANDARD_NODE_TYPES):
            if t in _NODE_KINDS:
                return _NODE_KINDS[t]
        return None

    def policy_kind(self, type_name: str) -> str | None:
        for t in self._chain(type_name, self.policy_types, {}):
            if t in _POLICY_KINDS:
                return _POLICY_KINDS[t]
        return None

    def type_defs(self, type_name: str) -> list[TypeDef]:
        """Package-defined types of the chain, most derived first."""
        return [
            self.node_types[t]
            for t in self._chain(type_name, self.node_types, _STANDARD_NODE_TYPES)
            if t in self.node_types
        ]


def _import_targets(doc: dict[str, Any], name: str) -> Iterator[str]:
    imports = doc.get("imports") or []
    if not isinstance(imports, list):
        raise UnprocessableEntity(f"{name}: 'imports' must be a list")
    for item in imports:
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict) and isinstance(item.get("file"), str):
            yield item["file"]
        elif isinstance(item, dict) and len(item) == 1:
            value = next(iter(item.values()))
            if isinstance(value, str):
                yield value
            elif isinstance(value, dict) and isinstance(value.get("file"), str):
                yield value["file"]
            else:
                raise UnprocessableEntity(f"{name}: cannot read import {item!r}")
        else:
            raise UnprocessableEntity(f"{name}: cannot read import {item!r}")


def _resolve_import(importer: str, target: str, csar: Csar) -> str | None:
    base = posixpath.basename(target.rstrip("/"))
    if _STANDARD_FILE.match(base):
        return None  # standard ETSI types: known by name, never parsed
    if URI.match(target):
        raise UnprocessableEntity(f"{importer}: remote import {target!r} is not supported")
    if target.startswith("/") or "\\" in target:
        raise UnprocessableEntity(f"{importer}: import {target!r} escapes the package")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), target))
    if joined == ".." or joined.startswith("../"):
        raise UnprocessableEntity(f"{importer}: import {target!r} escapes the package")
    path = normalize_package_path(joined, f"{importer}: import")
    if path not in csar.files:
        raise UnprocessableEntity(f"{importer}: import {target!r} ({path}) is not in the package")
    return path


def load_tree(csar: Csar) -> Tree:
    docs: dict[str, dict[str, Any]] = {}
    node_types: dict[str, TypeDef] = {}
    policy_types: dict[str, TypeDef] = {}
    queue = [csar.entry_definitions]
    while queue:
        path = queue.pop(0)
        if path in docs:
            continue
        if len(docs) >= _MAX_FILES:
            raise UnprocessableEntity(f"the VNFD imports more than {_MAX_FILES} files")
        doc = load_yaml_safely(csar.files[path], path)
        if not isinstance(doc, dict):
            raise UnprocessableEntity(f"{path}: a VNFD file must be a YAML mapping")
        docs[path] = doc
        for target in _import_targets(doc, path):
            resolved = _resolve_import(path, target, csar)
            if resolved is not None and resolved not in docs:
                queue.append(resolved)
        for key, store in (("node_types", node_types), ("policy_types", policy_types)):
            section = doc.get(key) or {}
            if not isinstance(section, dict):
                raise UnprocessableEntity(f"{path}: '{key}' must be a mapping")
            for tname, body in section.items():
                if not isinstance(body, dict):
                    raise UnprocessableEntity(f"{path}: {key} {tname!r} must be a mapping")
                store[str(tname)] = TypeDef(str(tname), body, path)
    return Tree(docs, node_types, policy_types)
