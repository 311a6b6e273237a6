"""The private registry's container image for integration tests, built here without a container
engine: one layer with Debian's `docker-registry` binary (distribution 2.8), the shared libraries
it needs and a configuration like the `registry` image's (data in /var/lib/registry, port 5000,
overridable with REGISTRY_* variables), written as an OCI image archive (`oci-archive`) that
`docker load` / `podman load` accept. This stands in for `docker save registry:latest`: the
registry code is the same program."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import tarfile
from pathlib import Path

BINARY = "/usr/bin/docker-registry"
CONFIG = """version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: /var/lib/registry
  delete:
    enabled: true
http:
  addr: :5000
"""
REF = "registry:latest"


def _libraries(binary: str) -> list[str]:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        parts = line.split()
        path = next((p for p in parts if p.startswith("/")), None)
        if path:
            libs.append(path)
    return libs


def _add(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name.lstrip("/"))
    info.size, info.mode, info.mtime = len(data), mode, 0
    tar.addfile(info, io.BytesIO(data))


def _dir(tar: tarfile.TarFile, name: str) -> None:
    info = tarfile.TarInfo(name.lstrip("/"))
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
    tar.addfile(info)


def _layer() -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        seen: set[str] = set()
        for path in [BINARY, *_libraries(BINARY)]:
            real = Path(path).resolve()
            for parent in reversed(Path(path).parents[:-1]):
                if str(parent) not in seen:
                    seen.add(str(parent))
                    _dir(tar, str(parent))
            _add(tar, path, real.read_bytes(), 0o755)
        for d in ("/etc", "/etc/docker", "/etc/docker/registry", "/var", "/var/lib", "/var/lib/registry", "/tmp"):
            if d not in seen:
                seen.add(d)
                _dir(tar, d)
        _add(tar, "/etc/docker/registry/config.yml", CONFIG.encode())
    return raw.getvalue()


def build_registry_archive(dest: Path) -> Path:
    """Write the OCI archive to `dest` (a .tar), tagged registry:latest."""
    blobs: dict[str, bytes] = {}

    def blob(data: bytes) -> tuple[str, int]:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return digest, len(data)

    layer = _layer()
    layer_digest, layer_size = blob(gzip.compress(layer, mtime=0))
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Entrypoint": [BINARY], "Cmd": ["serve", "/etc/docker/registry/config.yml"],
                   "ExposedPorts": {"5000/tcp": {}}, "Volumes": {"/var/lib/registry": {}}},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]},
    }
    cfg_digest, cfg_size = blob(json.dumps(config).encode())
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfg_digest, "size": cfg_size},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest,
                    "size": layer_size}],
    }
    m_digest, m_size = blob(json.dumps(manifest).encode())
    index = {"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": m_digest, "size": m_size,
        "annotations": {"org.opencontainers.image.ref.name": REF}}]}
    with tarfile.open(dest, "w") as tar:
        _add(tar, "oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode())
        _add(tar, "index.json", json.dumps(index).encode())
        _dir(tar, "blobs")
        _dir(tar, "blobs/sha256")
        for digest, data in blobs.items():
            _add(tar, f"blobs/sha256/{digest.split(':', 1)[1]}", data)
    return dest
