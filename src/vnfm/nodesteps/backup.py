"""The restore drill of an etcd backup: is the snapshot a cluster could be rebuilt from?

The snapshot at `path` (digest `sha256`, taken by `EtcdSnapshotSave`) is restored into a throw-away
data directory, its key count compared with the snapshot's own (`keys`, from its status), and a
scratch etcd started from it on a loopback port (`port`, peer `port + 1`) must answer at the
snapshot's `revision`. The scratch member and its directory are removed whatever happens; the
cluster's own etcd is never touched. data: keys (restored), live_keys (answered by the scratch
etcd), revision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_port
from vnfm.nodesteps.upgrade import _check_sha, _check_snapshot_path

DRILL_PORT = 23790  # etcd's own 2379/2380 stay the cluster's


@dataclass(frozen=True)
class EtcdRestoreDrill(NodeStep):
    kind: ClassVar[str] = "etcd-restore-drill"
    path: str
    sha256: str
    keys: int
    revision: int
    port: int = DRILL_PORT

    def __post_init__(self) -> None:
        _check_snapshot_path(self.path)
        _check_sha(self.sha256)
        _check_port("drill port", self.port)
        _check_port("drill peer port", self.port + 1)
        if self.port in (2379, 2380, 2381) or self.port + 1 in (2379, 2380, 2381):
            raise ValueError("the drill's ports must not be the cluster etcd's (2379-2381)")
        for what, v in (("keys", self.keys), ("revision", self.revision)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{what} must be a non-negative integer")

    def describe(self) -> str:
        return f"{self.kind} {self.path}"
