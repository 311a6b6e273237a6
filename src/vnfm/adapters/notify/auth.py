"""Reaching a subscriber: its callback URI shown without credentials, SOL013 8.3.4 authentication
(BASIC, or OAUTH2_CLIENT_CREDENTIALS with a token cached until it expires), and the SOL003 test
of a callback (GET, expect 204) before a subscription is accepted. Nothing secret is ever logged
or put in an exception message."""

from __future__ import annotations

import base64
import logging
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from vnfm.adapters.remote.egress import EgressPolicy, EgressRefused, egress_client
from vnfm.domain.errors import BadRequest
from vnfm.domain.secrets import scrub, secret_values

log = logging.getLogger("vnfm.notify")


def notify_tls(cert: Path | None, key: Path | None) -> ssl.SSLContext | bool:
    """httpx's `verify` for reaching subscribers: the default trust store, and with `cert` the
    client certificate TLS_CERT subscriptions ask for (presented to any server that requests one)."""
    if cert is None:
        return True
    ctx = ssl.create_default_context()
    ctx.load_cert_chain(str(cert), str(key) if key else None)
    return ctx


def safe_url(uri: str) -> str:
    """`uri` without user-info and query (they may carry credentials), for logs and messages."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return "<invalid URI>"
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "***" if parts.query else "", ""))


class AuthError(Exception):
    """Obtaining credentials for a callback failed (message is free of secrets)."""


def _auth_types(auth: Mapping[str, Any]) -> list[str]:
    types = auth.get("authType") or []
    return [types] if isinstance(types, str) else [str(t) for t in types]


def secrets_of(auth: Mapping[str, Any] | None) -> set[str]:
    found = secret_values(dict(auth or {}))
    oauth = (auth or {}).get("paramsOauth2ClientCredentials") or {}
    basic = (auth or {}).get("paramsBasic") or {}
    for value in (oauth.get("clientPassword"), basic.get("password")):
        if isinstance(value, str) and value:
            found.add(value)
    return found


class TokenCache:
    """OAuth 2.0 client-credentials tokens per (tokenEndpoint, clientId), kept until they expire."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, default_ttl: float = 300.0,
                 margin: float = 10.0) -> None:
        self._clock = clock
        self._default_ttl = default_ttl
        self._margin = margin
        self._tokens: dict[tuple[str, str], tuple[str, float]] = {}
        self._lock = threading.Lock()
        self.fetches = 0  # how many times a token endpoint was called (for tests / metrics)

    @staticmethod
    def _key(params: Mapping[str, Any]) -> tuple[str, str]:
        return (str(params.get("tokenEndpoint", "")), str(params.get("clientId", "")))

    def invalidate(self, params: Mapping[str, Any]) -> None:
        with self._lock:
            self._tokens.pop(self._key(params), None)

    async def get(self, client: httpx.AsyncClient, params: Mapping[str, Any], timeout: float = 10.0) -> str:
        key = self._key(params)
        now = self._clock()
        with self._lock:
            cached = self._tokens.get(key)
        if cached is not None and cached[1] > now:
            return cached[0]
        endpoint, client_id = key
        secret = str(params.get("clientPassword", ""))
        if not endpoint or not client_id:
            raise AuthError("OAUTH2_CLIENT_CREDENTIALS needs tokenEndpoint and clientId")
        self.fetches += 1
        try:
            resp = await client.post(
                endpoint,
                data={"grant_type": "client_credentials"},
                auth=httpx.BasicAuth(client_id, secret),
                headers={"Accept": "application/json"},
                timeout=timeout,
            )
        except httpx.HTTPError as exc:
            raise AuthError(f"token endpoint {safe_url(endpoint)} unreachable ({type(exc).__name__})") from None
        if resp.status_code != 200:
            raise AuthError(f"token endpoint {safe_url(endpoint)} answered HTTP {resp.status_code}")
        try:
            body = resp.json()
            token = body["access_token"]
        except (ValueError, KeyError, TypeError):
            raise AuthError(f"token endpoint {safe_url(endpoint)} returned no access_token") from None
        if not isinstance(token, str) or not token:
            raise AuthError(f"token endpoint {safe_url(endpoint)} returned an invalid access_token")
        ttl = self._default_ttl
        expires_in = body.get("expires_in") if isinstance(body, dict) else None
        if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) and expires_in > 0:
            ttl = float(expires_in)
        ttl = max(0.0, ttl - min(self._margin, ttl / 10))
        with self._lock:
            self._tokens[key] = (token, self._clock() + ttl)
        return token


