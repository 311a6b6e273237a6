"""A `kubernetes` client for a registered Kubernetes VIM: server URL (`accessInfo.authUrl` or
`interfaceInfo.endpoint`), CA (`accessInfo.ssl_ca_cert`), bearer token (`accessInfo.bearer_token`).

The client library reads the CA from a file: it is written to a private temporary file that lives as
long as the client (the CA is not a secret; the token stays in memory and is never logged)."""

from __future__ import annotations

import base64
import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.model import Vim

T = TypeVar("T")


@dataclass(frozen=True)
class VimAccess:
    server: str
    ca_pem: str
    token: str = field(repr=False)

    @classmethod
    def of(cls, vim: Vim) -> VimAccess:
        access, iface = vim.access_info or {}, vim.interface_info or {}
        server = str(access.get("authUrl") or iface.get("endpoint") or "").rstrip("/")
        token = str(access.get("bearer_token") or access.get("bearerToken") or "")
        ca = str(access.get("ssl_ca_cert") or access.get("sslCaCert") or "")
        if not server.startswith("https://"):
            raise UnprocessableEntity(f"Kubernetes VIM {vim.id}: the API server URL must be https://")
        if not token:
            raise UnprocessableEntity(f"Kubernetes VIM {vim.id}: accessInfo.bearer_token is required")
        if ca and "BEGIN CERTIFICATE" not in ca:
            with contextlib.suppress(ValueError):
                ca = base64.b64decode(ca, validate=True).decode()
        return cls(server, ca, token)


@contextlib.contextmanager
def api_client(vim: Vim, timeout: float = 30.0) -> Iterator[client.ApiClient]:
    """An ApiClient for `vim`, closed (and its CA file removed) when the block ends."""
    acc = VimAccess.of(vim)
    cfg = client.Configuration()
    cfg.host = acc.server
    cfg.verify_ssl = True
    cfg.api_key = {"authorization": f"Bearer {acc.token}"}
    cfg.retries = False
    ca_path = None
    if acc.ca_pem:
        fd, ca_path = tempfile.mkstemp(prefix="vnfm-k8s-ca-", suffix=".crt")
        with os.fdopen(fd, "w") as f:
            f.write(acc.ca_pem)
        cfg.ssl_ca_cert = ca_path
    api = client.ApiClient(cfg)
    try:
        yield api
    finally:
        api.close()
        if ca_path:
            with contextlib.suppress(OSError):
                os.unlink(ca_path)


def call(vim: Vim, fn: Callable[[client.ApiClient], T]) -> T:
    """`fn` with an ApiClient for `vim` (synchronous: run it in a worker thread); an API error or an
    unreachable (or untrusted) server becomes OperationFailed naming the VIM, never the token."""
    try:
        with api_client(vim) as api:
            return fn(api)
    except ApiException as e:
        raise OperationFailed(f"Kubernetes VIM {vim.id}: API error {e.status}: {e.reason}") from None
    except (OSError, urllib3.exceptions.HTTPError) as e:  # unreachable, or its certificate not the VIM's CA's
        raise OperationFailed(f"Kubernetes VIM {vim.id}: API server unreachable or not trusted: "
                              f"{str(e)[:300]}") from None
