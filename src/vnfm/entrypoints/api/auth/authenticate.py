"""Who the caller is, from its request: the static development token, a bearer token of the
built-in authorization server, of an external one (JWKS) or an opaque one (introspection). With no
authentication configured every caller is an anonymous admin (the embedded, loopback-only default)."""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from vnfm.adapters.auth.introspection import Introspector
from vnfm.adapters.auth.keys import SigningKey, load_keys
from vnfm.adapters.auth.tokens import ExternalIssuer, TokenRejected, issuer_of, verify_builtin
from vnfm.config import MtlsClient, OAuthClient, Settings
from vnfm.domain.access import ANONYMOUS, DEFAULT_TENANT, ROLES, Principal, role_rank
from vnfm.entrypoints.api.auth.mtls import common_name, thumbprint

log = logging.getLogger("vnfm.auth")
KEY_RELOAD_SECONDS = 30.0  # a key added by `vnfm auth rotate-key` signs within this long


class AuthFailed(Exception):
    """No acceptable credentials; the message is for the log only."""


def bearer_token(headers: Mapping[str, str]) -> str:
    """The token of `Authorization: Bearer ...`, else of `X-Auth-Token` (the OpenStack clients'), else ''."""
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return headers.get("x-auth-token", "").strip()


def roles_in(claims: Mapping[str, Any], claim: str) -> frozenset[str]:
    """vnfm's roles among the `claim` claim (a list or a space-separated string) and the `scope` words."""
    found: set[str] = set()
    for value in (claims.get(claim), claims.get("scope")):
        words: Iterable[Any] = value.split() if isinstance(value, str) else value if isinstance(value, list) else ()
        found.update(w for w in words if isinstance(w, str) and w in ROLES)
    return frozenset(found)


class Authenticator:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.clients: dict[str, OAuthClient] = {c.client_id: c for c in settings.oauth2_clients}
        self.cert_clients: dict[str, MtlsClient] = {c.common_name: c for c in settings.mtls_clients}
        self._keys: list[SigningKey] = load_keys(settings.data_dir) if self.clients else []
        self._keys_read = time.monotonic()
        self._external = (ExternalIssuer(settings.oauth2_external_issuer, settings.oauth2_jwks_url,
                                         settings.oauth2_audience, refetch_after=settings.oauth2_jwks_refetch_after)
                          if settings.oauth2_jwks_url else None)
        self._introspector = (Introspector(settings.oauth2_introspection_url,
                                           settings.oauth2_introspection_client_id,
                                           settings.oauth2_introspection_client_secret,
                                           settings.oauth2_audience)
                              if settings.oauth2_introspection_url else None)

    @property
    def enabled(self) -> bool:
        return self.settings.auth_configured

    def signing_keys(self, *, fresh: bool = False) -> list[SigningKey]:
        """The built-in server's keys, newest first, re-read from disk now and then (rotation)."""
        if self.clients and (fresh or time.monotonic() - self._keys_read > KEY_RELOAD_SECONDS):
            self._keys = load_keys(self.settings.data_dir)
            self._keys_read = time.monotonic()
        return self._keys

    async def authenticate(self, headers: Mapping[str, str], cert: bytes | None = None) -> Principal:
        """The caller of a request with these headers, over a connection with this verified client
        certificate (DER; None without mutual TLS)."""
        if not self.enabled:
            return ANONYMOUS
        token = bearer_token(headers)
        if not token:
            if cert is not None:
                return self._from_certificate(cert)
            raise AuthFailed("no token")
        static = self.settings.auth_token
        if static and hmac.compare_digest(token.encode(), static.encode()):
            return Principal("static-token", DEFAULT_TENANT, frozenset({"admin"}), "static-token")
        try:
            principal, claims = await self._from_oauth2(token)
        except TokenRejected as exc:
            raise AuthFailed(str(exc)) from None
        bound = claims.get("cnf", {}).get("x5t#S256") if isinstance(claims.get("cnf"), dict) else None
        if bound is not None and (cert is None or not hmac.compare_digest(str(bound), thumbprint(cert))):
            raise AuthFailed("the token is bound to a client certificate this connection did not present")
        return principal

    def _from_certificate(self, cert: bytes) -> Principal:
        name = common_name(cert)
        client = self.cert_clients.get(name or "")
        if client is None:
            raise AuthFailed(f"no mtls_clients entry for certificate subject CN={str(name)[:64]!r}")
        return Principal(client.common_name, client.tenant, frozenset(client.roles), "mtls")

    async def _from_oauth2(self, token: str) -> tuple[Principal, Mapping[str, Any]]:
        iss = issuer_of(token)
        s = self.settings
        if iss is not None and self.clients and iss == s.oauth2_issuer:
            return self._builtin(token)
        if iss is not None and self._external is not None and iss == self._external.issuer:
            claims = await asyncio.to_thread(self._external.verify, token)
            return self._principal(claims, "jwt"), claims
        if self._introspector is not None:
            claims = await self._introspector.verify(token)
            return self._principal(claims, "introspection"), claims
        raise TokenRejected("a token no configured issuer signed")

    def _builtin(self, token: str) -> tuple[Principal, Mapping[str, Any]]:
        s = self.settings
        try:
            claims = verify_builtin(token, self.signing_keys(), issuer=s.oauth2_issuer, audience=s.oauth2_audience)
        except TokenRejected:
            # perhaps signed with a key rotated in since the last read
            claims = verify_builtin(token, self.signing_keys(fresh=True), issuer=s.oauth2_issuer,
                                    audience=s.oauth2_audience)
        client = self.clients.get(str(claims.get("sub")))
        if client is None:  # removed from the config: its tokens are revoked with it
            raise TokenRejected(f"client {str(claims.get('sub'))[:64]!r} is no longer configured")
        principal = self._principal(claims, "oauth2")
        # a client whose roles shrank keeps only those it still has; its tenant is the configured one
        top = min(max((role_rank(r) for r in principal.roles), default=-1), max(role_rank(r) for r in client.roles))
        roles = frozenset(ROLES[top:top + 1]) if top >= 0 else frozenset()
        return Principal(principal.subject, client.tenant, roles, "oauth2"), claims

    def _principal(self, claims: Mapping[str, Any], method: str) -> Principal:
        subject = claims.get("sub") or claims.get("client_id")
        tenant = claims.get(self.settings.oauth2_tenant_claim)
        if not isinstance(subject, str) or not subject:
            raise TokenRejected("the token names no subject")
        if not isinstance(tenant, str) or not tenant:
            raise TokenRejected(f"the token has no {self.settings.oauth2_tenant_claim!r} claim")
        return Principal(subject[:128], tenant[:64], roles_in(claims, self.settings.oauth2_roles_claim), method)
