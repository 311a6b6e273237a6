"""Client secrets stored as scrypt hashes (hashlib, RFC 7914): `scrypt$<n>$<r>$<p>$<salt>$<hash>`
with base64url salt and hash. `vnfm auth hash-secret` prints one for the config file."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re

_N, _R, _P = 2**14, 8, 1
_FORMAT = re.compile(r"^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$")
_MAXMEM = 64 * 1024 * 1024


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hash_secret(secret: str) -> str:
    salt = os.urandom(16)
    digest = hashlib.scrypt(secret.encode(), salt=salt, n=_N, r=_R, p=_P, maxmem=_MAXMEM, dklen=32)
    return f"scrypt${_N}${_R}${_P}${_b64(salt)}${_b64(digest)}"


def hash_problem(encoded: str) -> str | None:
    """Why `encoded` is no usable hash (None when it is one)."""
    m = _FORMAT.match(encoded)
    if m is None:
        return "is not a scrypt hash (make one with `vnfm auth hash-secret`)"
    n, r, p = (int(m[i]) for i in (1, 2, 3))
    if n < 2**14 or n & (n - 1) or not 1 <= r <= 32 or not 1 <= p <= 16 or 128 * n * r > _MAXMEM:
        return "has scrypt parameters out of range (n a power of two >= 16384, r <= 32, p <= 16)"
    return None


def verify_secret(secret: str, encoded: str) -> bool:
    m = _FORMAT.match(encoded)
    if m is None or hash_problem(encoded) is not None:
        return False
    n, r, p = (int(m[i]) for i in (1, 2, 3))
    expected = _unb64(m[5])
    digest = hashlib.scrypt(secret.encode(), salt=_unb64(m[4]), n=n, r=r, p=p, maxmem=_MAXMEM,
                            dklen=len(expected))
    return hmac.compare_digest(digest, expected)
