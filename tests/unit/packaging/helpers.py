"""Helpers to craft (hostile) packages for the packaging tests."""

from __future__ import annotations

import io
import stat
import struct
import warnings
import zipfile
from functools import cache

from vnfm.domain.vnfd import Vnfd
from vnfm.examples import example_csar
from vnfm.packaging.csar import read_csar
from vnfm.packaging.tosca import parse_vnfd

SIMPLE_DF = "Definitions/sample_kubernetes_df_simple.yaml"
TOP = "Definitions/sample_kubernetes_top.vnfd.yaml"


@cache
def _example_bytes() -> bytes:
    return example_csar()


def example_files() -> dict[str, bytes]:
    """The example package's files (a fresh, mutable copy)."""
    return dict(read_csar(_example_bytes()).files)


def parse_files(files: dict[str, bytes]) -> Vnfd:
    """The VNFD of a package made of `files`."""
    return parse_vnfd(read_csar(zip_files(files)))


def zip_files(files: dict[str, bytes], *, mode: int = 0o644) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names on purpose
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, content in files.items():
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = (stat.S_IFREG | mode) << 16
                zf.writestr(info, content)
    return buf.getvalue()


def add_entry(data: bytes, info: zipfile.ZipInfo, content: bytes) -> bytes:
    buf = io.BytesIO(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(buf, "a") as zf:
            zf.writestr(info, content)
    return buf.getvalue()


def edit(files: dict[str, bytes], name: str, old: str, new: str) -> dict[str, bytes]:
    text = files[name].decode()
    assert old in text, f"{old!r} not in {name}"
    files[name] = text.replace(old, new, 1).encode()
    return files


def forge_sizes(data: bytes, name: str, file_size: int) -> bytes:
    """Rewrite the uncompressed size of entry `name` in both its local and central headers."""
    raw = bytearray(data)
    encoded = name.encode()
    patched = 0
    pos = 0
    while True:
        pos = raw.find(b"PK\x03\x04", pos)
        if pos < 0:
            break
        n = struct.unpack("<H", raw[pos + 26 : pos + 28])[0]
        if bytes(raw[pos + 30 : pos + 30 + n]) == encoded:
            raw[pos + 22 : pos + 26] = struct.pack("<I", file_size)
            patched += 1
        pos += 4
    pos = 0
    while True:
        pos = raw.find(b"PK\x01\x02", pos)
        if pos < 0:
            break
        n = struct.unpack("<H", raw[pos + 28 : pos + 30])[0]
        if bytes(raw[pos + 46 : pos + 46 + n]) == encoded:
            raw[pos + 24 : pos + 28] = struct.pack("<I", file_size)
            patched += 1
        pos += 4
    assert patched == 2
    return bytes(raw)


def set_encrypted(data: bytes, name: str) -> bytes:
    """Set the 'encrypted' general-purpose flag of entry `name` (local and central headers)."""
    raw = bytearray(data)
    encoded = name.encode()
    patched = 0
    for sig, flag_at, len_at, name_at in ((b"PK\x03\x04", 6, 26, 30), (b"PK\x01\x02", 8, 28, 46)):
        pos = 0
        while (pos := raw.find(sig, pos)) >= 0:
            n = struct.unpack("<H", raw[pos + len_at : pos + len_at + 2])[0]
            if bytes(raw[pos + name_at : pos + name_at + n]) == encoded:
                raw[pos + flag_at] |= 0x1
                patched += 1
            pos += 4
    assert patched == 2
    return bytes(raw)
