"""The VNFM's copies of cluster snapshots (service.ports.SnapshotStore): files under
`<data dir>/etcd-snapshots/<instance id>/<name>`, mode 0600, written atomically; at most `keep`
per instance (the oldest removed) and each at most `max_bytes`. `also`: other stores' roots read
(never written) by `get` and `held`, e.g. the scheduled backups' for a restore."""

from __future__ import annotations

import os
import re
from pathlib import Path

from vnfm.domain.errors import OperationFailed

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class FileSnapshotStore:
    def __init__(self, root: Path, *, keep: int = 3, max_bytes: int = 2 * 1024**3,
                 also: tuple[Path, ...] = ()) -> None:
        self.root = root
        self.also = also
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
        self._dir(instance_id, name)
        for root in (self.root, *self.also):
            p = root / instance_id / name
            if p.is_file():
                return p.read_bytes()
        return None

    def held(self, instance_id: str) -> list[tuple[str, float]]:
        """The snapshots kept for the instance (here and in `also`): (name, when written), newest first."""
        self._dir(instance_id, "x")
        found: dict[str, float] = {}
        for root in (self.root, *self.also):
            d = root / instance_id
            if d.is_dir():
                for p in d.iterdir():
                    if p.is_file() and not p.name.startswith(".") and _NAME.match(p.name):
                        found.setdefault(p.name, p.stat().st_mtime)
        return sorted(found.items(), key=lambda x: -x[1])
