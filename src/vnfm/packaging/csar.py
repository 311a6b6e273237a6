"""Reading VNF packages (ETSI SOL004 CSAR zip files) safely.

A package comes from a client we do not trust. Everything here assumes the archive is hostile:

* entry names are checked before anything else (no absolute paths, `..`, backslashes, drive
  letters, control characters, duplicates or file/directory clashes);
* symbolic links, devices and encrypted entries are refused;
* entries are decompressed by us, from the archive bytes, in bounded steps: the size written in
  the zip headers is never trusted, the output is cut at a hard cap (per entry, for the whole
  package and relative to the compressed size) and must then match the header's size and CRC;
* only the STORED and DEFLATED methods are accepted (bzip2/lzma cannot be decompressed in
  bounded steps with the standard library).

Nothing from a package is ever imported or executed.
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import re
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from vnfm.domain.errors import NotFound, PayloadTooLarge, UnprocessableEntity

TOSCA_META = "TOSCA-Metadata/TOSCA.meta"

MiB = 1024 * 1024

# Algorithm names as written in TOSCA.meta / manifests, normalised (upper case, no '-' or '_').
_HASHES: dict[str, tuple[str, str]] = {
    "SHA256": ("SHA-256", "sha256"),
    "SHA384": ("SHA-384", "sha384"),
    "SHA512": ("SHA-512", "sha512"),
}

_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class CsarLimits:
    max_archive_bytes: int = 128 * MiB  # the zip itself
    max_entries: int = 2000
    max_total_bytes: int = 256 * MiB  # all entries, decompressed
    max_entry_bytes: int = 128 * MiB  # one entry, decompressed
    max_ratio: int = 100  # decompressed / compressed, per entry ...
    ratio_grace_bytes: int = 1 * MiB  # ... once the entry is bigger than this
    max_name_length: int = 1024


@dataclass(frozen=True)
class CsarArtifact:
    """One artifact block of TOSCA.meta (SOL004 `Source:`/`Name:` + `Algorithm:` + `Hash:`)."""

    path: str
    algorithm: str  # canonical: SHA-256 / SHA-384 / SHA-512
    hash: str  # lower-case hex
    content_type: str = ""


@dataclass
class Csar:
    files: dict[str, bytes]
    meta: dict[str, str]  # the first block of TOSCA.meta, keys as written
    entry_definitions: str
    artifacts: list[CsarArtifact] = field(default_factory=list)
    checksum: dict[str, str] = field(default_factory=dict)  # {"algorithm": "SHA-512", "hash": ...}


# ============================================================================ names
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


# ============================================================================ reading
def read_csar(data: bytes, limits: CsarLimits | None = None) -> Csar:
    limits = limits or CsarLimits()
    if len(data) > limits.max_archive_bytes:
        raise PayloadTooLarge(
            f"package is {len(data)} bytes, over the limit of {limits.max_archive_bytes} bytes"
        )
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise UnprocessableEntity(f"package is not a valid zip file: {exc}") from None
    if len(infos) > limits.max_entries:
        raise PayloadTooLarge(f"package has {len(infos)} entries, over the limit of {limits.max_entries}")

    _check_no_overlap(data, infos)
    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    seen: dict[str, str] = {}
    total = 0
    for info in infos:
        name = check_entry_name(info.filename, max_length=limits.max_name_length)
        folded = name.casefold()
        if folded in seen:
            raise UnprocessableEntity(f"package entry {info.filename!r} is a duplicate of {seen[folded]!r}")
        seen[folded] = info.filename
        _check_entry_type(info)
        if info.is_dir():
            dirs.add(name)
            continue
        content = _read_entry(data, info, limits, limits.max_total_bytes - total)
        total += len(content)
        files[name] = content

    # A file may not also be a directory (it could not be extracted).
    parents = {posixpath.dirname(n) for n in files} | {posixpath.dirname(d) for d in dirs}
    prefixes: set[str] = set()
    for p in parents:
        while p:
            prefixes.add(p)
            p = posixpath.dirname(p)
    for clash in sorted(prefixes & set(files)):
        raise UnprocessableEntity(f"package entry {clash!r} is both a file and a directory")

    if TOSCA_META not in files:
        raise UnprocessableEntity(f"package has no {TOSCA_META}")
    meta, artifacts = parse_tosca_meta(files[TOSCA_META])
    entry = _meta_get(meta, "Entry-Definitions")
    if not entry:
        raise UnprocessableEntity(f"{TOSCA_META} has no Entry-Definitions")
    entry = normalize_package_path(entry, f"{TOSCA_META} Entry-Definitions")
    if entry not in files:
        raise UnprocessableEntity(
            f"{TOSCA_META} Entry-Definitions names {entry!r}, which is not in the package"
        )
    for art in artifacts:
        if art.path not in files:
            raise UnprocessableEntity(
                f"{TOSCA_META} lists artifact {art.path!r}, which is not in the package"
            )
        actual = hashlib.new(_HASHES[_algo_key(art.algorithm)][1], files[art.path]).hexdigest()
        if actual != art.hash:
            raise UnprocessableEntity(
                f"hash mismatch for {art.path!r}: {TOSCA_META} says {art.algorithm} {art.hash}, "
                f"the file has {actual}"
            )
    return Csar(
        files=files,
        meta=meta,
        entry_definitions=entry,
        artifacts=artifacts,
        checksum={"algorithm": "SHA-512", "hash": hashlib.sha512(data).hexdigest()},
    )


def _check_no_overlap(archive: bytes, infos: list[zipfile.ZipInfo]) -> None:
    """Entries must not share compressed data (overlapping entries make non-recursive zip bombs)."""
    end = 0
    previous = ""
    for info in sorted(infos, key=lambda i: i.header_offset):
        if info.header_offset < end:
            raise UnprocessableEntity(
                f"package entry {info.filename!r} overlaps entry {previous!r} (forged zip: likely zip bomb)"
            )
        header = archive[info.header_offset : info.header_offset + 30]
        if len(header) < 30:
            raise UnprocessableEntity(f"package entry {info.filename!r} is truncated (corrupt zip)")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        end = info.header_offset + 30 + name_len + extra_len + info.compress_size
        previous = info.filename


def _check_entry_type(info: zipfile.ZipInfo) -> None:
    name = info.filename
    if info.flag_bits & 0x1:
        raise UnprocessableEntity(f"package entry {name!r} is encrypted")
    mode = info.external_attr >> 16
    ftype = stat.S_IFMT(mode)
    if ftype == stat.S_IFLNK:
        raise UnprocessableEntity(f"package entry {name!r} is a symbolic link")
    if ftype not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise UnprocessableEntity(f"package entry {name!r} is not a regular file (mode {oct(mode)})")
    if ftype == stat.S_IFDIR and not info.is_dir():
        raise UnprocessableEntity(f"package entry {name!r} is marked as a directory but has no trailing '/'")
    if info.is_dir() and info.file_size:
        raise UnprocessableEntity(f"package entry {name!r} is a directory with content")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise UnprocessableEntity(
            f"package entry {name!r} uses compression method {info.compress_type}; only stored and "
            "deflated entries are accepted"
        )


def _read_entry(archive: bytes, info: zipfile.ZipInfo, limits: CsarLimits, budget: int) -> bytes:
    """Decompress one entry from the raw archive with hard caps, then check size and CRC."""
    name = info.filename
    if info.file_size > limits.max_entry_bytes:
        raise PayloadTooLarge(
            f"package entry {name!r} declares {info.file_size} bytes, over the per-entry limit of "
            f"{limits.max_entry_bytes}"
        )
    if info.file_size > budget:
        raise PayloadTooLarge(
            f"package content is over the limit of {limits.max_total_bytes} bytes decompressed "
            f"(at entry {name!r})"
        )
    off = info.header_offset
    header = archive[off : off + 30]
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise UnprocessableEntity(f"package entry {name!r}: bad local header (corrupt zip)")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    local_name = archive[off + 30 : off + 30 + name_len]
    if local_name not in (info.orig_filename.encode("utf-8"), info.orig_filename.encode("cp437", "replace")):
        raise UnprocessableEntity(
            f"package entry {name!r}: its local header names {local_name[:100]!r} (corrupt or forged zip)"
        )
    start = off + 30 + name_len + extra_len
    raw = archive[start : start + info.compress_size]
    if len(raw) < info.compress_size:
        raise UnprocessableEntity(f"package entry {name!r} is truncated (corrupt zip)")

    cap = min(limits.max_entry_bytes, budget)
    ratio_cap = max(limits.ratio_grace_bytes, limits.max_ratio * max(len(raw), 1))
    out = bytearray()

    def grow(chunk: bytes) -> None:
        out.extend(chunk)
        if len(out) > info.file_size:
            raise UnprocessableEntity(
                f"package entry {name!r} holds more data than the {info.file_size} bytes its header "
                "declares (forged header: likely zip bomb)"
            )
        if len(out) > ratio_cap:
            raise UnprocessableEntity(
                f"package entry {name!r} expands more than {limits.max_ratio} times its compressed "
                f"size ({len(raw)} bytes): refusing a likely zip bomb"
            )
        if len(out) > cap:
            if cap == budget:
                raise PayloadTooLarge(
                    f"package content is over the limit of {limits.max_total_bytes} bytes decompressed "
                    f"(at entry {name!r})"
                )
            raise PayloadTooLarge(
                f"package entry {name!r} is over the per-entry limit of {limits.max_entry_bytes} bytes"
            )

    if info.compress_type == zipfile.ZIP_STORED:
        grow(raw)
    else:
        d = zlib.decompressobj(-15)
        pending = raw
        try:
            while True:
                chunk = d.decompress(pending, _CHUNK)
                grow(chunk)
                pending = d.unconsumed_tail
                if d.eof or (not pending and not chunk):
                    break
            if not d.eof:
                grow(d.flush())
        except zlib.error as exc:
            raise UnprocessableEntity(f"package entry {name!r} has corrupt compressed data: {exc}") from None
        if not d.eof:
            raise UnprocessableEntity(f"package entry {name!r} has a truncated compressed stream")
    if len(out) != info.file_size:
        raise UnprocessableEntity(
            f"package entry {name!r} decompresses to {len(out)} bytes but its header says "
            f"{info.file_size} (forged or corrupt zip)"
        )
    if zlib.crc32(out) & 0xFFFFFFFF != info.CRC:
        raise UnprocessableEntity(f"package entry {name!r} fails its CRC-32 check (corrupt zip)")
    return bytes(out)


# ============================================================================ TOSCA.meta
def _algo_key(algorithm: str) -> str:
    return algorithm.strip().upper().replace("-", "").replace("_", "")


def _meta_get(meta: dict[str, str], key: str) -> str:
    for k, v in meta.items():
        if k.lower() == key.lower():
            return v
    return ""


def _meta_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, key, value) of every `Key: value` line; blank lines give ('', '')."""
    out: list[tuple[int, str, str]] = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            out.append((no, "", ""))
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            raise UnprocessableEntity(f"{TOSCA_META} line {no}: expected 'Key: value', got {line[:80]!r}")
        out.append((no, key.strip(), value.strip()))
    return out


