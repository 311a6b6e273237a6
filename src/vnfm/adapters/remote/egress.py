"""Where the server may connect on a caller's behalf (callback URIs, their OAuth 2.0 token
endpoints, package URIs, every redirect hop): an address is checked when the connection is made,
after name resolution, and the connection goes to the checked address (a name that resolves to
another address a moment later changes nothing). Refused by default: loopback, link-local (with
the cloud metadata address 169.254.169.254), unspecified, multicast and reserved addresses, the
IPv6 metadata address, plus `egress_deny_networks`; `egress_allow_networks` lets some back in
(the tests allow 127.0.0.0/8).

httpx has no hook for this, so the guard replaces the network backend of httpx's connection pool
(`AsyncHTTPTransport._pool._network_backend`, httpcore); tests/unit/remote/test_egress.py fails
if that stops working."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
METADATA = (ipaddress.ip_network("169.254.169.254/32"), ipaddress.ip_network("fd00:ec2::254/128"))


class EgressRefused(httpx.ConnectError):
    """The destination's address is one the server does not connect to for a caller."""


def _special(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return _special(ip.ipv4_mapped)
    return (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast or ip.is_reserved
            or any(ip in net for net in METADATA))


@dataclass(frozen=True)
class EgressPolicy:
    allow: tuple[Network, ...] = ()
    deny: tuple[Network, ...] = field(default=())

    @classmethod
    def of(cls, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> EgressPolicy:
        return cls(tuple(ipaddress.ip_network(n, strict=False) for n in allow),
                   tuple(ipaddress.ip_network(n, strict=False) for n in deny))

    def permits(self, address: str) -> bool:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if any(ip in net for net in self.allow):
            return True
        return not _special(ip) and not any(ip in net for net in self.deny)


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, inner: httpcore.AsyncNetworkBackend, policy: EgressPolicy) -> None:
        self._inner = inner
        self._policy = policy

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None, socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            raise httpcore.ConnectError(f"cannot resolve {host[:80]}") from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        allowed = [a for a in addresses if self._policy.permits(a)]
        if not allowed or len(allowed) != len(addresses):
            raise EgressRefused(f"{host[:80]} resolves to an address the server does not connect to for a caller "
                                "(loopback, link-local, metadata or a denied network; see egress_allow_networks)")
        return await self._inner.connect_tcp(allowed[0], port, timeout=timeout, local_address=local_address,
                                             socket_options=socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        raise EgressRefused("unix sockets are not reached for a caller")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def egress_client(policy: EgressPolicy | None, **kwargs: Any) -> httpx.AsyncClient:
    """An httpx client whose every connection (redirects included) obeys `policy` (None: no check)."""
    if policy is None:
        return httpx.AsyncClient(**kwargs)
    transport = httpx.AsyncHTTPTransport(verify=kwargs.pop("verify", True))
    pool = transport._pool
    pool._network_backend = _GuardedBackend(pool._network_backend, policy)
    return httpx.AsyncClient(transport=transport, trust_env=False, **kwargs)
