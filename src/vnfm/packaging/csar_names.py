"""Paths inside a VNF package: entry names and the paths a VNFD or a request gives, checked so
that none can escape the package (zip slip) or smuggle control characters."""

from __future__ import annotations

import posixpath
import re

from vnfm.domain.errors import UnprocessableEntity

TOSCA_META = "TOSCA-Metadata/TOSCA.meta"

_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_entry_name(name: str, where: str = "package entry", max_length: int = 1024) -> str:
    """Validate a relative package path; returns it without a trailing '/'. Raises naming it."""
    shown = repr(name[:200])
    if not name or name in ("/", "."):
        raise UnprocessableEntity(f"{where} {shown} has an empty name")
    if len(name) > max_length:
        raise UnprocessableEntity(f"{where} {shown} has a name longer than {max_length} characters")
    if _CONTROL.search(name):
        raise UnprocessableEntity(f"{where} {shown} contains control characters")
    if "\\" in name:
        raise UnprocessableEntity(f"{where} {shown} contains a backslash (zip slip)")
    if name.startswith("/"):
        raise UnprocessableEntity(f"{where} {shown} is an absolute path (zip slip)")
    if _DRIVE.match(name):
        raise UnprocessableEntity(f"{where} {shown} starts with a drive letter (zip slip)")
    trimmed = name[:-1] if name.endswith("/") else name
    parts = trimmed.split("/")
    if any(p == ".." for p in parts):
        raise UnprocessableEntity(f"{where} {shown} contains '..' (zip slip)")
    if any(p in ("", ".") for p in parts):
        raise UnprocessableEntity(f"{where} {shown} contains an empty or '.' path segment")
    return trimmed


def normalize_package_path(path: str, where: str = "path") -> str:
    """A path a VNFD or request gives (maybe './UserData/x.py'): normalised, never escaping."""
    p = path.strip()
    while p.startswith("./"):
        p = p[2:]
    if "\\" in p or p.startswith("/") or _DRIVE.match(p):
        raise UnprocessableEntity(f"{where} {path!r} is not a relative path inside the package")
    norm = posixpath.normpath(p) if p else ""
    if norm in ("", ".") or norm == ".." or norm.startswith("../"):
        raise UnprocessableEntity(f"{where} {path!r} escapes the package")
    return check_entry_name(norm, where)
