"""Storage on a host: a volume formatted and mounted, NFS exports (nfs-ganesha), the NFS client.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_client, _check_path, _check_port


@dataclass(frozen=True)
class NfsExport(NodeStep):
    """Serve `path` over NFSv4 with nfs-ganesha (userspace, FSAL VFS) to `clients` (addresses,
    CIDRs or "*"). The path must live on a file system with file handles (ext4, xfs, tmpfs)."""

    kind: ClassVar[str] = "nfs-export"
    path: str
    clients: tuple[str, ...]
    export_id: int = 1
    pseudo: str | None = None  # NFSv4 pseudo path; defaults to `path`
    bind_addr: str | None = None
    port: int = 2049
    root_squash: bool = False
    config_path: str = "/etc/ganesha/ganesha.conf"
    pidfile: str = "/run/ganesha.pid"
    deadline_s: float = 20.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "clients", tuple(self.clients))
        _check_path("export path", self.path)
        _check_path("pseudo path", self.pseudo_path)
        _check_path("config path", self.config_path)
        _check_path("pid file", self.pidfile)
        _check_port("NFS port", self.port)
        if self.bind_addr is not None:
            ipaddress.ip_address(self.bind_addr)
        if not self.clients:
            raise ValueError("at least one NFS client (address, CIDR or '*') is needed")
        for c in self.clients:
            _check_client(c)
        if not 0 < self.export_id < 65535:
            raise ValueError("export_id must be within 1..65534")

    @property
    def pseudo_path(self) -> str:
        return self.pseudo or self.path

    def describe(self) -> str:
        return f"{self.kind} {self.path}"


@dataclass(frozen=True)
class NfsExports(NodeStep):
    """Several NfsExport at once: one nfs-ganesha configuration with an EXPORT per item (the
    NfsExport step owns the whole configuration, so exports must be installed together)."""

    kind: ClassVar[str] = "nfs-exports"
    exports: tuple[NfsExport, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "exports", tuple(self.exports))
        if not self.exports:
            raise ValueError("at least one export is needed")
        first = self.exports[0]
        ids, pseudos = set(), set()
        for e in self.exports:
            if (e.port, e.bind_addr, e.config_path, e.pidfile) != (first.port, first.bind_addr, first.config_path,
                                                                   first.pidfile):
                raise ValueError("all exports must share port, bind address, config and pid file")
            if e.export_id in ids or e.pseudo_path in pseudos:
                raise ValueError(f"duplicate export id or pseudo path ({e.export_id}, {e.pseudo_path})")
            ids.add(e.export_id)
            pseudos.add(e.pseudo_path)

    def describe(self) -> str:
        return f"{self.kind} [{', '.join(e.path for e in self.exports)}]"


@dataclass(frozen=True)
class PrepareVolume(NodeStep):
    """Make the block device of volume `volume_id` (or `device`) an ext4 file system (only when it
    has none), mounted at `mount_to` with a persistent /etc/fstab entry (by UUID, nofail)."""

    kind: ClassVar[str] = "storage-prepare-volume"
    volume_id: str
    mount_to: str
    device: str | None = None
    fs_type: str = "ext4"
    fstab: str = "/etc/fstab"

    def __post_init__(self) -> None:
        if not re.match(r"^[A-Za-z0-9-]{1,64}$", self.volume_id):
            raise ValueError(f"volume id {self.volume_id!r} is not a VIM volume id")
        for p in (self.mount_to, self.fstab, *([self.device] if self.device else [])):
            if not re.match(r"^/[A-Za-z0-9_./@:+-]*$", p) or "/../" in p + "/" or "//" in p:
                raise ValueError(f"{p!r} is not a plain absolute path")
        if self.fs_type not in ("ext4", "xfs"):
            raise ValueError("fs_type must be ext4 or xfs")

    def describe(self) -> str:
        return f"{self.kind} {self.volume_id} -> {self.mount_to}"


@dataclass(frozen=True)
class InstallNfsClient(NodeStep):
    """The NFS client (nfs-common, mount.nfs) a kubelet needs to mount NFS PersistentVolumes."""

    kind: ClassVar[str] = "nfs-client"
