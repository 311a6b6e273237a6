"""Reading VNF packages (ETSI SOL004 CSAR zip files) safely.

A package comes from a client we do not trust. Everything here assumes the archive is hostile:

* entry names are checked before anything else (no absolute paths, `..`, backslashes, drive
  letters, control characters, duplicates or file/directory clashes);
* symbolic links, devices and encrypted entries are refused;
* entries are decompressed by us, from the archive bytes, in bounded steps: the size written in
  the zip headers is never trusted, the output is cut at a hard cap (per entry, for the whole
  package and relative to the compressed size) and must then match the header's size and CRC;
* TOSCA.meta artifacts that declare a checksum must match it (`csar_meta`);
* only the STORED and DEFLATED methods are accepted (bzip2/lzma cannot be decompressed in
  bounded steps with the standard library).

Nothing from a package is ever imported or executed.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass, field

from vnfm.domain.errors import PayloadTooLarge, UnprocessableEntity
from vnfm.packaging.csar_files import ExtractedPackage, build_csar, extract_to
from vnfm.packaging.csar_meta import CsarArtifact, meta_get, parse_tosca_meta, rehash_tosca_meta, verify_artifacts
from vnfm.packaging.csar_names import TOSCA_META, check_entry_name, normalize_package_path

__all__ = [
    "TOSCA_META", "Csar", "CsarArtifact", "CsarLimits", "ExtractedPackage", "build_csar", "check_entry_name",
    "extract_to", "normalize_package_path", "parse_tosca_meta", "read_csar", "rehash_tosca_meta",
]

MiB = 1024 * 1024
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


@dataclass
class Csar:
    files: dict[str, bytes]
    meta: dict[str, str]  # the first block of TOSCA.meta, keys as written
    entry_definitions: str
    artifacts: list[CsarArtifact] = field(default_factory=list)
    checksum: dict[str, str] = field(default_factory=dict)  # {"algorithm": "SHA-512", "hash": ...}


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
    entry = meta_get(meta, "Entry-Definitions")
    if not entry:
        raise UnprocessableEntity(f"{TOSCA_META} has no Entry-Definitions")
    entry = normalize_package_path(entry, f"{TOSCA_META} Entry-Definitions")
    if entry not in files:
        raise UnprocessableEntity(
            f"{TOSCA_META} Entry-Definitions names {entry!r}, which is not in the package"
        )
    verify_artifacts(artifacts, files)
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