def _meta_blocks(text: str) -> tuple[dict[str, str], list[dict[str, tuple[int, str]]]]:
    """The header block and the artifact blocks (each starts at a `Name:` or `Source:` line)."""
    header: dict[str, str] = {}
    blocks: list[dict[str, tuple[int, str]]] = []
    current: dict[str, tuple[int, str]] | None = None
    for no, key, value in _meta_lines(text):
        if not key:
            continue
        lk = key.lower()
        if lk in ("name", "source"):
            current = {"path": (no, value)}
            blocks.append(current)
            continue
        if current is None:
            if key in header:
                raise UnprocessableEntity(f"{TOSCA_META} line {no}: duplicate key {key!r}")
            header[key] = value
        else:
            if lk in current:
                raise UnprocessableEntity(
                    f"{TOSCA_META} line {no}: duplicate key {key!r} in one artifact block"
                )
            current[lk] = (no, value)
    return header, blocks


def parse_tosca_meta(raw: bytes) -> tuple[dict[str, str], list[CsarArtifact]]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnprocessableEntity(f"{TOSCA_META} is not UTF-8 text") from None
    header, blocks = _meta_blocks(text)
    artifacts: list[CsarArtifact] = []
    seen: set[str] = set()
    for block in blocks:
        no, path = block["path"]
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path):
            raise UnprocessableEntity(
                f"{TOSCA_META} line {no}: artifact {path!r} is outside the package; only artifacts "
                "inside the package are supported"
            )
        path = normalize_package_path(path, f"{TOSCA_META} line {no}: artifact")
        if path in seen:
            raise UnprocessableEntity(f"{TOSCA_META} line {no}: artifact {path!r} is listed twice")
        seen.add(path)
        algo = block.get("algorithm", (no, ""))[1]
        digest = block.get("hash", (no, ""))[1]
        if not algo or not digest:
            missing = "Algorithm" if not algo else "Hash"
            raise UnprocessableEntity(f"{TOSCA_META}: artifact {path!r} has no {missing}")
        key = _algo_key(algo)
        if key not in _HASHES:
            raise UnprocessableEntity(
                f"{TOSCA_META}: artifact {path!r} uses unsupported hash algorithm {algo!r} "
                "(SHA-256, SHA-384 or SHA-512)"
            )
        canonical, _ = _HASHES[key]
        artifacts.append(
            CsarArtifact(
                path=path,
                algorithm=canonical,
                hash=digest.lower(),
                content_type=block.get("content-type", (no, ""))[1],
            )
        )
    return header, artifacts


# ============================================================================ extraction
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


# ============================================================================ building
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


def rehash_tosca_meta(text: str, files: dict[str, bytes]) -> str:
    """TOSCA.meta with every artifact's `Hash:` recomputed from `files` (with its Algorithm)."""
    _header, blocks = _meta_blocks(text)
    fixes: dict[int, str] = {}
    for block in blocks:
        path = normalize_package_path(block["path"][1], f"{TOSCA_META} artifact")
        if "hash" not in block or "algorithm" not in block or path not in files:
            continue
        key = _algo_key(block["algorithm"][1])
        if key not in _HASHES:
            continue
        fixes[block["hash"][0]] = hashlib.new(_HASHES[key][1], files[path]).hexdigest()
    lines = text.splitlines(keepends=True)
    for no, digest in fixes.items():
        line = lines[no - 1]
        ending = line[len(line.rstrip("\r\n")) :]
        key = line.partition(":")[0]
        lines[no - 1] = f"{key}: {digest}{ending}"
    return "".join(lines)


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