async def auth_headers(
    client: httpx.AsyncClient, auth: Mapping[str, Any] | None, tokens: TokenCache, timeout: float = 10.0
) -> dict[str, str]:
    """The Authorization header a SubscriptionAuthentication asks for ({} when none applies)."""
    if not auth:
        return {}
    types = _auth_types(auth)
    basic = auth.get("paramsBasic") or {}
    oauth = auth.get("paramsOauth2ClientCredentials") or {}
    if "BASIC" in types and basic:
        raw = f"{basic.get('userName', '')}:{basic.get('password', '')}".encode()
        return {"Authorization": "Basic " + base64.b64encode(raw).decode("ascii")}
    if "OAUTH2_CLIENT_CREDENTIALS" in types and oauth:
        return {"Authorization": "Bearer " + await tokens.get(client, oauth, timeout)}
    if "BASIC" in types or "OAUTH2_CLIENT_CREDENTIALS" in types:
        raise AuthError(f"authentication {'/'.join(types)} is missing its parameters")
    # TLS_CERT only: the client certificate is a property of the HTTP client, no header.
    return {}


# ============================================================================= probe
_NOT_204 = ("callbackUri {} did not answer the test GET with 204 No Content (unreachable, or another answer; "
            "the server log says which)")

async def probe_callback(
    uri: str,
    auth: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    *,
    skip: bool = False,
    timeout: float = 10.0,
    verify: bool | str | ssl.SSLContext = True,
    tokens: TokenCache | None = None,
    client: httpx.AsyncClient | None = None,
    policy: EgressPolicy | None = None,
) -> None:
    """SOL003 5.4.18.3.1: test the notification endpoint with GET, expecting 204 No Content.

    Raises BadRequest with a clear (secret-free) message when the URI is invalid, unreachable or
    answers anything but 204, the same message for both (the caller learns nothing of what the
    target answered or whether it listens; the server log has the reason). `skip=True` only
    validates the URI's form. `policy`: where the server may connect (adapters/remote/egress).
    `headers`: sent with the GET (domain.notifications.callback_headers).
    """
    try:
        parts = urlsplit(uri)
    except ValueError:
        raise BadRequest("callbackUri is not a valid URI") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadRequest(f"callbackUri {safe_url(uri)} must be an absolute http(s) URI")
    if skip:
        return
    secrets = secrets_of(auth)
    own = client is None
    http = client if client is not None else egress_client(policy, verify=verify)
    try:
        try:
            sent = {"Accept": "application/json", **(headers or {})}
            sent.update(await auth_headers(http, auth, tokens or TokenCache(), timeout))
            resp = await http.get(uri, headers=sent, timeout=timeout)
        except AuthError as exc:
            log.info("callback test of %s: %s", safe_url(uri), scrub(str(exc), secrets))
            raise BadRequest(f"cannot authenticate to test callbackUri {safe_url(uri)} (no access token from its "
                             "token endpoint; the server log says why)") from None
        except EgressRefused:
            raise BadRequest(f"callbackUri {safe_url(uri)} resolves to an address the VNFM does not connect to "
                             "(loopback, link-local, cloud metadata or a denied network)") from None
        except httpx.HTTPError as exc:
            log.info("callback test of %s: unreachable (%s)", safe_url(uri), type(exc).__name__)
            raise BadRequest(_NOT_204.format(safe_url(uri))) from None
    finally:
        if own:
            await http.aclose()
    if resp.status_code != 204:
        log.info("callback test of %s: HTTP %d", safe_url(uri), resp.status_code)
        raise BadRequest(_NOT_204.format(safe_url(uri)))
