"""The SOL005 package summary (VnfPkgInfo): checksum, software images, additional artifacts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import Vnfd
from vnfm.packaging.csar import Csar
from vnfm.packaging.tosca.values import size_bytes
from vnfm.packaging.tosca.vnfd import parse


def _checksum(v: Any, where: str) -> dict[str, str]:
    if isinstance(v, dict):
        return {"algorithm": str(v.get("algorithm") or ""), "hash": str(v.get("hash") or "")}
    if isinstance(v, str):
        return {"algorithm": "", "hash": v}
    raise UnprocessableEntity(f"{where}: sw_image_data has no checksum")


def package_summary(csar: Csar, vnfd: Vnfd) -> dict[str, Any]:
    """What SOL005 VnfPkgInfo needs: checksum, softwareImages, additionalArtifacts."""
    parsed = parse(csar)
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    images: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    image_paths: set[str] = set()
    for fid in vnfd.flavours:
        for node, (img, path) in parsed.images.get(fid, {}).items():
            where = f"flavour {fid!r} node {node!r}"
            info: dict[str, Any] = {
                "id": node,
                "name": str(img.get("name") or ""),
                "provider": str(img.get("provider") or ""),
                "version": str(img.get("version") or ""),
                "checksum": _checksum(img.get("checksum"), where),
                "containerFormat": str(img.get("container_format") or "").upper(),
                "diskFormat": str(img.get("disk_format") or "").upper(),
                "createdAt": created,
                "minDisk": int(size_bytes(img["min_disk"], f"{where} min_disk") // 1024**3)
                if img.get("min_disk") is not None
                else 0,
                "minRam": int(size_bytes(img["min_ram"], f"{where} min_ram") // 1024**2)
                if img.get("min_ram") is not None
                else 0,
                "size": int(size_bytes(img["size"], f"{where} size", si=True))
                if img.get("size") is not None
                else 0,
                "userMetadata": {},
                "imagePath": path,
            }
            if path:
                image_paths.add(path)
            previous = by_id.get(node)
            if previous is not None:
                if {k: v for k, v in previous.items() if k != "id"} == {
                    k: v for k, v in info.items() if k != "id"
                }:
                    continue
                info["id"] = f"{node}-{fid}"
            by_id[info["id"]] = info
            images.append(info)
    artifacts = [
        {"artifactPath": a.path, "checksum": {"algorithm": a.algorithm, "hash": a.hash}, "metadata": {}}
        for a in csar.artifacts
        if a.path not in image_paths
    ]
    return {"checksum": dict(csar.checksum), "softwareImages": images, "additionalArtifacts": artifacts}
