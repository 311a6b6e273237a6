"""/etc/hosts blocks owned by the VNFM.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import ClassVar

from vnfm.nodesteps.base import NodeStep, _check_host, _check_name, _check_path


@dataclass(frozen=True)
class SetHostsEntries(NodeStep):
    """Own a marked block of /etc/hosts: exactly `entries` (address, names...), nothing else
    of the file is touched. An empty tuple removes the block."""

    kind: ClassVar[str] = "set-hosts-entries"
    entries: tuple[tuple[str, tuple[str, ...]], ...]
    block: str = "vnfm"
    hosts_file: str = "/etc/hosts"

    def __post_init__(self) -> None:
        _check_name("block name", self.block)
        _check_path("hosts file", self.hosts_file)
        norm = []
        for addr, names in self.entries:
            ipaddress.ip_address(addr)
            names_t = (names,) if isinstance(names, str) else tuple(names)
            if not names_t:
                raise ValueError(f"no names for {addr}")
            for n in names_t:
                _check_host("host name", n)
            norm.append((addr, names_t))
        object.__setattr__(self, "entries", tuple(norm))
