"""Access tokens as JWTs (RFC 9068 shape) with PyJWT: the built-in server signs short-lived ones
(EdDSA, its newest key); tokens are checked for signature, issuer, audience and expiry, against
the built-in keys or an external issuer's JWKS (fetched, cached and refetched on an unknown kid)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

import jwt

from vnfm.adapters.auth.keys import SigningKey

# algorithms accepted from an external issuer: asymmetric only (never "none", never HMAC with a
# public key taken for a secret)
EXTERNAL_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
LEEWAY = 30  # seconds of clock skew tolerated on exp / iat / nbf
_REQUIRED = ["exp", "iat", "iss", "aud", "sub"]


class TokenRejected(Exception):
    """The token is not acceptable; the message says why (for the log, never for the caller)."""


def issue(key: SigningKey, *, issuer: str, audience: str, subject: str, roles: Iterable[str], tenant: str,
          lifetime: int, cnf_thumbprint: str | None = None) -> tuple[str, dict[str, Any]]:
    """A signed access token and its claims."""
    now = int(time.time())
    claims: dict[str, Any] = {"iss": issuer, "sub": subject, "aud": audience, "iat": now, "nbf": now,
                              "exp": now + lifetime, "jti": str(uuid.uuid4()), "client_id": subject,
                              "roles": sorted(roles), "tenant": tenant}
    if cnf_thumbprint:
        claims["cnf"] = {"x5t#S256": cnf_thumbprint}  # RFC 8705: bound to the client's certificate
    token = jwt.encode(claims, key.private, algorithm="EdDSA", headers={"kid": key.kid, "typ": "at+jwt"})
    return token, claims


def issuer_of(token: str) -> str | None:
    """The `iss` of a JWT before any check (to pick the keys to check it with); None for a token
    that is no JWT."""
    if token.count(".") != 2:
        return None
    try:
        iss = jwt.decode(token, options={"verify_signature": False}).get("iss")
    except jwt.PyJWTError:
        return None
    return iss if isinstance(iss, str) else None


def verify_builtin(token: str, keys: list[SigningKey], *, issuer: str, audience: str) -> dict[str, Any]:
    try:
        kid = jwt.get_unverified_header(token).get("kid")
    except jwt.PyJWTError as exc:
        raise TokenRejected(f"malformed token ({exc})") from None
    key = next((k for k in keys if k.kid == kid), None)
    if key is None:
        raise TokenRejected(f"signed by an unknown key {str(kid)[:40]!r}")
    return _decode(token, key.public, ["EdDSA"], issuer=issuer, audience=audience)


def _decode(token: str, key: Any, algorithms: list[str], *, issuer: str, audience: str) -> dict[str, Any]:
    try:
        claims: dict[str, Any] = jwt.decode(token, key, algorithms=algorithms, issuer=issuer, audience=audience,
                                            leeway=LEEWAY, options={"require": _REQUIRED})
    except jwt.PyJWTError as exc:
        raise TokenRejected(f"{type(exc).__name__}: {exc}") from None
    return claims


class ExternalIssuer:
    """Tokens of an external authorization server, checked against its JWKS (PyJWKClient caches the
    key set for `cache_seconds` and refetches it when a token names a kid it has not seen, at most
    once per `refetch_after` seconds, so unknown kids cannot make vnfm hammer the issuer)."""

    def __init__(self, issuer: str, jwks_url: str, audience: str, *, cache_seconds: float = 300,
                 refetch_after: float = 30) -> None:
        self.issuer = issuer
        self.audience = audience
        self._jwks = jwt.PyJWKClient(jwks_url, cache_keys=True, lifespan=cache_seconds, timeout=10,
                                     cooldown_duration=refetch_after)

    def verify(self, token: str) -> dict[str, Any]:
        """Blocking (it may fetch the JWKS): call it in a worker thread."""
        try:
            signing = self._jwks.get_signing_key_from_jwt(token)
        except jwt.PyJWKClientError as exc:
            raise TokenRejected(f"no key of {self.issuer} fits ({exc})") from None
        except jwt.PyJWTError as exc:
            raise TokenRejected(f"malformed token ({exc})") from None
        return _decode(token, signing.key, EXTERNAL_ALGORITHMS, issuer=self.issuer, audience=self.audience)
