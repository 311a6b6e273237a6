"""Lint and types are part of the test suite: a ruff or mypy finding fails the run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    found = str(exe) if exe.exists() else shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (pip install -e .[test])")
    return found


def test_ruff() -> None:
    res = subprocess.run([_tool("ruff"), "check", "src", "tests", "bench"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_mypy() -> None:
    res = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_no_merge_conflict_markers() -> None:
    """A conflict left by a merge in a file git tracks (the README once kept one)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False).stdout
    if not files:
        pytest.skip("not a git checkout")
    found = []
    for name in files.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        found += [f"{name}:{n}" for n, line in enumerate(lines, 1)
                  if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "<<<<<<<"]
    assert not found, f"merge conflict markers: {found}"
