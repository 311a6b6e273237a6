"""The shape of vnfm.entrypoints.cli (issue 10): small modules and functions, no import cycle, and
function-level imports only where they keep `vnfm --help` fast (each listed with its reason)."""

from __future__ import annotations

import ast
from pathlib import Path

import vnfm.entrypoints.cli

CLI = Path(vnfm.entrypoints.cli.__file__).parent
PACKAGE = "vnfm.entrypoints.cli"

# (module, imported module): why it is imported inside a function
LAZY_IMPORTS = {
    ("commands.auth", "vnfm.adapters.auth.keys"): "cryptography and PyJWT: `vnfm auth rotate-key` only",
    ("commands.auth", "cryptography.fernet"): "cryptography: `vnfm auth new-secret-key` only",
    ("commands.server", "vnfm.config"): "the server's settings: only `vnfm server` needs them",
    ("commands.server", "vnfm.entrypoints.api.server"): "FastAPI, SQLAlchemy, the engine: `vnfm server` only",
    ("commands.healthcheck", "vnfm.config"): "the server's settings (pydantic-settings): `vnfm healthcheck` only",
    ("commands.dev", "vnfm.entrypoints.cli"): "every driver's schema: `vnfm dev params-doc` only",
    ("demo.run", "vnfm.config"): "the in-process server's settings: `vnfm demo` only",
    ("demo.run", "vnfm.entrypoints.api.server"): "the in-process server: `vnfm demo` only",
    ("demo.run", "vnfm.entrypoints.cli.demo.openstack"): "the OpenStack adapter: `vnfm demo --vim openstack` only",
}


def sources() -> dict[str, str]:
    """Module name relative to the CLI package ('' for its __init__) -> source text."""
    out: dict[str, str] = {}
    for path in sorted(CLI.rglob("*.py")):
        rel = path.relative_to(CLI).with_suffix("")
        out[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = path.read_text(encoding="utf-8")
    return out


def modules() -> dict[str, ast.Module]:
    return {name: ast.parse(text, name) for name, text in sources().items()}


def imports(node: ast.AST) -> list[str]:
    found: list[str] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Import):
            found += [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            found.append(n.module)
    return found


def test_no_module_over_500_lines_no_function_over_80() -> None:
    for name, text in sources().items():
        lines = len(text.splitlines())
        assert lines <= 500, f"{PACKAGE}.{name}: {lines} lines"
        for n in ast.walk(ast.parse(text)):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (n.end_lineno or n.lineno) - n.lineno + 1
                assert length <= 80, f"{name}.{n.name}: {length} lines"


def test_function_level_imports_are_the_listed_ones() -> None:
    lazy: set[tuple[str, str]] = set()
    for name, tree in modules().items():
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                lazy |= {(name, m) for m in imports(n)}
    assert lazy == set(LAZY_IMPORTS), f"not listed: {lazy - set(LAZY_IMPORTS)}, gone: {set(LAZY_IMPORTS) - lazy}"


def test_no_import_cycle_inside_the_cli() -> None:
    """Module-level and function-level imports alike: a lazy import must not hide a cycle."""
    mods = modules()
    graph = {
        name: {m.removeprefix(PACKAGE + ".") for m in imports(tree) if m.startswith(PACKAGE + ".")}
        for name, tree in mods.items()
    }
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        assert name not in path, "import cycle: " + " -> ".join([*path, name])
        if name in done:
            return
        for dep in sorted(graph.get(name, ())):
            visit(dep, [*path, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
