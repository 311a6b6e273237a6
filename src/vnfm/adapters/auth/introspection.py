"""Opaque tokens checked at an external authorization server's RFC 7662 introspection endpoint
(vnfm authenticates to it with client_secret_basic). Answers are cached for a few seconds per token
(by its hash) so a burst of requests costs one round trip; a revoked token is refused at most
`cache_seconds` after the revocation."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import httpx

from vnfm.adapters.auth.tokens import LEEWAY, TokenRejected


class Introspector:
    def __init__(self, url: str, client_id: str, client_secret: str, audience: str, *,
                 cache_seconds: float = 5.0, timeout: float = 10.0) -> None:
        self.url = url
        self.audience = audience
        self._auth = httpx.BasicAuth(client_id, client_secret) if client_id else None
        self._cache: dict[str, tuple[float, dict[str, Any]]] = {}
        self._cache_seconds = cache_seconds
        self._timeout = timeout

    async def verify(self, token: str) -> dict[str, Any]:
        digest = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        hit = self._cache.get(digest)
        if hit is not None and hit[0] > now:
            return self._check(hit[1])
        try:
            async with httpx.AsyncClient(timeout=self._timeout, follow_redirects=False) as client:
                resp = await client.post(self.url, data={"token": token, "token_type_hint": "access_token"},
                                         auth=self._auth or httpx.USE_CLIENT_DEFAULT,
                                         headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise TokenRejected(f"introspection endpoint unreachable ({type(exc).__name__})") from None
        if resp.status_code != 200:
            raise TokenRejected(f"introspection endpoint answered {resp.status_code}")
        try:
            claims = resp.json()
        except ValueError:
            raise TokenRejected("introspection endpoint answered no JSON") from None
        if not isinstance(claims, dict):
            raise TokenRejected("introspection endpoint answered no JSON object")
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (now + self._cache_seconds, claims)
        return self._check(claims)

    def _check(self, claims: dict[str, Any]) -> dict[str, Any]:
        if claims.get("active") is not True:
            raise TokenRejected("the token is not active (expired, revoked or unknown)")
        exp = claims.get("exp")
        if isinstance(exp, int | float) and exp + LEEWAY < time.time():
            raise TokenRejected("the token expired")
        aud = claims.get("aud")
        if aud is not None:
            auds = aud if isinstance(aud, list) else [aud]
            if self.audience not in auds:
                raise TokenRejected("the token is for another audience")
        if not isinstance(claims.get("sub") or claims.get("client_id"), str):
            raise TokenRejected("the introspection answer names no subject")
        return claims
