"""`JobStore` is the one path through which the engine writes occurrences and instances (fencing a
stale owner, issue 12, is added there): no other module of the engine saves either."""

from __future__ import annotations

import ast
from pathlib import Path

import vnfm.service.lcm as lcm_pkg

WRITES = {"save", "add", "delete"}
REPOS = {"op_occs", "instances"}


def _writes(path: Path) -> list[tuple[str, int]]:
    """(function, line) of every `<uow>.op_occs|instances.save|add|delete(...)` call in `path`."""
    found = []
    tree = ast.parse(path.read_text())
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr in REPOS):
                found.append((fn.name, node.lineno))
    return found


def test_only_the_job_store_writes_occurrences_and_instances() -> None:
    root = Path(lcm_pkg.__file__).parent
    writes = {str(p.relative_to(root)): _writes(p) for p in sorted(root.rglob("*.py"))}
    assert {name for name, _ in writes.pop("job.py")} == {"_write"}
    assert {k: v for k, v in writes.items() if v} == {}
