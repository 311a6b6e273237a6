"""TOSCA-Metadata/TOSCA.meta (SOL004 4.3.2 / 5.2): the header block and the artifact blocks.

An artifact block starts at a `Source:` (or the older `Name:`) line. When it carries `Algorithm:`
and `Hash:`, the file must match; a block without both is accepted as Tacker accepts it (its
images are often listed with only Name and Content-Type) and reported without a checksum. A
block with only one of the two, an unknown algorithm or a wrong hash is refused.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from vnfm.domain.errors import UnprocessableEntity
from vnfm.packaging.csar_names import TOSCA_META, normalize_package_path

# Algorithm names as written in TOSCA.meta / manifests, normalised (upper case, no '-' or '_').
_HASHES: dict[str, tuple[str, str]] = {
    "SHA256": ("SHA-256", "sha256"),
    "SHA384": ("SHA-384", "sha384"),
    "SHA512": ("SHA-512", "sha512"),
}
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True)
class CsarArtifact:
    """One artifact block of TOSCA.meta (SOL004 `Source:`/`Name:` + `Algorithm:` + `Hash:`).

    `algorithm` and `hash` are empty when the block declares no checksum (nothing to verify)."""

    path: str
    algorithm: str  # canonical: SHA-256 / SHA-384 / SHA-512, or "" (no checksum declared)
    hash: str  # lower-case hex, or ""
    content_type: str = ""

    @property
    def has_checksum(self) -> bool:
        return bool(self.algorithm and self.hash)


def algo_key(algorithm: str) -> str:
    return algorithm.strip().upper().replace("-", "").replace("_", "")


def meta_get(meta: dict[str, str], key: str) -> str:
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


def _artifact(block: dict[str, tuple[int, str]], seen: set[str]) -> CsarArtifact:
    no, path = block["path"]
    if _URI.match(path):
        raise UnprocessableEntity(
            f"{TOSCA_META} line {no}: artifact {path!r} is outside the package; only artifacts "
            "inside the package are supported"
        )
    path = normalize_package_path(path, f"{TOSCA_META} line {no}: artifact")
    if path in seen:
        raise UnprocessableEntity(f"{TOSCA_META} line {no}: artifact {path!r} is listed twice")
    seen.add(path)
    content_type = block.get("content-type", (no, ""))[1]
    has_algo, has_hash = "algorithm" in block, "hash" in block
    if not has_algo and not has_hash:
        return CsarArtifact(path=path, algorithm="", hash="", content_type=content_type)
    algo = block.get("algorithm", (no, ""))[1]
    digest = block.get("hash", (no, ""))[1]
    if not algo or not digest:
        missing = "Algorithm" if not algo else "Hash"
        raise UnprocessableEntity(
            f"{TOSCA_META}: artifact {path!r} has no {missing} (give both Algorithm and Hash, or neither)"
        )
    key = algo_key(algo)
    if key not in _HASHES:
        raise UnprocessableEntity(
            f"{TOSCA_META}: artifact {path!r} uses unsupported hash algorithm {algo!r} "
            "(SHA-256, SHA-384 or SHA-512)"
        )
    if not re.fullmatch(r"[0-9A-Fa-f]+", digest):
        raise UnprocessableEntity(f"{TOSCA_META}: artifact {path!r} has a Hash that is not hexadecimal")
    return CsarArtifact(path=path, algorithm=_HASHES[key][0], hash=digest.lower(), content_type=content_type)


def parse_tosca_meta(raw: bytes) -> tuple[dict[str, str], list[CsarArtifact]]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnprocessableEntity(f"{TOSCA_META} is not UTF-8 text") from None
    header, blocks = _meta_blocks(text)
    seen: set[str] = set()
    return header, [_artifact(block, seen) for block in blocks]


def digest(algorithm: str, data: bytes) -> str:
    """The hex digest of `data` with a canonical or written algorithm name (SHA-256 ...)."""
    return hashlib.new(_HASHES[algo_key(algorithm)][1], data).hexdigest()


def verify_artifacts(artifacts: list[CsarArtifact], files: dict[str, bytes]) -> None:
    """Every listed artifact is in the package; those with a checksum match it."""
    for art in artifacts:
        if art.path not in files:
            raise UnprocessableEntity(
                f"{TOSCA_META} lists artifact {art.path!r}, which is not in the package"
            )
        if not art.has_checksum:
            continue
        actual = digest(art.algorithm, files[art.path])
        if actual != art.hash:
            raise UnprocessableEntity(
                f"hash mismatch for {art.path!r}: {TOSCA_META} says {art.algorithm} {art.hash}, "
                f"the file has {actual}"
            )


def rehash_tosca_meta(text: str, files: dict[str, bytes]) -> str:
    """TOSCA.meta with every artifact's `Hash:` recomputed from `files` (with its Algorithm)."""
    _header, blocks = _meta_blocks(text)
    fixes: dict[int, str] = {}
    for block in blocks:
        path = normalize_package_path(block["path"][1], f"{TOSCA_META} artifact")
        if "hash" not in block or "algorithm" not in block or path not in files:
            continue
        if algo_key(block["algorithm"][1]) not in _HASHES:
            continue
        fixes[block["hash"][0]] = digest(block["algorithm"][1], files[path])
    lines = text.splitlines(keepends=True)
    for no, value in fixes.items():
        line = lines[no - 1]
        ending = line[len(line.rstrip("\r\n")) :]
        key = line.partition(":")[0]
        lines[no - 1] = f"{key}: {value}{ending}"
    return "".join(lines)
