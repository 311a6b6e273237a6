"""The VNFM's copies of cluster snapshots (service.ports.SnapshotStore): files under
`<data dir>/etcd-snapshots/<instance id>/<name>`, mode 0600, written atomically; at most `keep`
per instance (the oldest removed) and each at most `max_bytes`. `SnapshotStores`: several stores read
as one (a restore's sources)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from vnfm.domain.errors import OperationFailed

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class FileSnapshotStore:
    def __init__(self, root: Path, *, keep: int = 3, max_bytes: int = 2 * 1024**3) -> None:
        self.root = root
        self.keep = keep
        self.max_bytes = max_bytes

    def _dir(self, instance_id: str, name: str) -> Path:
        for what, v in (("instance id", instance_id), ("snapshot name", name)):
            if not _NAME.match(v):
                raise ValueError(f"{what} {v!r} is not a plain file name")
        return self.root / instance_id

    def put(self, instance_id: str, name: str, data: bytes) -> str:
        d = self._dir(instance_id, name)
        if len(data) > self.max_bytes:
            raise OperationFailed(f"the snapshot is {len(data)} bytes, more than the {self.max_bytes} the VNFM keeps")
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = d / f".{name}.part"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, d / name)
        kept = sorted((p for p in d.iterdir() if not p.name.startswith(".")), key=lambda p: p.stat().st_mtime)
        for old in kept[:-self.keep]:
            old.unlink(missing_ok=True)
        return str(d / name)

    def get(self, instance_id: str, name: str) -> bytes | None:
        p = self._dir(instance_id, name) / name
        return p.read_bytes() if p.is_file() else None

    def list(self, instance_id: str) -> list[dict[str, Any]]:
        """The instance's snapshots, oldest first: name, size, at (modification time), as the S3
        store lists its objects (adapters/snapshots_s3.py)."""
        d = self.root / instance_id
        if not _NAME.match(instance_id) or not d.is_dir():
            return []
        out = [{"name": p.name, "size": p.stat().st_size, "at": p.stat().st_mtime}
               for p in d.iterdir() if not p.name.startswith(".") and p.is_file()]
        return sorted(out, key=lambda o: (o["at"], o["name"]))


class SnapshotStores:
    """The stores a restore may read from, as one SnapshotStore: `primary` (the upgrades' and heals'
    snapshots) takes what is put; `get` and `list` also look in `readable` (the scheduled backups'
    store: a directory or S3), so a heal finds the newest snapshot wherever the VNFM keeps it."""

    def __init__(self, primary: Any, *readable: Any) -> None:
        self.primary = primary
        self.readable = readable

    def put(self, instance_id: str, name: str, data: bytes) -> str:
        return str(self.primary.put(instance_id, name, data))

    def get(self, instance_id: str, name: str) -> bytes | None:
        for store in (self.primary, *self.readable):
            data = store.get(instance_id, name)
            if data is not None:
                return bytes(data)
        return None

    def list(self, instance_id: str) -> list[dict[str, Any]]:
        """Every store's snapshots of the instance, oldest first (a name in two stores: the first's)."""
        seen: dict[str, dict[str, Any]] = {}
        for store in (self.primary, *self.readable):
            for o in store.list(instance_id):
                seen.setdefault(str(o["name"]), dict(o))
        return sorted(seen.values(), key=lambda o: (o["at"], o["name"]))
