"""docs/parameters.md stays in step with the parameter models.

Generic over MODELS: a new driver's parameters are one more entry (its module, its parse function
and a sample that holds its keys) and one more section of the page marked
`<!-- params: <module> -->`. For each model:
- every key its module reads (string keys read with accessors, `.get`, `[...]`, `in`, found with
  `ast`) is documented on the page;
- every documented key is read by the module (its last path component);
- the sample parses; a documented key with a value of the wrong type is refused with a message
  that starts with its full path (so the documented path is the one read); a required key that is
  missing is refused naming its path (or, for "one of a, b", its parent's).
"""

from __future__ import annotations

import ast
import copy
import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vnfm.domain.errors import VnfmError

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "parameters.md"
EXAMPLES = ROOT / "examples" / "requests"
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Row:
    path: str
    type: str
    required: str


@dataclass(frozen=True)
class Model:
    module: str
    parse: Callable[[dict[str, Any]], Any]
    sample: Callable[[], dict[str, Any]]


def _example(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((EXAMPLES / name).read_text())["additionalParams"]
    return body


def cluster_sample() -> dict[str, Any]:
    """Every cluster key at once: the storage and registry samples merged, the proxy too."""
    p = _example("instantiate-storage-pv.json")
    k = p["k8s_cluster_installation_param"]
    other = _example("instantiate-private-registry.json")["k8s_cluster_installation_param"]
    k["private_registry_connection_info"] = other["private_registry_connection_info"]
    k["proxy"] = _example("instantiate-single-master.json")["k8s_cluster_installation_param"]["proxy"]
    return p


def kubespray_sample() -> dict[str, Any]:
    p = cluster_sample()
    p["k8s_cluster_installation_param"].update({
        "ansible": {"ip_address": "192.168.10.5", "username": "ubuntu", "password": "ubuntu",
                    "kubespray_root_path": "/home/ubuntu/kubespray",
                    "transferring_inventory_path": "/home/ubuntu/kubespray/inventory/mycluster"},
        "external_lb_param": {"ssh_cp_name": "externalLB_FloatingIP", "ssh_username": "ubuntu",
                              "ssh_password": "ubuntu", "script_path": "Scripts/configure_lb.sh"},
    })
    return p


def _parse_of(module: str) -> Callable[[dict[str, Any]], Any]:
    return lambda params: importlib.import_module(module).parse(params)


MODELS = [
    Model("vnfm.adapters.mgmt.cluster.params", _parse_of("vnfm.adapters.mgmt.cluster.params"), cluster_sample),
    Model("vnfm.adapters.mgmt.kubespray.params", _parse_of("vnfm.adapters.mgmt.kubespray.params"), kubespray_sample),
]


# ============================================================================= the page
def sections() -> dict[str, list[Row]]:
    """module -> its rows; rows of unmarked sections under ''."""
    out: dict[str, list[Row]] = {}
    current = ""
    for line in DOC.read_text().splitlines():
        m = re.match(r"^<!-- params: ([\w.]+) -->$", line)
        if m:
            current = m[1]
            continue
        if line.startswith("## "):
            current = ""
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("| ") else []
        if len(cells) == 6 and cells[0] not in ("key", "---"):
            out.setdefault(current, []).append(Row(cells[0], cells[1], cells[2]))
    return out


def documented_names() -> set[str]:
    text = DOC.read_text()
    names = {part.removesuffix("[]") for rows in sections().values() for r in rows
             for part in r.path.replace(",", " ").split() for part in part.split(".")}
    return names | set(re.findall(r"alias `(\w+)`", text))


# ============================================================================= the code
def read_keys(module: str) -> set[str]:
    """String keys the module reads: accessor arguments, `.get(...)`, `x["k"]`, `"k" in x`, loops
    over literal tuples, module-level string constants."""
    path = Path(importlib.import_module(module).__file__ or "")
    tree = ast.parse(path.read_text())
    found: set[str] = set()

    def add(node: ast.AST | None) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _KEY.match(node.value):
            found.add(node.value)

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for a in node.args[:2]:
                add(a)
        elif isinstance(node, ast.Subscript):
            add(node.slice)
        elif isinstance(node, ast.Compare) and any(isinstance(o, ast.In | ast.NotIn) for o in node.ops):
            add(node.left)
        elif isinstance(node, ast.For) and isinstance(node.iter, ast.Tuple):
            for e in node.iter.elts:
                add(e)
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) and t.id.isupper() for t in stmt.targets):
            add(stmt.value)
    return found


# ============================================================================= helpers
def _steps(path: str) -> list[str | int]:
    steps: list[str | int] = []
    for part in path.split("."):
        if part.endswith("[]"):
            steps += [part[:-2], 0]
        else:
            steps.append(part)
    return steps


def _set(params: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = _steps(path)
    d: Any = params
    for s in parents:
        d = d[s]
    d[last] = value


def _delete(params: dict[str, Any], path: str) -> None:
    *parents, last = _steps(path)
    d: Any = params
    for s in parents:
        d = d[s]
    d.pop(last, None)


def _shown(path: str) -> str:
    return "additionalParams." + path.replace("[]", "[0]")


def _refused(model: Model, params: dict[str, Any]) -> str:
    with pytest.raises(VnfmError) as e:
        model.parse(params)
    assert e.value.status in (400, 422)
    return str(e.value.detail)


# ============================================================================= the tests
def test_every_model_has_a_section() -> None:
    assert set(sections()) - {""} == {m.module for m in MODELS}


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.module)
def test_every_key_the_model_reads_is_documented(model: Model) -> None:
    missing = read_keys(model.module) - documented_names()
    assert not missing, f"{model.module} reads keys docs/parameters.md does not describe: {sorted(missing)}"


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.module)
def test_every_documented_key_is_read_by_the_model(model: Model) -> None:
    read = read_keys(model.module)
    leaves = {r.path.rsplit(".", 1)[-1].removesuffix("[]") for r in sections()[model.module]}
    assert not leaves - read, f"documented for {model.module} but not read by it: {sorted(leaves - read)}"


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.module)
def test_documented_paths_types_and_required_keys(model: Model) -> None:
    model.parse(model.sample())
    for row in sections()[model.module]:
        params = model.sample()
        container = row.type.startswith(("object", "list"))
        _set(params, row.path, "x" if container else {"wrong": 1})
        detail = _refused(model, params)
        assert detail.startswith(_shown(row.path)), (row.path, detail)
        if row.required == "yes" and not row.path.endswith("[]"):
            params = model.sample()
            _delete(params, row.path)
            detail = _refused(model, params)
            assert detail.startswith(_shown(row.path)), (row.path, detail)
        elif row.required.startswith("one of "):
            params = model.sample()
            parent = row.path.rsplit(".", 1)[0]
            for alt in row.required.removeprefix("one of ").split(", "):
                _delete(params, f"{parent}.{alt}")
            detail = _refused(model, params)
            assert detail.startswith(_shown(parent)), (row.path, detail)


def test_the_check_can_fail() -> None:
    """An undocumented key read by a model would be seen: a module reading `not_documented`."""
    code = 'def parse(d):\n    return d.get("not_documented")\n'
    tree = ast.parse(code)
    keys = {n.args[0].value for n in ast.walk(tree) if isinstance(n, ast.Call) and n.args}
    assert keys - documented_names() == {"not_documented"}
    sample = copy.deepcopy(cluster_sample())
    assert sample["k8s_cluster_installation_param"]["storage_server"]
