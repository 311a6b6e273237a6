"""The node-step language: a step is plain, validated data saying what a host must look like; a
`StepExecutor` carries steps out. Two executors exist: real scripts over SSH
(vnfm.adapters.nodes.ssh) and the simulated cloud's twin (vnfm.adapters.infra.simulator.twin).
Every step is idempotent: running it twice leaves the host as running it once does, and the
second `StepResult.changed` is False.
"""

from __future__ import annotations

import abc
import asyncio
import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vnfm.domain.errors import OperationFailed

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$")
_URL = re.compile(r"^https?://[A-Za-z0-9.\-\[\]:]+(:[0-9]{1,5})?$")
_ABS_PATH = re.compile(r"^/[A-Za-z0-9_./@:+-]*$")


def _check_name(what: str, value: str) -> None:
    if not _NAME.match(value):
        raise ValueError(f"{what} {value!r} must be 1-63 of [A-Za-z0-9_.-], starting alphanumeric")


def _check_host(what: str, value: str) -> None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not _HOSTNAME.match(value):
            raise ValueError(f"{what} {value!r} is neither an IP address nor a host name") from None


def _check_port(what: str, value: int) -> None:
    if not isinstance(value, int) or not 0 < value < 65536:
        raise ValueError(f"{what} {value!r} is not a TCP port")


def _check_url(what: str, value: str) -> None:
    if not _URL.match(value):
        raise ValueError(f"{what} {value!r} is not an http(s)://host:port URL")


def _check_path(what: str, value: str) -> None:
    if not _ABS_PATH.match(value) or "/../" in value + "/" or "//" in value:
        raise ValueError(f"{what} {value!r} must be a plain absolute path")


def _check_client(value: str) -> None:
    if value == "*":
        return
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        _check_host("NFS client", value)

def _check_ip(what: str, value: str) -> None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"{what} {value!r} is not an IP address") from None


def split_host_port(value: str) -> tuple[str, int]:
    """'registry.local:5000' / '[fd00::1]:5000' -> (host, port)."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{value!r} is not host:port")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    _check_host("host", host)
    _check_port("port", int(port))
    return host, int(port)


@dataclass(frozen=True)
class StepResult:
    changed: bool
    data: dict[str, Any] = field(default_factory=dict)
    output: str = ""  # diagnostic output (stderr tail); never secrets


class StepFailed(OperationFailed):
    def __init__(self, host: str, step: NodeStep, reason: str) -> None:
        super().__init__(f"{step.describe()} failed on {host}: {reason}", host=host, step=step.kind)
        self.host = host
        self.step = step
        self.reason = reason


class HostKeyChanged(OperationFailed):
    """A host presented another SSH host key than the one pinned for it: nothing was sent to it."""


@dataclass(frozen=True)
class NodeStep:
    kind: ClassVar[str] = "step"

    def describe(self) -> str:
        return self.kind


class StepExecutor(abc.ABC):
    """Carries node steps out on hosts. `host` is whatever the executor resolves to a machine
    (an address for SSH, a VNFC name for a simulated twin)."""

    @abc.abstractmethod
    async def run(self, host: str, step: NodeStep) -> StepResult:
        """Run one step; raise StepFailed (naming host and step) when it cannot be done."""

    async def run_many(self, hosts: Iterable[str], step: NodeStep) -> dict[str, StepResult]:
        """The same step on several hosts in parallel; raises the first failure after all ran."""
        hosts = list(hosts)
        results = await asyncio.gather(*(self.run(h, step) for h in hosts), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r
        return {h: r for h, r in zip(hosts, results, strict=True) if isinstance(r, StepResult)}

    async def run_all(self, host: str, steps: Sequence[NodeStep]) -> list[StepResult]:
        """Steps in order on one host."""
        return [await self.run(host, s) for s in steps]

    async def verify_host_keys(self, hosts: Sequence[str]) -> None:
        """Contact every host now: a first contact pins its host key, a later one must present the
        pinned key. Raises before anything was changed anywhere when a key changed."""
        return None

    async def close(self) -> None:
        """Release connections (the session is not used afterwards)."""
        return None

    def note(self, key: str, value: Any) -> None:
        """A fact about the VNF worth showing to observers (e.g. the registered VIM, with no
        secret); executors that keep a state view record it, the others ignore it."""
        return None
