"""A package's files on disk: extracting a checked CSAR, reading an extracted package, and building
a deterministic CSAR from a source tree (the example packages, tests)."""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from vnfm.domain.errors import NotFound, UnprocessableEntity
from vnfm.packaging.csar_meta import rehash_tosca_meta
from vnfm.packaging.csar_names import TOSCA_META, check_entry_name, normalize_package_path

if TYPE_CHECKING:
    from vnfm.packaging.csar import Csar

_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def _open_flags() -> int:
    return os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def extract_to(csar: Csar, dest: Path) -> None:
    """Write the package files under `dest` (created if needed). Only regular files, never outside."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    for name in sorted(csar.files):
        rel = check_entry_name(name)
        parts = rel.split("/")
        parent = root
        for part in parts[:-1]:
            parent = parent / part
            if parent.is_symlink():
                raise UnprocessableEntity(f"cannot extract {name!r}: {parent} is a symbolic link")
            if not parent.exists():
                parent.mkdir()
            elif not parent.is_dir():
                raise UnprocessableEntity(f"cannot extract {name!r}: {parent} is not a directory")
        target = parent / parts[-1]
        if not target.resolve().is_relative_to(root):
            raise UnprocessableEntity(f"cannot extract {name!r}: it would land outside {root}")
        try:
            fd = os.open(target, _open_flags(), 0o644)
        except FileExistsError:
            raise UnprocessableEntity(f"cannot extract {name!r}: {target} already exists") from None
        with os.fdopen(fd, "wb") as fh:
            fh.write(csar.files[name])


# Marker file the package service writes next to an extracted package; not a package file.
_MARKERS = frozenset({".complete"})


class ExtractedPackage:
    """Read-only view of an extracted package (implements vnfm.service.ports.PackageFiles)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()

    def _path(self, path: str) -> Path:
        rel = normalize_package_path(path, "package path")
        target = self.root.joinpath(*rel.split("/"))
        # Refuse symlinks anywhere under the root, and anything resolving outside it.
        probe = target
        while probe != self.root:
            if probe.is_symlink():
                raise UnprocessableEntity(f"package path {path!r} goes through a symbolic link")
            probe = probe.parent
        if not target.resolve().is_relative_to(self.root):
            raise UnprocessableEntity(f"package path {path!r} escapes the package")
        return target

    def read(self, path: str) -> bytes:
        target = self._path(path)
        if not target.is_file():
            raise NotFound(f"file {path!r} does not exist in the VNF package")
        return target.read_bytes()

    def exists(self, path: str) -> bool:
        return self._path(path).is_file()

    def listing(self) -> list[str]:
        out: list[str] = []
        for dirpath, _dirnames, filenames in os.walk(self.root):
            for fn in filenames:
                full = Path(dirpath) / fn
                if full.is_symlink() or not full.is_file():
                    continue
                rel = full.relative_to(self.root).as_posix()
                if rel not in _MARKERS:
                    out.append(rel)
        return sorted(out)


def _source_files(src_dir: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(src_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in filenames:
            full = Path(dirpath) / fn
            if fn.endswith((".pyc", ".pyo")):
                continue
            rel = full.relative_to(src_dir).as_posix()
            if full.is_symlink() or not full.is_file():
                raise UnprocessableEntity(f"package source {rel!r} is not a regular file")
            files[check_entry_name(rel, "package source")] = full.read_bytes()
    return files


def build_csar(src_dir: Path) -> bytes:
    """A deterministic CSAR of a package source tree, TOSCA.meta hashes refreshed."""
    src_dir = Path(src_dir)
    files = _source_files(src_dir)
    if TOSCA_META in files:
        files[TOSCA_META] = rehash_tosca_meta(files[TOSCA_META].decode("utf-8"), files).encode("utf-8")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            zf.writestr(info, files[name])
    return buf.getvalue()
