"""docs/parameters.md and the README's parameter tables, generated from the declared schemas
(`vnfm dev params-doc` writes them, `--check` fails when they drifted; tests/api/test_parameters_doc.py
runs the check). A generated block sits between `<!-- params: <section> [brief] -->` and
`<!-- /params -->`; the text around it is written by hand.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from vnfm.adapters.infra.kubernetes.params import DECLARED as KUBERNETES
from vnfm.adapters.infra.openstack.params import DECLARED as OPENSTACK
from vnfm.adapters.mgmt.cluster.params import DECLARED as KUBEADM
from vnfm.adapters.mgmt.cnf_nodeport.params import DECLARED as CNF_NODEPORT
from vnfm.adapters.mgmt.kubespray.params import DECLARED as KUBESPRAY
from vnfm.adapters.mgmt.private_registry.params import DECLARED as PRIVATE_REGISTRY
from vnfm.domain.params import Declared, Doc
from vnfm.service.params import ENGINE

SECTIONS: dict[str, Declared[Any]] = {
    "engine": ENGINE, "kubeadm": KUBEADM, "kubespray": KUBESPRAY, "private-registry": PRIVATE_REGISTRY,
    "cnf-nodeport": CNF_NODEPORT, "openstack": OPENSTACK, "kubernetes": KUBERNETES,
}
FILES = ("docs/parameters.md", "README.md")
_BLOCK = re.compile(r"(<!-- params: ([\w-]+)( brief)? -->\n).*?(<!-- /params -->)", re.DOTALL)


@dataclass(frozen=True)
class Row:
    path: str
    type: str
    required: str
    default: str
    meaning: str
    seed: str


def type_label(annotation: Any, info: FieldInfo | None = None) -> str:
    for m in info.metadata if info is not None else ():
        if isinstance(m, Doc):
            return m.label
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        return next((m.label for m in args[1:] if isinstance(m, Doc)), None) or type_label(args[0])
    if origin in (Union, types.UnionType):
        return type_label(next(a for a in args if a is not type(None)))
    if origin in (list, tuple):
        inner = args[0]
        return "list of objects" if _model(inner) else f"list of {type_label(inner)}"
    if origin is Literal:
        return " or ".join(f'"{a}"' for a in args)
    if origin is dict:
        return "object (free-form)"
    if _model(annotation):
        return "object"
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(annotation, str(annotation))


def _model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType, Annotated):
        return next((m for m in map(_model, get_args(annotation)) if m is not None), None)
    return None


def _list_model(annotation: Any) -> type[BaseModel] | None:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return next((m for m in map(_list_model, get_args(annotation)) if m is not None), None)
    return _model(get_args(annotation)[0]) if origin in (list, tuple) else None


def _default(f: FieldInfo, extra: dict[str, Any]) -> str:
    if "shown" in extra:
        return str(extra["shown"])
    d = f.default
    if d is PydanticUndefined or d is None or isinstance(d, BaseModel | list | tuple | dict):
        return ""
    return str(d).lower() if isinstance(d, bool) else f"{d:g}" if isinstance(d, float) else str(d)


def rows(model: type[BaseModel], prefix: str = "") -> Iterator[Row]:
    for name, f in model.model_fields.items():
        extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
        path = f"{prefix}{f.alias or name}"
        meaning = str(f.description or "")
        if extra.get("inert"):
            meaning += f"; accepted, not acted on ({extra['inert']}: a warning says so)"
        required = str(extra.get("required") or ("yes" if f.is_required() else "no"))
        yield Row(path, type_label(f.annotation, f), required, _default(f, extra), meaning, str(extra.get("seed", "")))
        sub, many = _model(f.annotation), _list_model(f.annotation)
        if many is not None:
            yield from rows(many, f"{path}[].")
        elif sub is not None:
            yield from rows(sub, f"{path}.")


def merge_rule(d: Declared[Any]) -> str:
    top = sorted(d.keys)
    if d.merge_depth <= 1:
        return "A later request's value of a key replaces the stored one whole."
    if d.merge_depth == 2:
        return (f"A scale or heal request may repeat the keys inside {', '.join(f'`{k}`' for k in top)}: each "
                "replaces the stored one whole (an object given must be complete).")
    return (f"A scale or heal request may repeat keys inside {', '.join(f'`{k}`' for k in top)} and one level "
            "deeper (e.g. `master_node.password` alone): each overrides the stored value.")


def render(section: str, brief: bool = False) -> str:
    d = SECTIONS[section]
    out = [f"*Owner: {d.owner}. {merge_rule(d)}*", ""]
    if brief:
        out += ["| key | required | default | meaning |", "| --- | --- | --- | --- |"]
        out += [f"| `{r.path}` | {r.required} | {r.default} | {r.meaning} |" for r in rows(d.model)]
    else:
        out += ["| key | type | required | default | meaning | seed |", "| --- | --- | --- | --- | --- | --- |"]
        out += [f"| {r.path} | {r.type} | {r.required} | {r.default} | {r.meaning} | {r.seed} |" for r in rows(d.model)]
    return "\n".join(out) + "\n"


def regenerate(text: str) -> str:
    return _BLOCK.sub(lambda m: m[1] + render(m[2], bool(m[3])) + m[4], text)


def stale(root: Path) -> list[str]:
    """The files whose generated blocks differ from the schemas."""
    return [name for name in FILES if regenerate((root / name).read_text()) != (root / name).read_text()]


def write(root: Path) -> list[str]:
    changed = stale(root)
    for name in changed:
        (root / name).write_text(regenerate((root / name).read_text()))
    return changed
