"""The shape of src/vnfm, read with `ast`: imports point one way, no import cycle, management drivers
know nothing of the simulator or of other adapters, and no module or function grows past what a
reader holds in mind. See notes/LAYOUT-PLAN.md and README "Layout"."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "vnfm"

# rank of each top-level area: an import may only go to the same or a lower rank
RANKS = {
    "vnfm.domain": 0,
    "vnfm.nodesteps": 1,
    "vnfm.packaging": 1,
    "vnfm.service": 2,
    "vnfm.adapters": 3,
    "vnfm.examples": 3,  # package data plus a helper that builds the example CSAR
    "vnfm.config": 4,
    "vnfm.bootstrap": 4,
    "vnfm.entrypoints": 5,
}
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
# module or "module:function" -> why it may be longer
LONG_ALLOWED = {
    "vnfm.adapters.db.migrations.versions.0001_initial:upgrade":
        "a migration lists the whole first schema in one place, as Alembic writes them",
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PKG.rglob("*.py")}


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _type_only_lines(tree: ast.Module) -> set[int]:
    """Lines inside `if TYPE_CHECKING:` blocks: imports there never run."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def _imports(name: str, path: Path, *, runtime_only: bool = False) -> Iterator[tuple[str, int]]:
    """(imported vnfm module, line) for every import in the module, lazy ones included; with
    `runtime_only`, not those under `if TYPE_CHECKING:` (annotations only)."""
    tree = ast.parse(path.read_text())
    skip = _type_only_lines(tree) if runtime_only else set()
    package = name if _is_package(name) else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skip:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("vnfm"):
                    yield a.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, *([node.module] if node.module else [])])
            else:
                mod = node.module or ""
            if not mod.startswith("vnfm"):
                continue
            for a in node.names:  # `from vnfm.x import y` imports module vnfm.x.y when there is one
                sub = f"{mod}.{a.name}"
                yield (sub if sub in MODULES else mod), node.lineno


def _area(module: str) -> str:
    for area in sorted(RANKS, key=len, reverse=True):
        if module == area or module.startswith(area + "."):
            return area
    return module


# what runs: imports under `if TYPE_CHECKING:` are annotations, not edges
GRAPH = {name: sorted({m for m, _ in _imports(name, path, runtime_only=True) if m in MODULES and m != name})
         for name, path in MODULES.items()}


def test_the_graph_is_read() -> None:
    assert len(MODULES) > 100
    assert "vnfm.service.ports" in GRAPH["vnfm.adapters.mgmt.kubeadm.driver"]
    assert "vnfm.domain.errors" in GRAPH["vnfm.nodesteps.base"]


def test_imports_point_one_way() -> None:
    bad = []
    for name, path in MODULES.items():
        rank = RANKS.get(_area(name))
        if rank is None:
            if name != "vnfm":
                bad.append(f"{name}: not in any area of RANKS")
            continue
        for imp, line in _imports(name, path):
            to = RANKS.get(_area(imp))
            if to is not None and to > rank:
                bad.append(f"{path.relative_to(SRC)}:{line} imports {imp} ({_area(name)} -> {_area(imp)})")
            if _area(name) == "vnfm.adapters" and _area(imp) == "vnfm.service" and imp != "vnfm.service.ports":
                bad.append(f"{path.relative_to(SRC)}:{line} imports {imp}: adapters use only the service's ports")
    assert not bad, "\n".join(bad)


def test_no_import_cycle() -> None:
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done
    stack: list[str] = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in GRAPH[n]:
            if state.get(m) == 1:
                cycles.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(GRAPH):
        if n not in state:
            visit(n)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_a_cycle_would_be_seen() -> None:
    """The cycle check can fail: an edge back from a module to one that imports it is found."""
    graph = {k: list(v) for k, v in GRAPH.items()}
    graph["vnfm.domain.errors"] = [*graph["vnfm.domain.errors"], "vnfm.service.ports"]

    def reaches(a: str, b: str, seen: set[str]) -> bool:
        return a == b or any(m not in seen and not seen.add(m) and reaches(m, b, seen) for m in graph[a])

    assert reaches("vnfm.service.ports", "vnfm.domain.errors", set())
    assert reaches("vnfm.domain.errors", "vnfm.service.ports", set())


def test_management_drivers_stay_management_drivers() -> None:
    """No management driver imports an infrastructure driver or node-access adapter, and none
    mentions the simulator: what they need comes from the composition root."""
    bad = []
    for name, path in MODULES.items():
        if not name.startswith("vnfm.adapters.mgmt"):
            continue
        for imp, line in _imports(name, path):
            if imp.startswith(("vnfm.adapters.infra", "vnfm.adapters.nodes", "vnfm.adapters.remote")):
                bad.append(f"{path.relative_to(SRC)}:{line} imports {imp}")
        for i, text in enumerate(path.read_text().splitlines(), 1):
            if "simulat" in text.lower() or "sim." in text or '"sim"' in text:
                bad.append(f"{path.relative_to(SRC)}:{i} mentions the simulator: {text.strip()}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_and_functions_stay_small(name: str) -> None:
    path = MODULES[name]
    text = path.read_text()
    lines = len(text.splitlines())
    assert lines <= MAX_MODULE_LINES or name in LONG_ALLOWED, f"{name} has {lines} lines (> {MAX_MODULE_LINES})"
    long = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = (node.end_lineno or node.lineno) - node.lineno + 1
            if n > MAX_FUNCTION_LINES and f"{name}:{node.name}" not in LONG_ALLOWED:
                long.append(f"{node.name} ({n} lines)")
    assert not long, f"{name}: functions over {MAX_FUNCTION_LINES} lines: {', '.join(long)}"
