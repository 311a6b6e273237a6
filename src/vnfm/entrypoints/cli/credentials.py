"""How the `vnfm` CLI authenticates: a static token (`--token` / VNFM_TOKEN, sent as X-Auth-Token),
or OAuth 2.0 client credentials (`--client-id` / VNFM_CLIENT_ID with VNFM_CLIENT_SECRET; the
secret never on the command line): a token from the server's `POST /oauth2/token`
(client_secret_basic), cached in `~/.cache/vnfm/tokens.json` (mode 0600) until shortly before it
expires, fetched again once when the server answers 401. A client certificate (`--cert`/`--key`)
is presented for mutual TLS; `--cacert` checks the server's certificate."""

from __future__ import annotations

import hashlib
import json
import os
import ssl
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import httpx

MARGIN = 30.0  # a cached token with less than this many seconds left is fetched anew


def cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vnfm" / "tokens.json"


class TokenError(Exception):
    """No token could be obtained (the message names no secret)."""


class ClientCredentials(httpx.Auth):
    requires_response_body = True

    def __init__(self, endpoint: str, client_id: str, secret: str, *, cache: Path | None = None,
                 clock: Any = time.time) -> None:
        self.token_url = endpoint.rstrip("/") + "/oauth2/token"
        self.client_id = client_id
        self._secret = secret
        self._cache = cache if cache is not None else cache_file()
        self._key = hashlib.sha256(f"{self.token_url}\n{client_id}".encode()).hexdigest()
        self._clock = clock

    # --- the cache: {key: {"token": ..., "expires_at": ...}}
    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self._cache.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def cached(self) -> str | None:
        entry = self._read().get(self._key)
        if isinstance(entry, dict) and isinstance(entry.get("token"), str) \
                and float(entry.get("expires_at", 0)) - MARGIN > self._clock():
            return str(entry["token"])
        return None

    def _store(self, token: str | None, expires_in: float) -> None:
        data = self._read()
        if token is None:
            data.pop(self._key, None)
        else:
            data[self._key] = {"token": token, "expires_at": self._clock() + expires_in}
        self._cache.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self._cache.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh)
        os.replace(tmp, self._cache)

    def _token_request(self) -> httpx.Request:
        return httpx.Request("POST", self.token_url, data={"grant_type": "client_credentials"},
                             headers={"Accept": "application/json",
                                      "Authorization": httpx.BasicAuth(self.client_id, self._secret)._auth_header})

    def _take(self, resp: httpx.Response) -> str:
        try:
            body = resp.json()
        except ValueError:
            body = {}
        token = body.get("access_token") if isinstance(body, dict) else None
        if resp.status_code != 200 or not isinstance(token, str):
            why = body.get("error") if isinstance(body, dict) else None
            raise TokenError(f"the server gave client {self.client_id!r} no token (HTTP {resp.status_code}"
                             f"{', ' + str(why)[:60] if why else ''}): check VNFM_CLIENT_ID / VNFM_CLIENT_SECRET")
        expires = body.get("expires_in")
        self._store(token, float(expires) if isinstance(expires, int | float) and expires > 0 else 300.0)
        return token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self.cached()
        if token is None:
            token = self._take((yield self._token_request()))
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401:  # expired early, revoked, or the server's keys changed
            self._store(None, 0)
            request.headers["Authorization"] = f"Bearer {self._take((yield self._token_request()))}"
            yield request


def tls_verify(cacert: str | None, cert: str | None, key: str | None, *, insecure: bool = False) -> Any:
    """httpx's `verify`: the default trust store, or `cacert`, or no check at all (`insecure`); with
    a client certificate loaded."""
    if not cacert and not cert:
        return not insecure
    ctx = ssl.create_default_context(cafile=cacert) if cacert else ssl.create_default_context()
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx
